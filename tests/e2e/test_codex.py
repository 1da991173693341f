"""The real Codex CLI (`codex app-server`, pinned, from npm) driven by corral in-process.

Each test opens a session through `Runtime(catalog=Catalog([catalog_entry()]))`
against the project's mock model server, in a fresh sandbox (HOME,
CODEX_HOME with a config.toml pointing at the mock, work dir), and checks
what corral emits. Every event is validated against the line-protocol
schema as it arrives. Skipped, with the reason, when the CLI cannot be
installed.
"""

from __future__ import annotations

import asyncio
import json
import os
import signal
import sys
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from pathlib import Path
from typing import Any, TypeVar

import pytest
from corral.actors.handle import Session
from corral.actors.runtime import Runtime
from corral.pipeline.commands import RollbackScope
from corral.pipeline.errors import CorralError, ErrorKind
from corral.pipeline.events import (
    Cancelled,
    ChoicesAnswer,
    Completed,
    ContextCompacted,
    Event,
    Failed,
    PermissionAnswer,
    PermissionChoice,
    PermissionRequest,
    QuestionRequest,
    QuestionsAnswer,
    RequestClosed,
    RequestOpened,
    SessionStatus,
    StatusChanged,
    Steered,
    TextDelta,
    ToolKind,
    ToolStatus,
    ToolUpdated,
    TurnEnded,
    TurnStarted,
)
from corral.sources.catalog import Catalog
from corral.sources.codex import catalog_entry

from tests.support.mockmodel import MockModelServer
from tests.support.realagents import AgentSandbox, require_agent
from tests.support.schema import check_line

pytestmark = pytest.mark.e2e

TIMEOUT = 120.0
LATE_TURN_STARTED = (
    Path(__file__).resolve().parents[1] / "fixtures" / "codex" / "late_turn_started.py"
)
T = TypeVar("T")


async def bounded(step: Awaitable[T]) -> T:
    """One step that waits on Codex (a verdict, a close), under the test's deadline."""
    async with asyncio.timeout(TIMEOUT):
        return await step


class Watch:
    """A session's events, read as the test waits for them; each checked as a `Line`.

    Reading happens inside `until` (bounded by TIMEOUT), so no background
    task outlives the test; `drain` reads (and checks) whatever is left once
    the session closed.
    """

    def __init__(self, session: Session) -> None:
        self.session = session
        self.events: list[Event] = []
        self._stream = aiter(session.events())

    def _keep(self, event: Event) -> None:
        check_line({"event": event.to_wire()})  # the line corral serve would write
        self.events.append(event)

    async def until(self, found: Callable[[Event], bool], after: int = 0) -> Event:
        for event in self.events[after:]:
            if found(event):
                return event
        async with asyncio.timeout(TIMEOUT):
            async for event in self._stream:
                self._keep(event)
                if found(event) and len(self.events) > after:
                    return event
        raise AssertionError(f"the stream ended first; last events: {self.events[-5:]}")

    async def drain(self) -> None:
        async with asyncio.timeout(TIMEOUT):
            async for event in self._stream:
                self._keep(event)

    async def turn_end(self, after: int = 0) -> TurnEnded:
        event = await self.until(lambda e: isinstance(e.kind, TurnEnded), after)
        assert isinstance(event.kind, TurnEnded)
        return event.kind

    async def idle(self) -> None:
        await self.until(lambda e: e.kind == StatusChanged(SessionStatus.IDLE))

    def text(self, after: int = 0) -> str:
        return "".join(e.kind.text for e in self.events[after:] if isinstance(e.kind, TextDelta))

    def kinds(self, kind: type[Any]) -> list[Any]:
        return [e.kind for e in self.events if isinstance(e.kind, kind)]


@pytest.fixture
def codex() -> Path:
    return require_agent("codex")


@pytest.fixture
def mock() -> Iterator[MockModelServer]:
    with MockModelServer(slow_pause=0.5) as server:
        yield server


@pytest.fixture
def sandbox(tmp_path: Path, mock: MockModelServer) -> AgentSandbox:
    return AgentSandbox(root=tmp_path, model_url=mock.url)


