"""corral's `terminal` client capability, against an agent on the ACP Python SDK.

The agent (`tests/support/acp_agents/scripted.py`, its `term*` and `asked`
prompts) calls `terminal/create`, `terminal/output`,
`terminal/wait_for_exit`, `terminal/kill` and `terminal/release`; corral
runs real processes. Every event is checked against the line-protocol
schema; every wait is bounded.
"""

from __future__ import annotations

import re
import sys
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path

import pytest
from corral.actors.runtime import Runtime
from corral.pipeline.commands import AcpRef, PermissionMode
from corral.pipeline.events import (
    CommandInput,
    Diagnostic,
    DiagnosticLevel,
    PermissionAnswer,
    PermissionChoice,
    RequestOpened,
    TextDelta,
    ToolKind,
    ToolStatus,
    ToolUpdated,
)
from corral.sources.acp import catalog_entries
from corral.sources.catalog import Catalog

from tests.support.acp_agents.drive import Watcher
from tests.support.waiting import until

pytest.importorskip("acp", reason="the ACP Python SDK (agent-client-protocol) is not installed")

AGENT = Path(__file__).parents[1] / "support" / "acp_agents" / "scripted.py"
FAMILY = re.compile(r"child (\d+) pid (\d+)")

Opener = Callable[..., Awaitable[Watcher]]


@pytest.fixture
async def runtime() -> AsyncIterator[Runtime]:
    async with Runtime(catalog=Catalog(catalog_entries())) as rt:
        yield rt


@pytest.fixture
def open_agent(runtime: Runtime, tmp_path: Path) -> Opener:
    async def open_(**options: object) -> Watcher:
        ref = AcpRef(name="scripted", path=sys.executable, args=(str(AGENT),))
        session = await runtime.open(ref, str(tmp_path), **options)
        return Watcher(session)

    return open_


def texts(events: list[object]) -> str:
    return "".join(e.kind.text for e in events if isinstance(e.kind, TextDelta))  # type: ignore[attr-defined]


def tools(events: list[object], tool_id: str | None = None) -> list[object]:
    found = [e.kind.tool for e in events if isinstance(e.kind, ToolUpdated)]  # type: ignore[attr-defined]
    return [tool for tool in found if tool_id is None or tool.id == tool_id]


def requests(events: list[object]) -> list[object]:
    return [e.kind.request for e in events if isinstance(e.kind, RequestOpened)]  # type: ignore[attr-defined]


async def answered_turn(watcher: Watcher, prompt: str, choice: PermissionChoice) -> list[object]:
    """The prompt's turn, answering its one request with `choice`."""
    await watcher.session.prompt(prompt)
    events: list[object] = list(await watcher.until_kind("RequestOpened"))
    await watcher.session.answer(requests(events)[-1].id, PermissionAnswer(choice))  # type: ignore[attr-defined]
    return events + await watcher.turn()


