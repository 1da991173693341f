"""One agent subprocess: its own process group, its family, pipes, and a stderr tail.

The agent runs in a new session (so a new process group), and its whole
family is tracked (`_reaper.Family`: children that left the group with
`setsid()` or by double-forking included). `stop` ends it in three steps
under one deadline: EOF on stdin, then SIGTERM to the group and the
family, then SIGKILL; whatever happened, no member of the family outlives
`stop`.

The process is watched, not only its pipe. A watcher task in the
session's task group looks at the family now and then while the agent
runs (so members are remembered before they can hide), and when the
agent exits it kills what the agent left behind at once: a leftover that
held the agent's stdout would otherwise keep the pipe from its EOF, and
the session from ending. If the pipe still gives neither data nor EOF a
little later (a holder corral cannot see), `read` reports EOF anyway.
The other way round, an agent that closes its stdout but keeps running
is given `_OUTLIVE` seconds to exit after EOF (`wait`), then stopped. Its
EOF may never come (its children may hold copies of the pipe: under uvloop
every child does), so the watcher also reads /proc: an fd 1 closed or
replaced means the output ended, and a silent pipe then reads as EOF.

`spawn(..., sandbox=spec)` runs the agent inside corral's sandbox when
`spec.agent` (`_sandbox.agent_argv`); its private TMPDIR goes with it.

stderr is drained continuously by a task in the session's task group into
a bounded tail (the last lines, for `ProcessExited.stderr`), so a chatty
agent can never block on a full stderr pipe and never costs unbounded
memory.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import shutil
import signal
from collections import deque
from collections.abc import Mapping, Sequence

from ..pipeline.driver import SandboxSpec
from ..pipeline.errors import AgentGone, CorralError, ErrorKind
from ..pipeline.telemetry import NULL_TELEMETRY, SessionTelemetry
from ._reaper import Family
from ._sandbox import agent_argv

__all__ = ["AgentGone", "AgentProcess", "exit_status", "reaped"]

_READ_SIZE = 256 * 1024
_TAIL_LINES = 40
_TAIL_LINE_BYTES = 2000
_EXIT_POLL = 0.01  # first pause between looks at a return code; it doubles...
_EXIT_POLL_MAX = 0.25  # ...up to this
_KILL_REAP = 5.0  # seconds a SIGKILLed leader may take to be reaped
_LOOK_EVERY = 0.5  # seconds between looks at a running agent's stdout
_SCAN_EVERY = 4  # looks between walks of its family
_PIPE_DRAIN = 1.0  # once the agent is gone or mute: how long a silent pipe may stay open
_OUTLIVE = 1.0  # seconds an agent may run on after its stdout ended
_OUTLIVE_STOP = 2.0  # then the grace of the stop that ends it


def _fd_target(pid: int, fd: int) -> str | None:
    """What the process's descriptor `fd` refers to (`pipe:[...]`), None when closed."""
    try:
        return os.readlink(f"/proc/{pid}/fd/{fd}")
    except OSError:
        return None


class _PipeHeld(Exception):
    """The agent is gone, yet its stdout gives neither data nor EOF."""


async def reaped(process: asyncio.subprocess.Process, within: float | None = None) -> bool:
    """Whether `process` has exited (been reaped) within `within` seconds (None: no limit).

    Not `Process.wait()`: on Python 3.11 it returns only once every pipe of
    the child is closed too, so a child that left a background process
    holding its stdout, or a consumer that stopped reading (backpressure:
    the pipe is paused, never at EOF), keeps `wait()` waiting long after
    the process is gone. The child watcher sets `returncode` as soon as it
    reaps the process; a poll with a short, growing pause reads it.
    """
    loop = asyncio.get_running_loop()
    deadline = None if within is None else loop.time() + max(within, 0.0)
    pause = _EXIT_POLL
    while process.returncode is None:
        if deadline is not None:
            left = deadline - loop.time()
            if left <= 0:
                return False
            pause = min(pause, left)
        await asyncio.sleep(pause)
        pause = min(pause * 2, _EXIT_POLL_MAX)
    return True


def exit_status(returncode: int | None) -> str:
    if returncode is None:
        return "unknown"
    if returncode < 0:
        try:
            name = signal.Signals(-returncode).name
        except ValueError:
            name = "unknown signal"
        return f"signal {-returncode} ({name})"
    return str(returncode)


