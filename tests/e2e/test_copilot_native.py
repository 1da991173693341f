"""corral driving the real Copilot CLI on its native SessionEvents, against the mock model.

Copilot (`@github/copilot`, pinned by `tests/support/realagents.py`) runs in
its SDK server mode (`copilot --headless --stdio`, JSON-RPC with
Content-Length framing) through corral's `copilot-native` catalog entry,
in-process, offline: `COPILOT_OFFLINE=true` and the sandbox's provider
variables, which the driver passes on as the session's BYOK provider.
Every event is checked against the line-protocol schema.

- a plain answer;
- a tool auto-approved (`AutoApprove`: corral answers, the app sees no
  request, the command ran);
- a second turn that remembers the first (the model sees the first
  exchange in its history);
- a permission asked and denied (Copilot then ends the turn: Cancelled);
- a question answered;
- cancel mid-stream;
- a new process resuming the session by its token;
- the `events.jsonl` Copilot wrote, replayed through the same normalizer.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest
from corral.actors.runtime import Runtime
from corral.pipeline.commands import PermissionMode
from corral.pipeline.driver import Emitted, PromptSent, TurnFinished
from corral.pipeline.events import (
    Cancelled,
    Completed,
    Event,
    PermissionAnswer,
    PermissionChoice,
    QuestionsAnswer,
    RequestOpened,
    TextAnswer,
    TextDelta,
    ToolKind,
    ToolStatus,
    ToolUpdated,
    TurnEnded,
)
from corral.sources.catalog import Catalog
from corral.sources.copilot import catalog_entry, read_native_transcript
from corral.sources.discovery import env_override_name

from tests.support.fake_appserver.drive import Watcher, kind_name
from tests.support.mockmodel import MockModelServer
from tests.support.realagents import AgentSandbox, require_agent

pytestmark = pytest.mark.e2e

TURN_TIMEOUT = 180.0


@pytest.fixture
def mock() -> Iterator[MockModelServer]:
    with MockModelServer(slow_pause=0.5) as server:
        yield server


@pytest.fixture
def sandbox(tmp_path: Path, mock: MockModelServer) -> AgentSandbox:
    require_agent("copilot")
    return AgentSandbox(root=tmp_path, model_url=mock.url, permission="ask")


@pytest.fixture
async def runtime(sandbox: AgentSandbox) -> AsyncIterator[Runtime]:
    environ = sandbox.env("copilot")
    environ[env_override_name("copilot-native")] = str(require_agent("copilot"))
    async with Runtime(catalog=Catalog([catalog_entry()]), environ=environ) as rt:
        yield rt


async def open_copilot(runtime: Runtime, sandbox: AgentSandbox, **options: object) -> Watcher:
    env = tuple(sandbox.env("copilot").items())
    session = await runtime.open("copilot-native", str(sandbox.workdir), env=env, **options)
    return Watcher(session, timeout=TURN_TIMEOUT)


def text_of(events: list[Event]) -> str:
    return "".join(e.kind.text for e in events if isinstance(e.kind, TextDelta))


def stop_of(events: list[Event]) -> object:
    last = events[-1].kind
    assert isinstance(last, TurnEnded)
    return last.stop


async def test_a_plain_answer_comes_from_the_mock(runtime: Runtime, sandbox: AgentSandbox) -> None:
    copilot = await open_copilot(runtime, sandbox)
    assert copilot.session.info().details.version == "1.0.102"
    await copilot.session.prompt("CORRAL_ECHO hi")
    events = await copilot.until("TurnEnded")
    assert text_of(events) == "You said: CORRAL_ECHO hi"
    assert stop_of(events) == Completed()
    await copilot.session.close()


async def test_an_auto_approved_tool_runs_without_the_app_seeing_a_request(
    runtime: Runtime, sandbox: AgentSandbox
) -> None:
    copilot = await open_copilot(runtime, sandbox, permission_mode=PermissionMode.AUTO_APPROVE)
    await copilot.session.prompt("CORRAL_TOOL: touch made-by-copilot")
    events = await copilot.until("TurnEnded")
    assert "RequestOpened" not in [kind_name(e) for e in events]
    shell = [e.kind.tool for e in events if isinstance(e.kind, ToolUpdated)]
    assert shell[-1].kind is ToolKind.EXECUTE and shell[-1].status is ToolStatus.COMPLETED
    assert (sandbox.workdir / "made-by-copilot").exists()
    assert text_of(events).startswith("Tool said:")
    assert stop_of(events) == Completed()
    await copilot.session.close()


async def test_a_second_turn_remembers_the_first(
    runtime: Runtime, sandbox: AgentSandbox, mock: MockModelServer
) -> None:
    copilot = await open_copilot(runtime, sandbox)
    await copilot.session.prompt("CORRAL_ECHO the password is kumquat")
    assert "kumquat" in text_of(await copilot.until("TurnEnded"))
    await copilot.session.prompt("CORRAL_ECHO what was the password?")
    second = await copilot.until("TurnEnded")
    assert stop_of(second) == Completed()
    history = json.dumps(mock.model_requests()[-1].body["messages"])
    assert "the password is kumquat" in history  # the first prompt
    assert "You said: CORRAL_ECHO the password is kumquat" in history  # and its answer
    await copilot.session.close()


async def test_a_denied_permission_never_runs_the_command(
    runtime: Runtime, sandbox: AgentSandbox
) -> None:
    copilot = await open_copilot(runtime, sandbox)
    await copilot.session.prompt("CORRAL_TOOL: touch denied-file")
    asked = (await copilot.until("RequestOpened"))[-1].kind
    assert isinstance(asked, RequestOpened)
    await copilot.session.answer(asked.request.id, PermissionAnswer(PermissionChoice.DENY_ONCE))
    events = await copilot.until("TurnEnded")
    assert not (sandbox.workdir / "denied-file").exists()
    assert stop_of(events) == Cancelled()  # Copilot ends the turn after a reject
    await copilot.session.close()


async def test_a_question_is_answered_by_the_app(runtime: Runtime, sandbox: AgentSandbox) -> None:
    copilot = await open_copilot(runtime, sandbox)
    await copilot.session.prompt("CORRAL_ASK: Shall I go on?")
    asked = (await copilot.until("RequestOpened"))[-1].kind
    assert isinstance(asked, RequestOpened)
    answer = QuestionsAnswer((TextAnswer("Yes, go on"),))
    await copilot.session.answer(asked.request.id, answer)
    events = await copilot.until("TurnEnded")
    assert "Yes, go on" in text_of(events)
    assert stop_of(events) == Completed()
    await copilot.session.close()


async def test_cancel_mid_stream_ends_the_turn_cancelled(
    runtime: Runtime, sandbox: AgentSandbox, mock: MockModelServer
) -> None:
    copilot = await open_copilot(runtime, sandbox)
    await copilot.session.prompt("CORRAL_SLOW:20")
    await copilot.until("TextDelta")
    await copilot.session.cancel()
    events = await copilot.until("TurnEnded")
    assert stop_of(events) == Cancelled()
    slow = next(r for r in mock.model_requests() if r.reply == "slow")
    assert mock.wait_for_outcome(slow.index, timeout=30) == "aborted"
    await copilot.session.close()


async def test_a_new_process_resumes_the_session_by_its_token(
    runtime: Runtime, sandbox: AgentSandbox, mock: MockModelServer
) -> None:
    first = await open_copilot(runtime, sandbox)
    token = first.session.info().resume_token
    await first.session.prompt("CORRAL_ECHO remember kiwi")
    await first.until("TurnEnded")
    await first.session.close()
    second = await open_copilot(runtime, sandbox, resume=token)
    assert second.session.info().resume_token == token
    await second.session.prompt("CORRAL_ECHO and now?")
    assert stop_of(await second.until("TurnEnded")) == Completed()
    assert "remember kiwi" in json.dumps(mock.model_requests()[-1].body["messages"])
    await second.session.close()


async def test_the_transcript_copilot_wrote_replays_the_session(
    runtime: Runtime, sandbox: AgentSandbox
) -> None:
    copilot = await open_copilot(runtime, sandbox, permission_mode=PermissionMode.AUTO_APPROVE)
    token = copilot.session.info().resume_token
    assert token is not None
    await copilot.session.prompt("CORRAL_ECHO first")
    live = await copilot.until("TurnEnded")
    await copilot.session.prompt("CORRAL_TOOL: touch replayed")
    await copilot.until("TurnEnded")
    await copilot.session.close()
    transcript = sandbox.home / ".copilot" / "session-state" / token / "events.jsonl"
    items = list(read_native_transcript(transcript))
    assert [i.text for i in items if isinstance(i, PromptSent)] == [
        "CORRAL_ECHO first",
        "CORRAL_TOOL: touch replayed",
    ]
    assert [i.stop for i in items if isinstance(i, TurnFinished)] == [Completed(), Completed()]
    replayed = [i.kind for i in items if isinstance(i, Emitted) and isinstance(i.kind, TextDelta)]
    assert replayed[0].text == text_of(live)