class CodexRuntime:
    """A Runtime with only Codex in its catalog; remembers every session's watch."""

    def __init__(self, runtime: Runtime, sandbox: AgentSandbox) -> None:
        self.runtime = runtime
        self.sandbox = sandbox
        self.watches: list[Watch] = []

    async def open(
        self, extra_env: dict[str, str] | None = None, **options: Any
    ) -> tuple[Session, Watch]:
        env = tuple({**self.sandbox.env("codex"), **(extra_env or {})}.items())
        async with asyncio.timeout(TIMEOUT):
            session = await self.runtime.open(
                "codex", str(self.sandbox.workdir), env=env, **options
            )
        watch = Watch(session)
        self.watches.append(watch)
        return session, watch

    async def finish(self) -> None:
        """Close every session and check the events nobody waited for."""
        async with asyncio.timeout(TIMEOUT):
            for watch in self.watches:
                await watch.session.close()
                await watch.drain()


@pytest.fixture
async def corral(codex: Path, sandbox: AgentSandbox) -> AsyncIterator[CodexRuntime]:
    environ = {**sandbox.env("codex"), "CORRAL_CODEX_BIN": str(codex)}
    catalog = Catalog([catalog_entry()])
    async with Runtime(catalog=catalog, environ=environ) as runtime:
        holder = CodexRuntime(runtime, sandbox)
        yield holder
        await holder.finish()


async def test_plain_answer(corral: CodexRuntime, sandbox: AgentSandbox) -> None:
    session, watch = await corral.open()
    info = session.info()
    assert info.details.version == "0.171.0"
    assert info.resume_token
    await session.prompt("CORRAL_ECHO hi")
    assert (await watch.turn_end()).stop == Completed()
    assert watch.text() == "You said: CORRAL_ECHO hi"
    await watch.idle()
    assert [s.status for s in watch.kinds(StatusChanged)] == [
        SessionStatus.WORKING,
        SessionStatus.IDLE,
    ]


async def test_command_approval_accepted(corral: CodexRuntime, sandbox: AgentSandbox) -> None:
    session, watch = await corral.open()
    await session.prompt("CORRAL_TOOL: touch accepted.txt")
    opened = await watch.until(lambda e: isinstance(e.kind, RequestOpened))
    assert isinstance(opened.kind, RequestOpened)
    request = opened.kind.request
    assert isinstance(request, PermissionRequest) and request.tool.kind is ToolKind.EXECUTE
    assert session.status is SessionStatus.NEEDS_INPUT
    await session.answer(request.id, PermissionAnswer(PermissionChoice.ALLOW_ONCE))
    assert (await watch.turn_end()).stop == Completed()
    assert (sandbox.workdir / "accepted.txt").exists()
    (finished,) = [u.tool for u in watch.kinds(ToolUpdated) if u.tool.status.finished]
    assert finished.status is ToolStatus.COMPLETED
    await watch.idle()
    assert [s.status for s in watch.kinds(StatusChanged)] == [
        SessionStatus.WORKING,
        SessionStatus.NEEDS_INPUT,
        SessionStatus.WORKING,
        SessionStatus.IDLE,
    ]


async def test_command_approval_declined(corral: CodexRuntime, sandbox: AgentSandbox) -> None:
    session, watch = await corral.open()
    await session.prompt("CORRAL_TOOL: touch declined.txt")
    opened = await watch.until(lambda e: isinstance(e.kind, RequestOpened))
    assert isinstance(opened.kind, RequestOpened)
    await session.answer(opened.kind.request.id, PermissionAnswer(PermissionChoice.DENY_ONCE))
    assert (await watch.turn_end()).stop == Completed()
    assert not (sandbox.workdir / "declined.txt").exists()
    (finished,) = [u.tool for u in watch.kinds(ToolUpdated) if u.tool.status.finished]
    assert finished.status is ToolStatus.FAILED
    assert "rejected" in watch.text()


