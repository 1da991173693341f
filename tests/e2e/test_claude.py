"""The real `claude` CLI, driven by corral, against the project's mock model.

Each test starts the pinned Claude Code (installed from npm into the test
cache by tests/support/realagents.py; skipped with the reason when it
cannot be installed) in a fresh sandbox pointed at a local mock of the
Anthropic Messages API (tests/support/mockmodel), opens it through
`Runtime(catalog=Catalog([catalog_entry(...)]))`, and checks what corral
emits. Every event is validated against the line-protocol schema.

The mock answers by trigger phrase: `CORRAL_ECHO` (text), `CORRAL_TOOL:
<command>` (a Bash call, which asks permission for a writing command),
`CORRAL_ASK: <question>` (AskUserQuestion), `CORRAL_SLOW:N` (one delta a
second, for cancel).
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from pathlib import Path

import pytest
from corral.actors.handle import Session
from corral.actors.runtime import Runtime
from corral.pipeline.events import (
    Authenticated,
    AuthKind,
    Cancelled,
    ChoicesAnswer,
    Completed,
    ContextCompacted,
    ContextUsage,
    Event,
    PermissionAnswer,
    PermissionChoice,
    PermissionRequest,
    PromptOrigin,
    QuestionRequest,
    QuestionsAnswer,
    Queued,
    RequestClosed,
    RequestOpened,
    SessionStatus,
    StatusChanged,
    TextDelta,
    ToolKind,
    ToolStatus,
    ToolUpdated,
    TurnEnded,
    TurnStarted,
)
from corral.sources.catalog import Catalog
from corral.sources.claude import catalog_entry

from tests.support.mockmodel import MockModelServer
from tests.support.realagents import AgentSandbox, require_agent
from tests.support.schema import check

pytestmark = pytest.mark.e2e

TURN_TIMEOUT = 120.0
Answerer = Callable[[Session, RequestOpened], Awaitable[None]]


@pytest.fixture(scope="module")
def claude_bin() -> Path:
    return require_agent("claude")


@pytest.fixture
def mock() -> Iterator[MockModelServer]:
    with MockModelServer() as server:
        yield server


class Setup:
    def __init__(self, tmp_path: Path, mock: MockModelServer, claude_bin: Path) -> None:
        self.mock = mock
        self.sandbox = AgentSandbox(root=tmp_path, model_url=mock.url)
        self.env = self.sandbox.env("claude")
        self.env["CORRAL_CLAUDE_BIN"] = str(claude_bin)
        self.workdir = self.sandbox.workdir

    def runtime(self) -> Runtime:
        return Runtime(catalog=Catalog([catalog_entry(environ=self.env)]), environ=self.env)


@pytest.fixture
def setup(tmp_path: Path, mock: MockModelServer, claude_bin: Path) -> Setup:
    return Setup(tmp_path, mock, claude_bin)


@pytest.fixture
async def runtime(setup: Setup) -> AsyncIterator[Runtime]:
    async with setup.runtime() as runtime:
        yield runtime


class Stream:
    """A session's events, each schema-checked, read until a condition holds."""

    def __init__(self, session: Session) -> None:
        self.session = session
        self.events = aiter(session.events())
        self.seen: list[Event] = []

    async def until(self, done: Callable[[Event], bool], answer: Answerer | None = None) -> Event:
        async with asyncio.timeout(TURN_TIMEOUT):
            async for event in self.events:
                check("line-protocol.schema.json", "Event", event.to_wire())
                self.seen.append(event)
                if isinstance(event.kind, RequestOpened) and answer is not None:
                    await answer(self.session, event.kind)
                if done(event):
                    return event
        raise AssertionError(f"the stream ended first; last events: {self.seen[-5:]}")

    async def turn(self, answer: Answerer | None = None) -> TurnEnded:
        event = await self.until(lambda e: isinstance(e.kind, TurnEnded), answer)
        assert isinstance(event.kind, TurnEnded)
        return event.kind

    async def idle(self) -> None:
        await self.until(lambda e: e.kind == StatusChanged(SessionStatus.IDLE))

    def kinds(self, cls: type) -> list:  # type: ignore[type-arg]
        return [e.kind for e in self.seen if isinstance(e.kind, cls)]

    def text(self) -> str:
        return "".join(k.text for k in self.kinds(TextDelta))

    def statuses(self) -> list[SessionStatus]:
        return [k.status for k in self.kinds(StatusChanged)]


def permission(choice: PermissionChoice) -> Answerer:
    async def answer(session: Session, opened: RequestOpened) -> None:
        assert isinstance(opened.request, PermissionRequest)
        await session.answer(opened.request.id, PermissionAnswer(choice))

    return answer


async def open_session(runtime: Runtime, setup: Setup, **options: object) -> tuple[Session, Stream]:
    session = await runtime.open("claude", dir=str(setup.workdir), **options)
    return session, Stream(session)


