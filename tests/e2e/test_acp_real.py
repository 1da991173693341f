"""corral driving the six real ACP agents from npm against the mock model.

Gemini CLI (`gemini --acp`), opencode (`opencode acp`), Copilot CLI
(`copilot --acp`), the Claude ACP adapter, the Codex ACP adapter and Qwen
Code (`qwen --acp`, on the mock's OpenAI-compatible route), each
installed pinned by `tests/support/realagents.py`, sandboxed, and pointed
at `MockModelServer`. Each runs through corral's own catalog entry
(`catalog_entries()`), in-process, every event schema-checked:

- a plain answer;
- a tool that needs permission, allowed (the command ran);
- the same, denied: the command never runs, and each agent reacts in its
  own way (pinned in `DENIED_STOP`);
- the same under `AutoApprove`: corral answers, the app sees no request;
- cancel mid-stream: the turn ends Cancelled and the model stream is
  dropped.

With `CORRAL_RECORD_ACP_FIXTURES=1` each run also writes its raw wire to
`tests/fixtures/acp/<agent>-<case>.wire.jsonl` (sandbox paths replaced by
`/sandbox`, the agent installs by `/agents`), the golden files of `tests/unit/acp/test_golden.py`.
"""

from __future__ import annotations

import os
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest
from corral.actors.runtime import Runtime
from corral.pipeline.commands import PermissionMode
from corral.pipeline.events import (
    Cancelled,
    Completed,
    Failed,
    PermissionAnswer,
    PermissionChoice,
    RequestOpened,
    StopReason,
    TextDelta,
    TurnEnded,
)
from corral.pipeline.telemetry import Telemetry
from corral.sources.acp import catalog_entries
from corral.sources.catalog import Catalog
from corral.sources.discovery import env_override_name

from tests.support.acp_agents.drive import Watcher, WireRecorder, kinds
from tests.support.mockmodel import MockModelServer
from tests.support.realagents import (
    AgentName,
    AgentSandbox,
    agent_cache_dir,
    ensure_installed,
    require_agent,
)

pytestmark = pytest.mark.e2e

AGENTS: list[AgentName] = ["gemini", "opencode", "copilot", "claude-acp", "codex-acp", "qwen"]
TURN_TIMEOUT = 180.0
FIXTURES = Path(__file__).parents[1] / "fixtures" / "acp"

# What a denied tool does to the turn, per agent (observed with the pinned versions):
# Gemini, Copilot and Qwen Code tell the model, which answers; opencode ends the turn
# `end_turn`; the Claude adapter fails the prompt with a JSON-RPC internal error
# ("[ede_diagnostic] ... stop_reason=tool_use"), so corral ends the turn Failed
# with that message; the Codex adapter ends it `cancelled`.
DENIED_STOP: dict[str, type[StopReason]] = {
    "gemini": Completed,
    "opencode": Completed,
    "copilot": Completed,
    "claude-acp": Failed,
    "codex-acp": Cancelled,
    "qwen": Completed,
}


@pytest.fixture
def mock() -> Iterator[MockModelServer]:
    with MockModelServer() as server:
        yield server


class RealRun:
    def __init__(self, agent: AgentName, tmp_path: Path, mock: MockModelServer) -> None:
        self.agent = agent
        executable = require_agent(agent)
        claude = ensure_installed("claude") if agent == "claude-acp" else None
        self.sandbox = AgentSandbox(
            root=tmp_path, model_url=mock.url, permission="ask", claude_executable=claude
        )
        self.env = self.sandbox.env(agent)
        self.env[env_override_name(agent)] = str(executable)
        self.recorder = WireRecorder(FIXTURES / "unused")
        self.mock = mock

    def runtime(self) -> Runtime:
        return Runtime(
            catalog=Catalog(catalog_entries(environ=self.env)),
            environ=self.env,
            telemetry=Telemetry([self.recorder]),
        )

    async def open(self, rt: Runtime, mode: PermissionMode = PermissionMode.ASK) -> Watcher:
        session = await rt.open(self.agent, str(self.sandbox.workdir), permission_mode=mode)
        return Watcher(session, timeout=TURN_TIMEOUT)

    def save(self, case: str) -> None:
        if os.environ.get("CORRAL_RECORD_ACP_FIXTURES") != "1":
            return
        replace = {str(self.sandbox.root): "/sandbox", str(agent_cache_dir()): "/agents"}
        lines = []
        for line in self.recorder.lines:
            for local, neutral in replace.items():
                line = line.replace(local, neutral)
            lines.append(line)
        target = FIXTURES / f"{self.agent}-{case}.wire.jsonl"
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text("\n".join(lines) + "\n", encoding="utf-8")


