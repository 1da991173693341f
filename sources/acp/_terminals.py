"""The terminals one ACP session runs for its agent: real processes, bounded.

What flows in: an allowed `CommandSpec` (`create`), then the agent's
`terminal/*` calls by terminal id. What flows out: terminal ids, output
snapshots (`{output, truncated, exitStatus?}`), exit statuses, a call of
`on_output(terminal_id, text)` as output arrives (streamed, so the app
sees a long command's output while it runs), and a call of
`on_exit(terminal_id)` once each command has ended.

Streaming is bounded: each call carries at most one read (`_READ_SIZE`
bytes), at most the command's output limit is streamed in all (past it,
the final snapshot shows the tail), and `on_output` may wait (the
driver's bounded channel), which pauses the reader and so the command,
never memory. The first call waits until the terminal's start is in the
stream (`announce`), so its output never overtakes its start.

Each command runs as `/bin/sh -c LINE` in its own session, inside corral's
sandbox when the session has one (`CommandBox`: bubblewrap), with stdin
closed and stderr merged into stdout. `kill` and `release` reach every
process it started, even one that left its group (`_reaper.Family`). Two tasks in the session's
task group serve it: the reader feeds an `OutputBuffer` (bounded) until
EOF; the waiter reaps the process, gives the reader a short while to
reach EOF (a background child may hold the pipe open), records the exit
and, once the start of corral's own tool for it is in the stream
(`announce`), calls `on_exit`.

- `kill`: SIGTERM to the family, SIGKILL after `KILL_GRACE`; the terminal
  stays readable.
- `release`: SIGKILL to the family; the id is forgotten.
- `close` (the session ends): every terminal is released at once; tasks
  that could still wait (a reader whose pipe an escaped process holds)
  are cancelled, so no task and no process of ours outlives the session.

At most `MAX_TERMINALS` unreleased terminals per session. `spawn_command`
is the one place a command's process is started.
"""

from __future__ import annotations

import asyncio
import codecs
import contextlib
import signal
from collections.abc import Awaitable, Callable, Mapping
from typing import Any

import attrs

from ...pipeline.events import ToolStatus, ToolUpdate
from .._process import reaped
from .._reaper import Family
from .._sandbox import CommandBox
from ._frames import INTERNAL_ERROR, INVALID_PARAMS
from ._fs import FsRefused
from ._terminal import CommandSpec, OutputBuffer, exit_fields

__all__ = ["KILL_GRACE", "MAX_TERMINALS", "Terminals", "spawn_command"]

MAX_TERMINALS = 32
KILL_GRACE = 2.0
_DRAIN_AFTER_EXIT = 2.0
_READ_SIZE = 64 * 1024

OnExit = Callable[[str], Awaitable[None]]
OnOutput = Callable[[str, str], Awaitable[None]]  # (terminal id, text)


@attrs.define(kw_only=True, eq=False)
class _Terminal:
    id: str
    spec: CommandSpec
    process: asyncio.subprocess.Process
    output: OutputBuffer
    tool: ToolUpdate | None  # corral's own tool for a command it asked about
    family: Family  # the command and everything it started, even what left its group
    returncode: int | None = None
    exited: asyncio.Event = attrs.Factory(asyncio.Event)
    eof: asyncio.Event = attrs.Factory(asyncio.Event)
    announced: asyncio.Event = attrs.Factory(asyncio.Event)  # its start is in the stream
    tasks: list[asyncio.Task[None]] = attrs.Factory(list)

    def signal_group(self, signum: int) -> None:
        self.family.signal(signum)  # its group, and what left the group (setsid, double fork)
        self.family.reap()

    def exit_status(self) -> dict[str, Any]:
        if self.returncode is None:  # force-released before it was reaped
            return {"exitCode": None, "signal": "SIGKILL"}
        return exit_fields(self.returncode)

    def snapshot(self) -> dict[str, Any]:
        done = self.exited.is_set()
        result: dict[str, Any] = {
            "output": self.output.text(final=done),
            "truncated": self.output.truncated,
        }
        if done:
            result["exitStatus"] = self.exit_status()
        return result


async def spawn_command(
    spec: CommandSpec, env: Mapping[str, str], box: CommandBox | None = None
) -> asyncio.subprocess.Process:
    """The one place a terminal's process starts (inside `box`, corral's sandbox, if given)."""
    argv = spec.argv() if box is None else await box.wrap(spec.argv(), cwd=spec.cwd)
    return await asyncio.create_subprocess_exec(
        *argv,
        stdin=asyncio.subprocess.DEVNULL,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.STDOUT,
        cwd=spec.cwd,
        env=dict(env),
        start_new_session=True,
    )