def _is_gone(pid: int) -> bool:
    """Whether the process `pid` no longer runs (absent, or a zombie)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text(encoding="ascii")
    except FileNotFoundError:
        return True
    return stat.rsplit(")", 1)[1].split()[0] == "Z"


async def gone(pid: int, timeout: float = 10.0) -> bool:
    """Whether the process `pid` is gone (or a zombie) within `timeout`."""
    await until(lambda: _is_gone(pid), timeout, what=f"process {pid} to be gone")
    return True


def family(events: list[object]) -> list[int]:
    match = FAMILY.search(texts(events))
    assert match is not None, texts(events)
    return [int(match[1]), int(match[2])]


async def test_a_command_is_asked_as_execute_and_runs_when_allowed(open_agent: Opener) -> None:
    watcher = await open_agent()
    events = await answered_turn(watcher, "term echo hi", PermissionChoice.ALLOW_ONCE)
    (request,) = requests(events)
    assert request.tool.kind is ToolKind.EXECUTE  # type: ignore[attr-defined]
    assert request.tool.input.command == "echo hi"  # type: ignore[attr-defined]
    assert texts(events) == "exit 0 signal None truncated False output 'hi\\n'"
    last = tools(events, request.tool.id)[-1]  # type: ignore[attr-defined]
    assert (last.status, last.output) == (ToolStatus.COMPLETED, "hi\n")  # type: ignore[attr-defined]


async def test_a_denied_command_never_runs_and_the_agent_reads_why(
    open_agent: Opener, tmp_path: Path
) -> None:
    watcher = await open_agent()
    events = await answered_turn(watcher, "term touch made.txt", PermissionChoice.DENY_ONCE)
    assert not (tmp_path / "made.txt").exists()
    assert texts(events).startswith("terminal error -32800 corral did not run `touch made.txt`")
    warnings = [e for e in events if isinstance(e.kind, Diagnostic)]  # type: ignore[attr-defined]
    assert [w.kind.level for w in warnings] == [DiagnosticLevel.WARNING]  # type: ignore[attr-defined]
    assert tools(events)[-1].status is ToolStatus.CANCELLED  # type: ignore[attr-defined]


async def test_a_command_the_agent_was_allowed_is_not_asked_twice(
    open_agent: Opener, tmp_path: Path
) -> None:
    watcher = await open_agent()
    events = await answered_turn(
        watcher, "asked echo granted && touch granted.txt", PermissionChoice.ALLOW_ONCE
    )
    assert len(requests(events)) == 1
    assert (tmp_path / "granted.txt").exists()
    assert texts(events).startswith("exit 0 ")


async def test_a_tool_call_showing_a_terminal_shows_its_output(open_agent: Opener) -> None:
    watcher = await open_agent()
    events = await answered_turn(watcher, "asked echo shown", PermissionChoice.ALLOW_ONCE)
    outputs = [tool.output for tool in tools(events, "t3")]  # type: ignore[attr-defined]
    assert outputs[-1] == "shown\n"
    assert tools(events, "t3")[-1].status is ToolStatus.COMPLETED  # type: ignore[attr-defined]


async def test_auto_approve_runs_a_command_without_asking(open_agent: Opener) -> None:
    watcher = await open_agent(permission_mode=PermissionMode.AUTO_APPROVE)
    await watcher.session.prompt("term echo auto")
    events = await watcher.turn()
    assert requests(events) == []
    assert texts(events) == "exit 0 signal None truncated False output 'auto\\n'"


async def test_args_are_quoted_and_env_is_added(open_agent: Opener) -> None:
    watcher = await open_agent(permission_mode=PermissionMode.AUTO_APPROVE)
    await watcher.session.prompt("termargs")
    events = await watcher.turn()
    assert texts(events).endswith("output 'bar|two words; $(no)'")
    command = tools(events)[0].input  # type: ignore[attr-defined]
    assert isinstance(command, CommandInput)
    assert command.command == 'sh -c \'printf "%s|%s" "$FOO" "$1"\' sh \'two words; $(no)\''


async def test_a_cwd_inside_the_session_dir_is_used(open_agent: Opener, tmp_path: Path) -> None:
    sub = tmp_path / "sub"
    sub.mkdir()
    expected = str(sub.resolve()) + "\n"
    watcher = await open_agent(permission_mode=PermissionMode.AUTO_APPROVE)
    await watcher.session.prompt(f"termcwd {sub}")
    events = await watcher.turn()
    assert texts(events).endswith(f"output {expected!r}")


async def test_a_cwd_outside_the_session_dir_is_refused_unasked(
    open_agent: Opener, tmp_path: Path
) -> None:
    watcher = await open_agent()
    await watcher.session.prompt(f"termcwd {tmp_path.parent}")
    events = await watcher.turn()
    assert requests(events) == []
    assert texts(events).startswith("terminal error -32602 ")
    assert "outside the session directory" in texts(events)
    notes = [e for e in events if isinstance(e.kind, Diagnostic)]  # type: ignore[attr-defined]
    assert [n.kind.level for n in notes] == [DiagnosticLevel.WARNING]  # type: ignore[attr-defined]


async def test_output_is_truncated_from_the_start_at_a_character_boundary(
    open_agent: Opener,
) -> None:
    watcher = await open_agent(permission_mode=PermissionMode.AUTO_APPROVE)
    # `python3 -c ...` is inline code: AutoApprove asks the app.
    events = await answered_turn(watcher, "termlimit 102", PermissionChoice.ALLOW_ONCE)
    assert texts(events) == f"exit 0 signal None truncated True output {'é' * 50 + 'Z'!r}"


async def test_kill_ends_the_whole_process_tree(open_agent: Opener) -> None:
    watcher = await open_agent(permission_mode=PermissionMode.AUTO_APPROVE)
    await watcher.session.prompt("termkill")
    events = await watcher.turn()
    assert "killed: exit None signal SIGTERM" in texts(events)
    for pid in family(events):
        assert await gone(pid)


async def test_wait_returns_when_the_command_exits_though_a_child_holds_its_output(
    open_agent: Opener,
) -> None:
    watcher = await open_agent(permission_mode=PermissionMode.AUTO_APPROVE)
    await watcher.session.prompt("termbg")
    events = await watcher.turn()
    assert texts(events).endswith("exit 7")
    child, _ = family(events)
    assert await gone(child)  # released: the rest of its group is killed


async def test_closing_the_session_kills_its_running_commands(open_agent: Opener) -> None:
    watcher = await open_agent(permission_mode=PermissionMode.AUTO_APPROVE)
    await watcher.session.prompt("termhang")
    events = await watcher.until(lambda e: "pid" in texts([e]))
    pids = family(events)
    await watcher.session.close()
    await watcher.rest()
    for pid in pids:
        assert await gone(pid)


async def test_a_released_terminal_is_unknown(open_agent: Opener) -> None:
    watcher = await open_agent(permission_mode=PermissionMode.AUTO_APPROVE)
    await watcher.session.prompt("termreleased")
    events = await watcher.turn()
    assert texts(events) == "output error -32602"