async def test_interrupt_mid_turn(corral: CodexRuntime, sandbox: AgentSandbox) -> None:
    session, watch = await corral.open()
    await session.prompt("CORRAL_SLOW:60")
    await watch.until(lambda e: isinstance(e.kind, TextDelta))
    await bounded(session.cancel())
    ended = await watch.turn_end()
    assert ended.stop == Cancelled()
    assert not [e for e in watch.events if "corral/cancel_timeout" in e.extensions]
    assert len(watch.kinds(TurnStarted)) == 1


async def test_interrupt_with_an_open_approval(corral: CodexRuntime, sandbox: AgentSandbox) -> None:
    session, watch = await corral.open()
    await session.prompt("CORRAL_TOOL: touch never.txt")
    opened = await watch.until(lambda e: isinstance(e.kind, RequestOpened))
    await bounded(session.cancel())
    assert (await watch.turn_end()).stop == Cancelled()
    assert isinstance(opened.kind, RequestOpened)
    assert RequestClosed(opened.kind.request.id) in watch.kinds(RequestClosed)
    assert not (sandbox.workdir / "never.txt").exists()


async def test_interrupt_cancels_a_running_command(
    corral: CodexRuntime, sandbox: AgentSandbox
) -> None:
    session, watch = await corral.open()
    await session.prompt("CORRAL_TOOL: sleep 30")
    opened = await watch.until(lambda e: isinstance(e.kind, RequestOpened))
    assert isinstance(opened.kind, RequestOpened)
    await session.answer(opened.kind.request.id, PermissionAnswer(PermissionChoice.ALLOW_ONCE))
    await bounded(session.cancel())
    ended = await watch.turn_end()
    assert ended.stop == Cancelled()
    # Codex never completes an interrupted tool item: corral ends it Cancelled.
    (tool,) = {u.tool.id: u.tool for u in watch.kinds(ToolUpdated)}.values()
    assert tool.kind is ToolKind.EXECUTE and tool.status is ToolStatus.CANCELLED


async def test_steer_joins_the_running_turn(corral: CodexRuntime, sandbox: AgentSandbox) -> None:
    session, watch = await corral.open()
    await session.prompt("CORRAL_SLOW:6")
    await watch.until(lambda e: isinstance(e.kind, TextDelta))
    delivery = await session.prompt("CORRAL_ECHO steered")
    assert isinstance(delivery.kind, Steered)
    assert (await watch.turn_end()).stop == Completed()
    assert "You said: CORRAL_ECHO steered" in watch.text()
    assert len(watch.kinds(TurnStarted)) == 1


class WireOrder:
    """A telemetry observer: the JSON-RPC methods on the wire, in the order corral saw them.

    The test adds its own marks to the same list, so "before" and "after"
    are read from one sequence.
    """

    def __init__(self) -> None:
        self.seen: list[tuple[str, str]] = []

    def wire_line(self, session_id: str, direction: str, line: bytes) -> None:
        method = json.loads(line).get("method")
        if isinstance(method, str):
            self.seen.append((direction, method))

    def mark(self, what: str) -> None:
        self.seen.append(("test", what))

    def index(self, entry: tuple[str, str]) -> int:
        return self.seen.index(entry)

    def process_started(self, agent: str) -> None: ...

    def process_exited(self, agent: str, status: str) -> None: ...

    def process_restarted(self, agent: str) -> None: ...

    def decode_error(self, agent: str, kind: str) -> None: ...

    def unknown_frame(self, agent: str) -> None: ...


async def test_an_early_steer_waits_for_the_turn(codex: Path, sandbox: AgentSandbox) -> None:
    # Codex behind a wrapper that holds `turn/started` back 1 s, so the second
    # prompt surely comes before it (the recorded wire proves it did), while
    # the slow answer (8 s) keeps the turn open once it started. corral holds
    # the steer until the turn began, then steers (not queues) it.
    wrapper = sandbox.root / "codex-late-turn-started"
    wrapper.write_text(
        "#!/bin/sh\nCORRAL_TEST_TURN_STARTED_DELAY=1 "
        f'exec "{sys.executable}" "{LATE_TURN_STARTED}" "{codex}" "$@"\n'
    )
    wrapper.chmod(0o755)
    wire = WireOrder()
    environ = {**sandbox.env("codex"), "CORRAL_CODEX_BIN": str(wrapper)}
    async with Runtime(catalog=Catalog([catalog_entry()]), environ=environ) as runtime:
        runtime.telemetry.add(wire)
        holder = CodexRuntime(runtime, sandbox)
        session, watch = await holder.open()
        await session.prompt("CORRAL_SLOW:16")
        wire.mark("steer")
        delivery = await bounded(session.prompt("CORRAL_ECHO early"))
        assert isinstance(delivery.kind, Steered)
        await watch.turn_end()
        await holder.finish()
    assert "You said: CORRAL_ECHO early" in watch.text()
    started = wire.index(("in", "turn/started"))
    assert wire.index(("test", "steer")) < started  # the steer was early...
    assert wire.index(("out", "turn/steer")) > started  # ...and waited for the turn
    assert len(watch.kinds(TurnStarted)) == 1