class Terminals:
    def __init__(
        self,
        *,
        tasks: asyncio.TaskGroup,
        env: Mapping[str, str],
        on_exit: OnExit,
        name: str = "acp",
        box: CommandBox | None = None,  # corral's sandbox for every command, if any
        on_output: OnOutput | None = None,
    ) -> None:
        self._box = box
        self._on_output = on_output
        self._tasks = tasks
        self._env = dict(env)
        self._on_exit = on_exit
        self._name = name
        self._open: dict[str, _Terminal] = {}
        self._count = 0
        self._closed = False

    def __len__(self) -> int:
        return len(self._open)

    def text(self, terminal_id: str) -> str | None:
        """The output so far (for tool calls that show the terminal); None if unknown."""
        terminal = self._open.get(terminal_id)
        return None if terminal is None else terminal.output.text(final=terminal.exited.is_set())

    def _get(self, terminal_id: object) -> _Terminal:
        terminal = self._open.get(terminal_id) if isinstance(terminal_id, str) else None
        if terminal is None:
            raise FsRefused(INVALID_PARAMS, f"no terminal {terminal_id!r} (released or unknown)")
        return terminal

    async def create(self, spec: CommandSpec, tool: ToolUpdate | None = None) -> str:
        if self._closed:
            raise FsRefused(INTERNAL_ERROR, "the session is closing")
        if len(self._open) >= MAX_TERMINALS:
            raise FsRefused(
                INTERNAL_ERROR, f"{MAX_TERMINALS} terminals are open; release one first"
            )
        try:
            token = Family.new_token()
            env = {**self._env, **dict(spec.env), **Family.environment(token)}
            process = await spawn_command(spec, env, self._box)
        except (OSError, ValueError) as error:  # ValueError: an argument Python refuses
            raise FsRefused(INTERNAL_ERROR, f"cannot start the command: {error}") from None
        self._count += 1
        terminal_id = f"term-{self._count}"
        terminal = _Terminal(
            id=terminal_id,
            spec=spec,
            process=process,
            output=OutputBuffer(spec.output_limit),
            tool=tool,
            family=Family(process.pid, token),
        )
        self._open[terminal_id] = terminal
        if tool is None:
            terminal.announced.set()
        prefix = f"{self._name}-{terminal_id}"
        terminal.tasks.append(self._tasks.create_task(self._read(terminal), name=f"{prefix}-read"))
        terminal.tasks.append(self._tasks.create_task(self._wait(terminal), name=f"{prefix}-wait"))
        return terminal_id

    async def _read(self, terminal: _Terminal) -> None:
        stream = terminal.process.stdout
        assert stream is not None
        decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
        unstreamed = terminal.spec.output_limit  # bytes still to stream
        try:
            while chunk := await stream.read(_READ_SIZE):
                terminal.output.feed(chunk)
                if self._on_output is None or unstreamed <= 0:
                    continue
                text = decoder.decode(chunk[:unstreamed])
                unstreamed -= len(chunk)
                if text:
                    await terminal.announced.wait()
                    await self._on_output(terminal.id, text)
        finally:
            terminal.eof.set()

    async def _wait(self, terminal: _Terminal) -> None:
        await reaped(terminal.process)  # not wait(): a child may hold the pipe
        returncode = terminal.process.returncode
        with contextlib.suppress(TimeoutError):
            async with asyncio.timeout(_DRAIN_AFTER_EXIT):
                await terminal.eof.wait()
        terminal.returncode = returncode
        terminal.exited.set()
        await terminal.announced.wait()  # its end never overtakes its start
        await self._on_exit(terminal.id)

    def announce(self, terminal_id: str) -> None:
        """The events of its start are queued: its end may follow."""
        terminal = self._open.get(terminal_id)
        if terminal is not None:
            terminal.announced.set()

    # ---- the agent's calls --------------------------------------------------------

    def output(self, terminal_id: object) -> dict[str, Any]:
        return self._get(terminal_id).snapshot()

    async def wait_for_exit(self, terminal_id: object) -> dict[str, Any]:
        terminal = self._get(terminal_id)
        await terminal.exited.wait()
        return terminal.exit_status()

    async def kill(self, terminal_id: object) -> None:
        terminal = self._get(terminal_id)
        if not terminal.exited.is_set():
            terminal.signal_group(signal.SIGTERM)
            await reaped(terminal.process, KILL_GRACE)
        terminal.signal_group(signal.SIGKILL)  # the rest of its group too
        await terminal.exited.wait()

    async def release(self, terminal_id: object) -> None:
        terminal = self._get(terminal_id)
        del self._open[terminal.id]
        terminal.signal_group(signal.SIGKILL)
        _, waiter = terminal.tasks
        # The waiter records the exit and reports it; its own waits are bounded.
        await asyncio.wait([waiter], timeout=_DRAIN_AFTER_EXIT + KILL_GRACE)
        self._abandon(terminal)

    @staticmethod
    def _abandon(terminal: _Terminal) -> None:
        """Stop serving it: its tasks end, and whoever waits on it gets an answer."""
        for task in terminal.tasks:
            task.cancel()  # a reader whose pipe an escaped process holds would never end
        if terminal.returncode is None:
            terminal.returncode = terminal.process.returncode
        terminal.exited.set()

    async def close(self) -> None:
        """The session ends: every terminal is killed and forgotten; idempotent."""
        self._closed = True
        terminals, self._open = list(self._open.values()), {}
        for terminal in terminals:
            terminal.signal_group(signal.SIGKILL)
        loop = asyncio.get_running_loop()
        deadline = loop.time() + KILL_GRACE
        for terminal in terminals:
            await reaped(terminal.process, deadline - loop.time())
        for terminal in terminals:
            terminal.signal_group(signal.SIGKILL)  # what is left of its group
            self._abandon(terminal)
        if self._box is not None:
            await self._box.close()

    # ---- corral's own tool for a command it asked about ---------------------------

    def own_tool_id(self, terminal_id: str) -> str | None:
        terminal = self._open.get(terminal_id)
        return None if terminal is None or terminal.tool is None else terminal.tool.id

    def finished_tool(self, terminal_id: str) -> ToolUpdate | None:
        terminal = self._open.get(terminal_id)
        if terminal is None or terminal.tool is None:
            return None
        status = ToolStatus.COMPLETED if terminal.returncode == 0 else ToolStatus.FAILED
        return attrs.evolve(terminal.tool, status=status, output=terminal.output.text(final=True))