@pytest.fixture(params=AGENTS)
async def real(
    request: pytest.FixtureRequest, tmp_path: Path, mock: MockModelServer
) -> AsyncIterator[RealRun]:
    yield RealRun(request.param, tmp_path, mock)


def text_of(events: list[object]) -> str:
    return "".join(e.kind.text for e in events if isinstance(e.kind, TextDelta))  # type: ignore[attr-defined]


def stop_of(events: list[object]) -> StopReason:
    ends = [e.kind.stop for e in events if isinstance(e.kind, TurnEnded)]  # type: ignore[attr-defined]
    assert len(ends) == 1, kinds(events)  # type: ignore[arg-type]
    return ends[0]  # type: ignore[no-any-return]


async def test_plain_answer(real: RealRun) -> None:
    async with real.runtime() as rt:
        watcher = await real.open(rt)
        await watcher.session.prompt("CORRAL_ECHO hi")
        events = await watcher.turn()
        await watcher.session.close()
    assert "You said: CORRAL_ECHO hi" in text_of(events)
    assert stop_of(events) == Completed()
    assert "MessageEnded" in kinds(events)
    real.save("plain")


async def tool_turn(real: RealRun, rt: Runtime, choice: PermissionChoice) -> list[object]:
    watcher = await real.open(rt)
    await watcher.session.prompt("CORRAL_TOOL: touch made.txt")
    events: list[object] = list(await watcher.until_kind("RequestOpened"))
    request = events[-1].kind.request  # type: ignore[attr-defined]
    assert PermissionChoice.ALLOW_ONCE in request.options
    assert PermissionChoice.DENY_ONCE in request.options
    await watcher.session.answer(request.id, PermissionAnswer(choice))
    events += await watcher.turn()
    await watcher.session.close()
    return events


async def test_permission_allowed_runs_the_command(real: RealRun) -> None:
    async with real.runtime() as rt:
        events = await tool_turn(real, rt, PermissionChoice.ALLOW_ONCE)
    assert (real.sandbox.workdir / "made.txt").exists()
    assert stop_of(events) == Completed()
    assert "Tool said" in text_of(events)
    real.save("allowed")


async def test_permission_denied_never_runs_the_command(real: RealRun) -> None:
    async with real.runtime() as rt:
        events = await tool_turn(real, rt, PermissionChoice.DENY_ONCE)
    assert not (real.sandbox.workdir / "made.txt").exists()
    stop = stop_of(events)
    assert type(stop) is DENIED_STOP[real.agent], stop
    if isinstance(stop, Failed):
        assert stop.message.startswith("session/prompt failed")
    real.save("denied")


async def test_auto_approve_answers_for_the_app(real: RealRun) -> None:
    async with real.runtime() as rt:
        watcher = await real.open(rt, PermissionMode.AUTO_APPROVE)
        await watcher.session.prompt("CORRAL_TOOL: touch auto.txt")
        events = await watcher.turn()
        await watcher.session.close()
    assert not any(isinstance(e.kind, RequestOpened) for e in events)
    assert (real.sandbox.workdir / "auto.txt").exists()
    assert stop_of(events) == Completed()
    real.save("auto")


async def test_cancel_mid_stream(real: RealRun) -> None:
    async with real.runtime() as rt:
        watcher = await real.open(rt)
        await watcher.session.prompt("CORRAL_SLOW:60")
        await watcher.until(lambda e: isinstance(e.kind, TextDelta) and "slow" in e.kind.text)
        await watcher.session.cancel()
        events = await watcher.turn()
        await watcher.session.close()
    assert stop_of(events) == Cancelled()
    assert "corral/cancel_timeout" not in str([e.extensions for e in events])  # type: ignore[attr-defined]
    real.save("cancel")