class AgentProcess:
    def __init__(
        self,
        process: asyncio.subprocess.Process,
        argv: Sequence[str],
        telemetry: SessionTelemetry = NULL_TELEMETRY,
        *,
        family: Family | None = None,
    ) -> None:
        self._process = process
        self._telemetry = telemetry
        self._exit_reported = False
        self.family = family if family is not None else Family(process.pid, "")
        self._reading = False  # a read waits on an empty buffer
        self._read_ended = asyncio.Event()
        self._leader_gone = False  # the agent exited and its leftovers were killed
        self._muted = False  # it closed its stdout (fd 1) yet runs on
        self._output_ended = False  # `read` gave its EOF
        self._stdout_target = _fd_target(process.pid, 1)
        self._scratch: str | None = None
        self.argv = tuple(argv)
        self.pid = process.pid
        self._tail: deque[str] = deque(maxlen=_TAIL_LINES)
        self._write_lock = asyncio.Lock()
        self.stderr_bytes = 0

    @classmethod
    async def spawn(
        cls,
        argv: Sequence[str],
        *,
        cwd: str,
        env: Mapping[str, str],
        tasks: asyncio.TaskGroup,
        telemetry: SessionTelemetry = NULL_TELEMETRY,
        sandbox: SandboxSpec | None = None,
    ) -> AgentProcess:
        """Start `argv` (inside the sandbox when `sandbox.agent`), watched by a task in `tasks`."""
        token = Family.new_token()
        full_env = {**env, **Family.environment(token)}
        launched, scratch = list(argv), None
        if sandbox is not None and sandbox.agent:
            launched, scratch = await asyncio.to_thread(
                agent_argv, sandbox, launched, cwd=cwd, env=full_env
            )
        try:
            process = await asyncio.create_subprocess_exec(
                *launched,
                stdin=asyncio.subprocess.PIPE,
                stdout=asyncio.subprocess.PIPE,
                stderr=asyncio.subprocess.PIPE,
                cwd=cwd,
                env=full_env,
                start_new_session=True,
            )
        except (FileNotFoundError, PermissionError) as error:
            # The session directory was checked at open; this is the executable.
            raise CorralError(
                ErrorKind.NOT_INSTALLED,
                f"cannot start {argv[0]}: {error.strerror or error}",
                searched=[argv[0]],
                install_hint="",
            ) from None
        agent = cls(process, argv, telemetry, family=Family(process.pid, token))
        agent._scratch = scratch
        telemetry.process_started()
        tasks.create_task(agent._drain_stderr(), name=f"stderr-{process.pid}")
        tasks.create_task(agent._watch(), name=f"watch-{process.pid}")
        return agent

    async def _watch(self) -> None:
        """Look at the agent while it runs; end its leftovers when it exits.

        Its stdout is watched at the process: an agent that closed (or
        replaced) its fd 1 may leave copies of the pipe open elsewhere (uvloop's
        children inherit them), so EOF alone cannot tell.
        """
        try:
            await self._look_until_exit()
            await asyncio.to_thread(self.family.kill)
            await asyncio.to_thread(self._remove_scratch)
        finally:
            self._remove_scratch()  # the session's end cancelled the watch: no leftovers still
        self._leader_gone = True
        await self._unblock_reader()

    async def _look_until_exit(self) -> None:
        looks = 0
        while self._process.returncode is None:
            await asyncio.sleep(_LOOK_EVERY)  # one wake-up per look: an idle agent costs little
            looks += 1
            if looks % _SCAN_EVERY == 0:
                self.family.scan(orphans=False)
                self.family.reap()  # orphans that already ended: no zombie waits for the close
            if not self._muted and _fd_target(self.pid, 1) != self._stdout_target:
                self._muted = True  # from now on a silent pipe is its end
                await self._unblock_reader()

    def _remove_scratch(self) -> None:
        """Remove the sandbox's private tmp made for this agent (small: its temp files)."""
        scratch, self._scratch = self._scratch, None
        if scratch is not None:
            shutil.rmtree(scratch, ignore_errors=True)

    async def _unblock_reader(self) -> None:
        """A read still waiting for the agent gets its EOF once the pipe stays silent."""
        stream = self._process.stdout
        assert stream is not None
        if not self._reading:
            return  # a read that starts from now on has its own bound
        self._read_ended.clear()
        with contextlib.suppress(TimeoutError):
            async with asyncio.timeout(_PIPE_DRAIN):
                await self._read_ended.wait()
        if self._reading and not stream.at_eof():
            # A read waits on an empty buffer: no data of the agent's is lost.
            stream.set_exception(_PipeHeld())

    async def _drain_stderr(self) -> None:
        stream = self._process.stderr
        assert stream is not None
        partial = b""
        while chunk := await stream.read(_READ_SIZE):
            self.stderr_bytes += len(chunk)
            lines = (partial + chunk).split(b"\n")
            partial = lines.pop()[-_TAIL_LINE_BYTES:]
            for line in lines[-_TAIL_LINES:]:
                self._tail.append(line[-_TAIL_LINE_BYTES:].decode("utf-8", "replace"))
        if partial:
            self._tail.append(partial.decode("utf-8", "replace"))

    def stderr_tail(self) -> str:
        return "\n".join(self._tail)

    async def read(self) -> bytes:
        """The next chunk of stdout; b"" at EOF, or once the agent is gone and the pipe is mute."""
        stream = self._process.stdout
        assert stream is not None
        try:
            if self._leader_gone or self._muted:
                async with asyncio.timeout(_PIPE_DRAIN):
                    chunk = await stream.read(_READ_SIZE)
            else:
                self._reading = True
                try:
                    chunk = await stream.read(_READ_SIZE)
                finally:
                    self._reading = False
                    self._read_ended.set()
        except (_PipeHeld, TimeoutError):
            chunk = b""
        if not chunk:
            self._output_ended = True
        return chunk

    async def write(self, data: bytes) -> None:
        stream = self._process.stdin
        assert stream is not None
        async with self._write_lock:
            if stream.is_closing():
                raise AgentGone("the agent's stdin is closed")
            try:
                stream.write(data)
                await stream.drain()
            except (BrokenPipeError, ConnectionResetError) as error:
                raise AgentGone(str(error)) from None

    def close_stdin(self) -> None:
        stream = self._process.stdin
        if stream is not None and not stream.is_closing():
            stream.close()

    @property
    def returncode(self) -> int | None:
        return self._process.returncode

    async def wait(self) -> str:
        """The exit status, once stdout has ended; an agent that runs on is stopped."""
        if self._output_ended and not await reaped(self._process, _OUTLIVE):
            status = await self.stop(_OUTLIVE_STOP)
            return f"{status}, stopped by corral: it closed its output and kept running"
        await reaped(self._process)
        return self._report_exit(self._process.returncode)

    def _report_exit(self, returncode: int | None) -> str:
        status = exit_status(returncode)
        if not self._exit_reported:
            self._exit_reported = True
            self._telemetry.process_exited(status)
        return status

    def _signal_family(self, signum: int) -> None:
        self.family.signal(signum)

    async def _exited_within(self, seconds: float) -> bool:
        return await reaped(self._process, seconds)

    async def stop(self, grace: float) -> str:
        """EOF, then SIGTERM, then SIGKILL to the whole family, within `grace`."""
        self.close_stdin()
        step = grace / 2
        if not await self._exited_within(step):
            await asyncio.to_thread(self._signal_family, signal.SIGTERM)
            if not await self._exited_within(step):
                await asyncio.to_thread(self.family.kill)
                await self._exited_within(_KILL_REAP)
        # The leader is gone; whatever it left (in its group or not) goes too.
        await asyncio.to_thread(self.family.kill)
        await asyncio.to_thread(self._remove_scratch)
        if self._process.returncode is not None:
            self._release_pipes()
        return self._report_exit(self._process.returncode)

    def _release_pipes(self) -> None:
        """Close the pipes of a stopped agent, even one whose stdout was paused.

        After `stop` nothing reads the agent any more (its session has ended
        or never began), but a reader paused by backpressure leaves its pipe
        transport open; left to the garbage collector it warns after the
        event loop is gone. asyncio offers no public way to close a
        subprocess's transports from the `Process` object, hence `_transport`.
        """
        transport = getattr(self._process, "_transport", None)
        if isinstance(transport, asyncio.SubprocessTransport):
            transport.close()