async def test_resume_continues_the_thread(
    corral: CodexRuntime, sandbox: AgentSandbox, mock: MockModelServer
) -> None:
    first, watch = await corral.open()
    await first.prompt("CORRAL_ECHO remember me")
    await watch.turn_end()
    token = first.info().resume_token
    await bounded(first.close())
    resumed, again = await corral.open(resume=token)
    assert resumed.info().resume_token == token
    await resumed.prompt("CORRAL_ECHO again")
    assert (await again.turn_end()).stop == Completed()
    assert again.text() == "You said: CORRAL_ECHO again"
    assert "remember me" in str(mock.model_requests()[-1].body)  # the old turn was sent along


async def test_fork_remembers_the_thread_under_a_new_id(
    corral: CodexRuntime, sandbox: AgentSandbox, mock: MockModelServer
) -> None:
    first, watch = await corral.open()
    await first.prompt("CORRAL_ECHO remember me")
    await watch.turn_end()
    token = first.info().resume_token
    assert token
    forked, branch = await corral.open(fork=token)
    fork_token = forked.info().resume_token
    assert fork_token and fork_token != token
    await forked.prompt("CORRAL_ECHO again")
    assert (await branch.turn_end()).stop == Completed()
    assert branch.text() == "You said: CORRAL_ECHO again"
    assert "remember me" in str(mock.model_requests()[-1].body)  # the first turn came along


async def test_question_is_answered(corral: CodexRuntime, sandbox: AgentSandbox) -> None:
    session, watch = await corral.open()
    await session.prompt("CORRAL_ASK: Proceed?")
    opened = await watch.until(lambda e: isinstance(e.kind, RequestOpened))
    assert isinstance(opened.kind, RequestOpened)
    request = opened.kind.request
    assert isinstance(request, QuestionRequest)
    await session.answer(request.id, QuestionsAnswer((ChoicesAnswer(("Yes",)),)))
    await watch.turn_end()
    assert '"Yes"' in watch.text()


async def test_compact_runs_as_an_agent_turn(corral: CodexRuntime, sandbox: AgentSandbox) -> None:
    session, watch = await corral.open()
    await session.prompt("CORRAL_ECHO hi")
    await watch.turn_end()
    mark = len(watch.events)
    await bounded(session.compact())
    assert (await watch.turn_end(mark)).stop == Completed()
    assert watch.kinds(ContextCompacted)


async def test_rollback_one_turn(
    corral: CodexRuntime, sandbox: AgentSandbox, mock: MockModelServer
) -> None:
    session, watch = await corral.open()
    await session.prompt("CORRAL_ECHO keep")
    await watch.turn_end()
    mark = len(watch.events)
    await session.prompt("CORRAL_ECHO forget")
    await watch.turn_end(mark)
    await bounded(session.rollback(1, RollbackScope.CONVERSATION))
    mark = len(watch.events)
    await session.prompt("CORRAL_ECHO next")
    await watch.turn_end(mark)
    sent = str(mock.model_requests()[-1].body)
    assert "keep" in sent and "forget" not in sent


async def test_configure_effort_live(corral: CodexRuntime, sandbox: AgentSandbox) -> None:
    session, _ = await corral.open()
    info = await bounded(session.configure("effort", "high"))
    assert dict(info.options)["effort"] == "high"


