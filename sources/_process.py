"""One agent subprocess: its own process group, pipes, and a stderr tail.

The agent runs in a new session (so a new process group): stopping it
reaches every child it spawned. `stop` ends it in three steps under one
deadline: EOF on stdin, then SIGTERM to the group, then SIGKILL to the
group; whatever happened, no member of the group outlives `stop`.

stderr is drained continuously by a task in the session's task group into
a bounded tail (the last lines, for `ProcessExited.stderr`), so a chatty
agent can never block on a full stderr pipe and never costs unbounded
memory.
"""

from __future__ import annotations

import asyncio
import os
import signal
from collections import deque
from collections.abc import Mapping, Sequence

from ..pipeline.errors import AgentGone, CorralError, ErrorKind
from ..pipeline.telemetry import NULL_TELEMETRY, SessionTelemetry

__all__ = ["AgentGone", "AgentProcess", "exit_status", "reaped"]

_READ_SIZE = 256 * 1024
_TAIL_LINES = 40
_TAIL_LINE_BYTES = 2000
_EXIT_POLL = 0.01  # first pause between looks at a return code; it doubles...
_EXIT_POLL_MAX = 0.25  # ...up to this
_KILL_REAP = 5.0  # seconds a SIGKILLed leader may take to be reaped


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
    ) -> None:
        self._process = process
        self._telemetry = telemetry
        self._exit_reported = False
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
    ) -> AgentProcess:
        try:
            process = await asyncio.create_subprocess_exec(
                *argv,
                stdin=asyncio.subprocess.PIPE,
                stdout=asyncio.subprocess.PIPE,
                stderr=asyncio.subprocess.PIPE,
                cwd=cwd,
                env=dict(env),
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
        agent = cls(process, argv, telemetry)
        telemetry.process_started()
        tasks.create_task(agent._drain_stderr(), name=f"stderr-{process.pid}")
        return agent

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
        """The next chunk of stdout; b"" at EOF."""
        stream = self._process.stdout
        assert stream is not None
        return await stream.read(_READ_SIZE)

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
        await reaped(self._process)
        return self._report_exit(self._process.returncode)

    def _report_exit(self, returncode: int | None) -> str:
        status = exit_status(returncode)
        if not self._exit_reported:
            self._exit_reported = True
            self._telemetry.process_exited(status)
        return status

    def _signal_group(self, signum: int) -> bool:
        try:
            os.killpg(self.pid, signum)
        except (ProcessLookupError, PermissionError):
            return False
        return True

    async def _exited_within(self, seconds: float) -> bool:
        return await reaped(self._process, seconds)

    async def stop(self, grace: float) -> str:
        """EOF, then SIGTERM, then SIGKILL to the whole group, within `grace`."""
        self.close_stdin()
        step = grace / 2
        if not await self._exited_within(step):
            self._signal_group(signal.SIGTERM)
            if not await self._exited_within(step):
                self._signal_group(signal.SIGKILL)
                await self._exited_within(_KILL_REAP)
        # The leader is gone; children it left in the group go too.
        self._signal_group(signal.SIGKILL)
        return self._report_exit(self._process.returncode)