async def test_plain_answer(runtime: Runtime, setup: Setup) -> None:
    session, stream = await open_session(runtime, setup)
    await session.prompt("CORRAL_ECHO hi")
    end = await stream.turn()
    assert end.stop == Completed()
    assert stream.text() == "You said: CORRAL_ECHO hi"
    (usage,) = stream.kinds(ContextUsage)
    assert usage.used_tokens > 0
    await stream.idle()
    assert stream.statuses() == [SessionStatus.WORKING, SessionStatus.IDLE]
    await session.close()


async def test_tool_needing_permission_allowed(runtime: Runtime, setup: Setup) -> None:
    session, stream = await open_session(runtime, setup)
    await session.prompt("CORRAL_TOOL: touch allowed.txt")
    end = await stream.turn(permission(PermissionChoice.ALLOW_ONCE))
    assert end.stop == Completed()
    (opened,) = stream.kinds(RequestOpened)
    assert isinstance(opened.request, PermissionRequest)
    assert opened.request.tool.kind is ToolKind.EXECUTE
    assert opened.request.tool.input.to_wire() == {
        "Command": {"command": "touch allowed.txt", "cwd": None}
    }
    assert len(stream.kinds(RequestClosed)) == 1
    assert stream.kinds(ToolUpdated)[-1].tool.status is ToolStatus.COMPLETED
    assert (setup.workdir / "allowed.txt").exists()
    await stream.idle()
    assert stream.statuses() == [
        SessionStatus.WORKING,
        SessionStatus.NEEDS_INPUT,
        SessionStatus.WORKING,
        SessionStatus.IDLE,
    ]
    await session.close()


async def test_tool_needing_permission_denied(runtime: Runtime, setup: Setup) -> None:
    session, stream = await open_session(runtime, setup)
    await session.prompt("CORRAL_TOOL: touch denied.txt")
    end = await stream.turn(permission(PermissionChoice.DENY_ONCE))
    assert end.stop == Completed()  # the model reads the refusal and goes on
    assert stream.kinds(ToolUpdated)[-1].tool.status is ToolStatus.FAILED
    assert not (setup.workdir / "denied.txt").exists()
    assert stream.text().startswith("Tool said: The user denied this tool use.")
    await session.close()


async def test_cancel_mid_turn_then_the_session_goes_on(runtime: Runtime, setup: Setup) -> None:
    session, stream = await open_session(runtime, setup)
    await session.prompt("CORRAL_SLOW:30")
    await stream.until(lambda e: isinstance(e.kind, TextDelta))
    await session.cancel()
    end = await stream.turn()
    assert end.stop == Cancelled()
    slow = setup.mock.wait_for_request(lambda r: r.reply == "slow", timeout=10)
    assert setup.mock.wait_for_outcome(slow.index, timeout=30) == "aborted"
    await session.prompt("CORRAL_ECHO after")
    assert (await stream.turn()).stop == Completed()
    assert stream.text().endswith("You said: CORRAL_ECHO after")
    await session.close()


async def test_cancel_right_after_prompt_still_ends_cancelled(
    runtime: Runtime, setup: Setup
) -> None:
    session, stream = await open_session(runtime, setup)
    await session.prompt("CORRAL_SLOW:30")
    await session.cancel()
    assert (await stream.turn()).stop == Cancelled()
    await session.prompt("CORRAL_ECHO next")
    assert (await stream.turn()).stop == Completed()
    assert stream.text().endswith("You said: CORRAL_ECHO next")
    await session.close()


async def test_second_prompt_is_queued_and_runs_after_the_first(
    runtime: Runtime, setup: Setup
) -> None:
    session, stream = await open_session(runtime, setup)
    first = await session.prompt("CORRAL_SLOW:2")
    second = await session.prompt("CORRAL_ECHO second")
    assert second.kind == Queued(0)
    assert (await stream.turn()).stop == Completed()
    assert (await stream.turn()).stop == Completed()
    origins = [k.origin for k in stream.kinds(TurnStarted)]
    assert origins == [PromptOrigin(first.prompt_id), PromptOrigin(second.prompt_id)]
    assert stream.text().endswith("You said: CORRAL_ECHO second")
    await stream.idle()
    assert stream.statuses() == [SessionStatus.WORKING, SessionStatus.IDLE]
    await session.close()


def _conversation_holds(mock: MockModelServer, text: str) -> bool:
    last = mock.model_requests()[-1]
    return text in str(last.body.get("messages"))


