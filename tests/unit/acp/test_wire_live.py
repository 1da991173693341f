"""Issue 22's ACP mappings over a real subprocess: the SDK-based scripted agent.

The agent is `tests/support/acp_agents/scripted.py` (its `elicit`,
`termstream`, `notice`, `model` and `slow` prompts, and `--models`), opened through
the catalog's `acp` entry; every event is checked against the line-protocol
schema (`Watcher`) and every wait is bounded.
"""

from __future__ import annotations

import json
import sys
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path

import pytest
from corral.actors.runtime import Runtime
from corral.pipeline.commands import AcpRef
from corral.pipeline.events import (
    ChoicesAnswer,
    ContextCompacted,
    Diagnostic,
    DiagnosticLevel,
    PermissionAnswer,
    PermissionChoice,
    QuestionRequest,
    QuestionsAnswer,
    Queued,
    RequestOpened,
    TextAnswer,
    TextDelta,
    ToolOutputDelta,
    ToolStatus,
    ToolUpdated,
    TurnStarted,
)
from corral.sources.acp import catalog_entries
from corral.sources.catalog import Catalog

from tests.support.acp_agents.drive import Watcher

pytest.importorskip("acp", reason="the ACP Python SDK (agent-client-protocol) is not installed")

AGENT = Path(__file__).parents[2] / "support" / "acp_agents" / "scripted.py"

Opener = Callable[..., Awaitable[Watcher]]


@pytest.fixture
async def runtime() -> AsyncIterator[Runtime]:
    async with Runtime(catalog=Catalog(catalog_entries())) as rt:
        yield rt


@pytest.fixture
def open_agent(runtime: Runtime, tmp_path: Path) -> Opener:
    async def open_(*args: str, **options: object) -> Watcher:
        ref = AcpRef(name="scripted", path=sys.executable, args=(str(AGENT), *args))
        return Watcher(await runtime.open(ref, str(tmp_path), **options))

    return open_


def texts(events: list[object]) -> str:
    return "".join(e.kind.text for e in events if isinstance(e.kind, TextDelta))  # type: ignore[attr-defined]


async def test_an_elicitation_form_is_a_question_answered_in_the_agent_s_shape(
    open_agent: Opener,
) -> None:
    watcher = await open_agent()
    await watcher.session.prompt("elicit")
    opened = (await watcher.until_kind("RequestOpened"))[-1].kind
    assert isinstance(opened, RequestOpened) and isinstance(opened.request, QuestionRequest)
    assert [q.id for q in opened.request.questions] == ["name", "ci"]
    answer = QuestionsAnswer((TextAnswer("corral"), ChoicesAnswer(("true",))))
    await watcher.session.answer(opened.request.id, answer)
    said = texts(await watcher.turn())
    accepted = {"action": "accept", "content": {"ci": True, "name": "corral"}}
    assert said == f"elicitation {json.dumps(accepted, sort_keys=True)}"


async def test_a_terminal_s_output_streams_while_the_command_runs(
    open_agent: Opener, tmp_path: Path
) -> None:
    watcher = await open_agent()
    await watcher.session.prompt("termstream")
    opened = (await watcher.until_kind("RequestOpened"))[-1].kind
    assert isinstance(opened, RequestOpened)
    await watcher.session.answer(opened.request.id, PermissionAnswer(PermissionChoice.ALLOW_ONCE))

    def first_output(event: object) -> bool:
        kind = event.kind  # type: ignore[attr-defined]
        return isinstance(kind, ToolOutputDelta) and "first" in kind.text

    before_go = await watcher.until(first_output)
    # The command is still waiting for `go`: no tool of it has finished yet.
    finished = [
        e.kind.tool
        for e in before_go
        if isinstance(e.kind, ToolUpdated) and e.kind.tool.status.finished
    ]
    assert finished == []
    (tmp_path / "go").touch()
    events = before_go + await watcher.turn()
    assert texts(events).startswith("exit 0 signal None truncated False output 'firstsecond'")
    own = opened.request.tool.id  # type: ignore[union-attr]
    streamed = "".join(
        e.kind.text for e in events if isinstance(e.kind, ToolOutputDelta) and e.kind.tool_id == own
    )
    assert streamed == "firstsecond"
    last = [e.kind.tool for e in events if isinstance(e.kind, ToolUpdated)]
    own_last = [tool for tool in last if tool.id == own][-1]
    assert (own_last.status, own_last.output) == (ToolStatus.COMPLETED, "firstsecond")


async def test_notices_and_compactions_reach_the_app_as_meaning(open_agent: Opener) -> None:
    watcher = await open_agent()
    await watcher.session.prompt("notice")
    events = await watcher.turn()
    notes = [e.kind for e in events if isinstance(e.kind, Diagnostic)]
    assert [(n.level, n.message) for n in notes] == [
        (DiagnosticLevel.WARNING, "Rate limited"),
        (DiagnosticLevel.INFO, "the agent is compacting its context"),
    ]
    assert [e for e in events if isinstance(e.kind, ContextCompacted)] != []
    assert len([e for e in events if isinstance(e.kind, ContextCompacted)]) == 1
    assert texts(events) == "noticed"


async def test_the_model_is_an_option_set_with_session_set_model(open_agent: Opener) -> None:
    watcher = await open_agent("--models")
    info = watcher.session.info()
    [model] = [o for o in info.details.config_options if o.id == "model"]
    assert [c.value for c in model.choices] == ["fast", "smart"]
    assert dict(info.options)["model"] == "fast"
    info = await watcher.session.configure("model", "smart")
    assert dict(info.options)["model"] == "smart"
    await watcher.session.prompt("model")
    assert texts(await watcher.turn()) == "model smart"


async def test_a_prompt_during_a_turn_is_queued_not_steered(open_agent: Opener) -> None:
    """ACP defines no steering: the second prompt waits and runs as a turn of its own."""
    watcher = await open_agent()
    await watcher.session.prompt("slow")
    await watcher.until(lambda event: isinstance(event.kind, TextDelta))  # the turn runs
    delivery = await watcher.session.prompt("after the slow one")
    assert isinstance(delivery.kind, Queued)
    await watcher.session.cancel()
    await watcher.turn()
    started = await watcher.until(lambda event: isinstance(event.kind, TurnStarted))
    assert started[-1].kind.origin.prompt_id == delivery.prompt_id  # type: ignore[attr-defined]
    assert texts(await watcher.turn()) == "You said: after the slow one"
