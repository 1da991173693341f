"""Golden wires recorded from the five real ACP agents, replayed sans-IO.

Each file in `tests/fixtures/acp/` is one real run of
`tests/e2e/test_acp_real.py` (`CORRAL_RECORD_ACP_FIXTURES=1`). The replay
(`AcpReplay`, the live driver's own `Translator`) is fed each file whole,
one byte at a time, and with trailing garbage; its driver events then run
through a real engine, and every event that comes out is checked against
the line-protocol schema. A fixture nobody expects fails the coverage test.
"""

from __future__ import annotations

from pathlib import Path

import orjson
import pytest
from corral.actors.engine import Engine
from corral.pipeline.driver import DriverEvent, Emitted, Handshake, RequestAsked, TurnBegan
from corral.pipeline.events import (
    AgentDetails,
    AgentInstallation,
    Cancelled,
    Capabilities,
    Capability,
    Completed,
    Diagnostic,
    Event,
    Failed,
    InstallationSource,
    PermissionChoice,
    StopReason,
    TextDelta,
    ToolStatus,
    ToolUpdated,
    TurnEnded,
)
from corral.sources.acp import AcpReplay

from tests.support.schema import check

FIXTURES = Path(__file__).parents[2] / "fixtures" / "acp"
AGENTS = ("gemini", "opencode", "copilot", "claude-acp", "codex-acp")
DENIED = {
    "gemini": Completed,
    "opencode": Completed,
    "copilot": Completed,
    "claude-acp": Failed,
    "codex-acp": Cancelled,
}
# case -> (stop type, asks permission, a text the agent must say)
CASES: dict[str, tuple[type[StopReason] | None, bool, str]] = {
    "plain": (Completed, False, "You said: CORRAL_ECHO hi"),
    "allowed": (Completed, True, "Tool said"),
    "auto": (Completed, True, "Tool said"),
    "denied": (None, True, ""),
    "cancel": (Cancelled, False, "slow 1/60"),
}
EXPECTED = {f"{agent}-{case}": (agent, case) for agent in AGENTS for case in CASES}


def replay(data: bytes, *, chunk: int | None = None) -> list[DriverEvent]:
    wire = AcpReplay()
    events: list[DriverEvent] = []
    step = chunk or len(data) or 1
    for start in range(0, len(data), step):
        events += wire.feed(data[start : start + step])
    return events + wire.end()


def through_engine(driver_events: list[DriverEvent]) -> list[Event]:
    engine = Engine(
        session_id="s1",
        agent=AgentInstallation(
            id="acp", name="ACP", executable_path="/bin/acp", source=InstallationSource.PATH
        ),
        handshake=Handshake(
            details=AgentDetails(capabilities=Capabilities(features=frozenset(Capability)))
        ),
        clock=lambda: 1000.0,
        wall_clock_ns=lambda: 0,
    )
    for event in driver_events:
        if isinstance(event, TurnBegan) and engine.turn is None:
            engine.prompt("replayed prompt")
        engine.on_driver_event(event)
    return [item for item in engine.outbox if isinstance(item, Event)]


def load(name: str) -> bytes:
    return (FIXTURES / f"{name}.wire.jsonl").read_bytes()


def test_every_fixture_is_covered_and_every_case_recorded() -> None:
    on_disk = {path.name.removesuffix(".wire.jsonl") for path in FIXTURES.glob("*.wire.jsonl")}
    assert on_disk == set(EXPECTED)


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_replayed_wire_makes_schema_valid_events(name: str) -> None:
    agent, case = EXPECTED[name]
    events = through_engine(replay(load(name)))
    for event in events:
        check("line-protocol.schema.json", "Event", event.to_wire())
    ends = [e.kind.stop for e in events if isinstance(e.kind, TurnEnded)]
    stop, _, said = CASES[case]
    assert len(ends) == 1
    assert type(ends[0]) is (stop or DENIED[agent])
    text = "".join(e.kind.text for e in events if isinstance(e.kind, TextDelta))
    assert said in text


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_permission_requests_offer_allow_and_deny(name: str) -> None:
    _, case = EXPECTED[name]
    asked = [e.request for e in replay(load(name)) if isinstance(e, RequestAsked)]
    assert len(asked) == (1 if CASES[case][1] else 0)
    for request in asked:
        assert {PermissionChoice.ALLOW_ONCE, PermissionChoice.DENY_ONCE} <= set(request.options)


@pytest.mark.parametrize("agent", AGENTS)
def test_a_denied_tool_never_ends_completed(agent: str) -> None:
    events = replay(load(f"{agent}-denied"))
    tools = [
        e.kind.tool for e in events if isinstance(e, Emitted) and isinstance(e.kind, ToolUpdated)
    ]
    if tools:
        assert tools[-1].status is not ToolStatus.COMPLETED


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_fed_byte_by_byte_it_replays_the_same(name: str) -> None:
    data = load(name)
    assert replay(data, chunk=1) == replay(data)


@pytest.mark.parametrize("name", ["gemini-allowed", "opencode-cancel", "codex-acp-denied"])
def test_trailing_garbage_is_one_warning_and_nothing_else(name: str) -> None:
    data = load(name)
    events = replay(data + b"\x00garbage{not json")
    assert events[:-1] == replay(data)
    last = events[-1]
    assert isinstance(last, Emitted) and isinstance(last.kind, Diagnostic)
    assert last.problem == "not_json"


def wire_lines(name: str) -> list[dict[str, object]]:
    return [orjson.loads(line) for line in load(name).splitlines() if line.strip()]


@pytest.mark.parametrize(
    ("case", "command"), [("allowed", "touch made.txt"), ("auto", "touch auto.txt")]
)
def test_the_claude_adapter_runs_its_command_in_a_terminal_corral_serves(
    case: str, command: str
) -> None:
    """corral offers `terminal`; the adapter then runs Bash through it, asking once."""
    lines = wire_lines(f"claude-acp-{case}")
    initialize = lines[0]["out"]
    assert initialize["method"] == "initialize"  # type: ignore[index]
    assert initialize["params"]["clientCapabilities"]["terminal"] is True  # type: ignore[index]
    creates = [
        line["in"]
        for line in lines
        if isinstance(line.get("in"), dict) and line["in"].get("method") == "terminal/create"  # type: ignore[union-attr]
    ]
    assert [create["params"]["command"] for create in creates] == [command]  # type: ignore[index]
    replies = [line["out"] for line in lines if isinstance(line.get("out"), dict)]
    rpc_id = creates[0]["id"]  # type: ignore[index]
    assert any(r.get("id") == rpc_id and "terminalId" in r.get("result", {}) for r in replies)  # type: ignore[union-attr, operator]
    asked = [e for e in replay(load(f"claude-acp-{case}")) if isinstance(e, RequestAsked)]
    assert len(asked) == 1  # the permission for the tool grants the terminal: not asked twice