async def test_resume_continues_the_same_conversation(runtime: Runtime, setup: Setup) -> None:
    session, stream = await open_session(runtime, setup)
    token = session.info().resume_token
    assert token
    await session.prompt("CORRAL_ECHO remember the walrus")
    await stream.turn()
    await session.close()
    resumed, again = await open_session(runtime, setup, resume=token)
    assert resumed.info().resume_token == token
    await resumed.prompt("CORRAL_ECHO again")
    assert (await again.turn()).stop == Completed()
    assert _conversation_holds(setup.mock, "remember the walrus")
    await resumed.close()


async def test_fork_starts_a_new_session_with_the_history(runtime: Runtime, setup: Setup) -> None:
    session, stream = await open_session(runtime, setup)
    token = session.info().resume_token
    await session.prompt("CORRAL_ECHO original line")
    await stream.turn()
    await session.close()
    forked, fork_stream = await open_session(runtime, setup, fork=token)
    fork_token = forked.info().resume_token
    assert fork_token and fork_token != token
    await forked.prompt("CORRAL_ECHO in the fork")
    assert (await fork_stream.turn()).stop == Completed()
    assert forked.info().resume_token == fork_token
    assert _conversation_holds(setup.mock, "original line")
    await forked.close()


async def test_question_answered(runtime: Runtime, setup: Setup) -> None:
    async def choose_yes(session: Session, opened: RequestOpened) -> None:
        assert isinstance(opened.request, QuestionRequest)
        (question,) = opened.request.questions
        assert question.text == "Proceed?"
        yes = next(c.id for c in question.choices if c.label == "Yes")
        await session.answer(opened.request.id, QuestionsAnswer((ChoicesAnswer((yes,)),)))

    session, stream = await open_session(runtime, setup)
    await session.prompt("CORRAL_ASK: Proceed?")
    assert (await stream.turn(choose_yes)).stop == Completed()
    assert '"Proceed?"="Yes"' in stream.text()
    await session.close()


async def test_configure_model_applies_to_the_next_request(runtime: Runtime, setup: Setup) -> None:
    session, stream = await open_session(runtime, setup)
    info = await session.configure("model", "sonnet")
    assert dict(info.options)["model"] == "sonnet"
    await session.prompt("CORRAL_ECHO with sonnet")
    await stream.turn()
    assert "sonnet" in setup.mock.model_requests()[-1].body["model"]
    await session.close()


async def test_compact_compacts_the_context(runtime: Runtime, setup: Setup) -> None:
    session, stream = await open_session(runtime, setup)
    await session.prompt("CORRAL_ECHO something to compact")
    await stream.turn()
    await session.compact()
    assert (await stream.turn()).stop == Completed()
    assert stream.kinds(ContextCompacted)
    await session.close()


async def test_probe_reports_version_and_login(runtime: Runtime) -> None:
    details = await runtime.probe("claude")
    assert details.version == "2.1.332"
    assert details.auth == Authenticated(kind=AuthKind.API_KEY)


def _registered() -> bool:
    from corral.sources.registry import default_catalog

    return default_catalog().get("claude") is not None


@pytest.mark.skipif(
    not _registered(), reason="claude is not in sources/registry.py's default catalog yet"
)
async def test_serve_speaks_the_line_protocol_for_claude(setup: Setup) -> None:
    from tests.support.serve import ServeProcess

    serve = await ServeProcess.start(env=setup.env)  # every line is checked against `Line`
    try:
        await serve.wait_for(lambda line: "hello" in line)
        info = await serve.ok({"cmd": "open", "agent": "claude", "dir": str(setup.workdir)})
        session = info["id"]
        assert info["resume_token"]
        await serve.ok({"cmd": "prompt", "session": session, "text": "CORRAL_TOOL: touch s.txt"})
        opened = await serve.wait_event(session, "RequestOpened", timeout=TURN_TIMEOUT)
        request = opened["kind"]["RequestOpened"]["Permission"]["id"]
        answer = {"Permission": "AllowOnce"}
        await serve.ok({"cmd": "answer", "session": session, "request": request, "answer": answer})
        ended = await serve.wait_event(session, "TurnEnded", timeout=TURN_TIMEOUT)
        assert ended["kind"]["TurnEnded"]["stop"] == {"Completed": {"source": "Protocol"}}
        assert (setup.workdir / "s.txt").exists()
        assert await serve.finish(timeout=60) == 0
        assert [line["closed"] for line in serve.lines if "closed" in line] == [session]
    finally:
        await serve.kill()


async def test_image_attachment_reaches_the_model(runtime: Runtime, setup: Setup) -> None:
    from tests.unit.claude.test_encode import PIXEL

    (setup.workdir / "pixel.png").write_bytes(PIXEL)
    session, stream = await open_session(runtime, setup)
    await session.prompt("CORRAL_ECHO look at this", attachments=("pixel.png",))
    assert (await stream.turn()).stop == Completed()
    request = setup.mock.model_requests()[-1]
    assert '"type": "image"' in json.dumps(request.body["messages"])
    await session.close()