async def test_without_a_login_open_is_auth_required(
    corral: CodexRuntime, sandbox: AgentSandbox
) -> None:
    # No model provider of our own: Codex wants an OpenAI login, which this sandbox lacks.
    home = sandbox.root / "plain-codex-home"
    home.mkdir()
    (home / "config.toml").write_text("[analytics]\nenabled = false\n")
    with pytest.raises(CorralError) as caught:
        await corral.open(extra_env={"CODEX_HOME": str(home)})
    assert caught.value.kind is ErrorKind.AUTH_REQUIRED


async def test_resume_of_an_unknown_thread_fails(corral: CodexRuntime) -> None:
    with pytest.raises(CorralError) as caught:
        await corral.open(resume="01a22744-0000-7bb1-9adf-5c257c8cb121")
    assert caught.value.kind is ErrorKind.RESUME_FAILED


def _app_server_pid(workdir: Path) -> int:
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            cmdline = (entry / "cmdline").read_bytes()
            cwd = os.readlink(entry / "cwd")
        except OSError:
            continue
        if b"app-server" in cmdline and cwd == str(workdir):
            return int(entry.name)
    raise AssertionError("no codex app-server process found")


async def test_codex_dying_mid_turn_fails_the_turn_and_the_session(
    corral: CodexRuntime, sandbox: AgentSandbox
) -> None:
    session, watch = await corral.open()
    await session.prompt("CORRAL_SLOW:60")
    await watch.until(lambda e: isinstance(e.kind, TextDelta))
    os.killpg(os.getpgid(_app_server_pid(sandbox.workdir)), signal.SIGKILL)
    ended = await watch.turn_end()
    assert isinstance(ended.stop, Failed)
    await bounded(session.wait_closed())
    assert session.failure is not None and session.failure.kind is ErrorKind.PROCESS_EXITED


async def test_isolated_home_keeps_the_session_out_of_codex_home(
    corral: CodexRuntime, sandbox: AgentSandbox
) -> None:
    session, watch = await corral.open(configure=(("isolate_home", True),))
    await session.prompt("CORRAL_ECHO private")
    assert (await watch.turn_end()).stop == Completed()  # the provider config was seeded
    await bounded(session.close())
    assert list(sandbox.codex_home.glob("sessions/**/rollout-*.jsonl")) == []


async def test_serve_discovers_and_drives_codex(codex: Path, sandbox: AgentSandbox) -> None:
    # The default catalog (sources/registry.py) through `corral serve`: every line is a `Line`.
    from tests.support.serve import ServeProcess

    env = {**sandbox.env("codex"), "CORRAL_CODEX_BIN": str(codex)}
    serve = await ServeProcess.start(env=env)  # ServeProcess checks every line it reads
    try:
        found = await serve.ok({"cmd": "discover"})
        (entry,) = [a for a in found["agents"] if a["id"] == "codex"]
        assert entry["executable_path"] == str(codex) and entry["source"] == "EnvOverride"
        probed = await serve.ok({"cmd": "probe", "agent": "codex"}, timeout=TIMEOUT)
        assert probed["version"] == "0.171.0"
        assert any(option["id"] == "model" for option in probed["config_options"])
        info = await serve.ok({"cmd": "open", "agent": "codex", "dir": str(sandbox.workdir)})
        session = info["id"]
        await serve.ok({"cmd": "prompt", "session": session, "text": "CORRAL_TOOL: touch s.txt"})
        opened = await serve.wait_event(session, "RequestOpened", timeout=TIMEOUT)
        request = opened["kind"]["RequestOpened"]["Permission"]["id"]
        answer = {"Permission": "AllowOnce"}
        await serve.ok({"cmd": "answer", "session": session, "request": request, "answer": answer})
        ended = await serve.wait_event(session, "TurnEnded", timeout=TIMEOUT)
        assert ended["kind"]["TurnEnded"]["stop"] == {"Completed": {"source": "Protocol"}}
        assert (sandbox.workdir / "s.txt").exists()
        assert await serve.finish(timeout=60) == 0
        assert [line["closed"] for line in serve.lines if "closed" in line] == [session]
    finally:
        await serve.kill()
