"""Every ACP agent runs in the setting that asks: no bypass modes, no bypass env.

The session answers below are the pinned agents' own (tests/fixtures/acp/
*-plain.wire.jsonl), cut down to their modes and options.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from corral.pipeline.driver import LaunchSpec
from corral.pipeline.errors import CorralError, ErrorKind
from corral.pipeline.events import AgentInstallation, InstallationSource
from corral.pipeline.telemetry import NULL_TELEMETRY
from corral.sources.acp import AcpDriver, catalog_entries
from corral.sources.acp._handshake import configure
from corral.sources.acp._settings import Settings

CLAUDE_ADAPTER_MODES: dict[str, Any] = {
    "modes": {
        "currentModeId": "default",
        "availableModes": [
            {"id": "default", "name": "Default"},
            {"id": "acceptEdits", "name": "Accept Edits"},
            {"id": "plan", "name": "Plan Mode"},
            {"id": "dontAsk", "name": "Don't Ask"},
            {"id": "bypassPermissions", "name": "Bypass Permissions"},
        ],
    }
}
GEMINI_MODES: dict[str, Any] = {
    "modes": {
        "currentModeId": "default",
        "availableModes": [
            {"id": "default"},
            {"id": "autoEdit"},
            {"id": "yolo"},
            {"id": "plan"},
        ],
    }
}
_COPILOT = "https://agentclientprotocol.com/protocol/session-modes#"
COPILOT_OPTIONS: dict[str, Any] = {
    "configOptions": [
        {
            "type": "select",
            "id": "mode",
            "name": "Mode",
            "category": "mode",
            "currentValue": _COPILOT + "agent",
            "options": [
                {"value": _COPILOT + "agent", "name": "Agent"},
                {"value": _COPILOT + "plan", "name": "Plan"},
                {"value": _COPILOT + "autopilot", "name": "Autopilot"},
            ],
        },
        {
            "type": "select",
            "id": "allow_all",
            "name": "Allow All",
            "category": "permissions",
            "currentValue": "off",
            "options": [{"value": "on", "name": "On"}, {"value": "off", "name": "Off"}],
        },
    ]
}


def offered(result: dict[str, Any]) -> dict[str, list[str]]:
    settings = Settings.from_session(result)
    return {o.id: [c.value for c in o.choices] for o in settings.config_options()}


@pytest.mark.parametrize(
    ("result", "expected"),
    [
        (CLAUDE_ADAPTER_MODES, {"mode": ["default", "plan"]}),
        (GEMINI_MODES, {"mode": ["default", "plan"]}),
        (COPILOT_OPTIONS, {"mode": [_COPILOT + "agent", _COPILOT + "plan"], "allow_all": ["off"]}),
    ],
    ids=["claude-acp", "gemini", "copilot"],
)
def test_modes_that_decide_without_asking_are_not_offered(
    result: dict[str, Any], expected: dict[str, list[str]]
) -> None:
    assert offered(result) == expected


def test_a_choice_named_like_a_bypass_mode_stays_when_it_is_not_a_mode() -> None:
    result = {
        "configOptions": [
            {
                "id": "style",
                "type": "select",
                "currentValue": "yolo",
                "options": [{"value": "yolo"}, {"value": "calm"}],
            }
        ]
    }
    assert offered(result) == {"style": ["yolo", "calm"]}


class NoPeer:
    """A peer that must not be called: the refusal comes before any wire call."""

    async def request(self, method: str, params: object) -> object:
        raise AssertionError(f"{method} was sent")


async def test_configure_at_open_cannot_pick_a_bypass_mode() -> None:
    settings = Settings.from_session(CLAUDE_ADAPTER_MODES)
    launch = LaunchSpec(
        session_id="s1",
        executable="/opt/claude-code-acp",
        dir="/work",
        configure=(("mode", "bypassPermissions"),),
    )
    with pytest.raises(CorralError) as refused:
        await configure(NoPeer(), "sess", settings, launch)  # type: ignore[arg-type]
    assert refused.value.kind is ErrorKind.INVALID_CONFIGURATION


def driver(
    agent_id: str, *, env: tuple[tuple[str, str], ...] = (), environ: dict[str, str] | None = None
) -> AcpDriver:
    """`agent_id`'s driver; `env` is the app's (`open` env), `environ` corral's."""
    entries = catalog_entries(environ=environ if environ is not None else {"PATH": "/bin"})
    entry = next(e for e in entries if e.id == agent_id)
    path = f"/opt/{agent_id}"
    installation = AgentInstallation(
        id=agent_id, name=agent_id, executable_path=path, source=InstallationSource.PATH
    )
    launch = LaunchSpec(session_id="s1", executable=path, dir="/work", env=env)
    made = entry.make_driver(installation, launch, NULL_TELEMETRY)
    assert isinstance(made, AcpDriver)
    return made


def test_copilot_over_acp_never_gets_its_allow_all_switch() -> None:
    from_corral = driver("copilot", environ={"PATH": "/bin", "COPILOT_ALLOW_ALL": "true"}).env()
    from_app = driver("copilot", env=(("COPILOT_ALLOW_ALL", "1"),)).env()
    assert "COPILOT_ALLOW_ALL" not in from_corral and "COPILOT_ALLOW_ALL" not in from_app
    assert from_corral["PATH"] == "/bin"


def test_opencode_is_told_to_ask_for_shell_edits_and_fetches() -> None:
    permission = json.loads(driver("opencode").env()["OPENCODE_PERMISSION"])
    assert permission == {"bash": "ask", "edit": "ask", "webfetch": "ask"}


def test_the_app_cannot_override_opencodes_asking() -> None:
    allowing = driver("opencode", env=(("OPENCODE_PERMISSION", '{"bash": "allow"}'),))
    assert json.loads(allowing.env()["OPENCODE_PERMISSION"])["bash"] == "ask"
