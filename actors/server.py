"""`corral serve`: the line protocol between an app and the Runtime.

```
stdin ─► LineSplitter ─► parse_frame ─► one task per command ─► Runtime
            ▲                                 │ reply                │ session lines
            └─ waits while 1024 commands run  ▼                      ▼
                                         LineWriter (replies first, then lines) ─► stdout
```

The first line is `hello`. Commands run concurrently; replies may come out
of order. A line that is not a command gets a `BadFrame` error and the loop
goes on. stdin is read only as fast as commands are answered: while
`max_in_flight` commands run, corral reads nothing more, so an app that
floods commands and does not read its replies fills the pipe and waits;
memory stays bounded.

Shutdown: EOF on stdin, SIGTERM/SIGINT, or the app closing stdout. Reading
stops; every live session is closed at once (its agent gets the close
grace: EOF, SIGTERM, SIGKILL). Commands still running get a short `drain`
to finish (an `open` read just before EOF completes, and its session is
closed too); then they are cancelled and answered with an error: an `open`
whose handshake is in flight is abandoned and its agent stopped, a
`generate` or an `answer` still waiting is withdrawn. Every opened session
writes its `closed`; the process exits within the close grace plus the
drain, whatever the agents do: 0, or 130 after SIGINT (Ctrl-C).
"""

from __future__ import annotations

import asyncio
import signal
import sys
from collections.abc import Awaitable, Callable
from typing import Protocol, TypeVar

import attrs

from ..pipeline.commands import (
    AnswerCmd,
    CancelCmd,
    CloseCmd,
    Command,
    CompactCmd,
    ConfigureCmd,
    DequeueCmd,
    DiscoverCmd,
    GenerateCmd,
    InfoCmd,
    OpenCmd,
    PlanUsageCmd,
    ProbeCmd,
    PromptCmd,
    RollbackCmd,
)
from ..pipeline.errors import CorralError, ErrorKind
from ..pipeline.framing import LineSplitter, Oversized
from ..pipeline.wire import FrameError, error_line, hello_line, ok_line, parse_frame
from ..sinks.lines import ByteStream, LineSink, LineWriter
from ..sinks.metrics import Metrics
from .runtime import Runtime

__all__ = ["ByteSource", "ServeSettings", "Server", "serve"]

MAX_FRAME = 16 * 1024 * 1024
EXIT_INTERRUPTED = 130  # 128 + SIGINT, the shell's convention for Ctrl-C
T = TypeVar("T")


class ByteSource(Protocol):
    async def read(self) -> bytes: ...


@attrs.frozen(kw_only=True)
class ServeSettings:
    max_in_flight: int = 1024  # commands running at once; past that, stdin waits
    drain: float = 0.5  # at shutdown, what running commands get before they are cancelled

    def __attrs_post_init__(self) -> None:
        if self.max_in_flight < 1:
            raise ValueError(f"max_in_flight must be at least 1, not {self.max_in_flight}")


def _shutting_down() -> CorralError:
    return CorralError(
        ErrorKind.SESSION_CLOSED, "corral is shutting down; the command was abandoned"
    )


def _not_run() -> CorralError:
    return CorralError(ErrorKind.SESSION_CLOSED, "corral is shutting down; the command was not run")


class Server:
    def __init__(
        self, runtime: Runtime, writer: LineWriter, settings: ServeSettings | None = None
    ) -> None:
        self.runtime = runtime
        self.writer = writer
        self.settings = settings if settings is not None else ServeSettings()
        self._slots = asyncio.Semaphore(self.settings.max_in_flight)
        self.running: set[asyncio.Task[None]] = set()

    async def handle(self, frame_id: int, command: Command) -> None:
        """Run one command and write its one reply; holds a slot until then."""
        try:
            try:
                if isinstance(command, OpenCmd):
                    await self._open(frame_id, command)
                    return
                value = await self.dispatch(command)
            except CorralError as error:
                await self.writer.reply(error_line(frame_id, error))
                return
            except asyncio.CancelledError:
                # Abandoned at shutdown; the app still gets its one reply.
                await self.writer.reply(error_line(frame_id, _shutting_down()))
                raise
            await self.writer.reply(ok_line(frame_id, value))
        finally:
            self._slots.release()

    async def _open(self, frame_id: int, command: OpenCmd) -> None:
        release = asyncio.Event()
        sink = LineSink(self.writer, release)
        try:
            session = await self.runtime.open(command.options, app_sink=sink)
            await self.writer.reply(ok_line(frame_id, session.info()))
        finally:
            release.set()  # only now may the session's events (or its end) follow

    async def dispatch(self, command: Command) -> object:
        rt = self.runtime
        match command:
            case DiscoverCmd():
                return await rt.discover()
            case ProbeCmd(agent=agent):
                return await rt.probe(agent)
            case PlanUsageCmd(agent=agent):
                return await rt.plan_usage(agent)
            case GenerateCmd(options=options, prompt=prompt):
                return await rt.generate(options, prompt)  # the text; its session stays unseen
            case PromptCmd(session=sid, text=text, attachments=attachments):
                return await rt.session(sid).prompt(text, attachments)
            case DequeueCmd(session=sid, prompt=prompt_id):
                await rt.session(sid).dequeue(prompt_id)
            case AnswerCmd(session=sid, request=request_id, answer=answer):
                await rt.session(sid).answer(request_id, answer)
            case ConfigureCmd(session=sid, option=option, value=value):
                # The protocol's client expects null: the confirmation is SessionUpdated.
                await rt.session(sid).configure(option, value)
            case RollbackCmd(session=sid, turns=turns, scope=scope):
                await rt.session(sid).rollback(turns, scope)
            case CompactCmd(session=sid):
                await rt.session(sid).compact()
            case CancelCmd(session=sid, clear_queue=clear_queue):
                await rt.session(sid).cancel(clear_queue)
            case InfoCmd(session=sid):
                return rt.session(sid).info()
            case CloseCmd(session=sid):
                await rt.session(sid).close()
            case OpenCmd():
                raise AssertionError("open is handled by Server.handle")
        return None

    async def submit(self, line: bytes | Oversized, commands: asyncio.TaskGroup) -> None:
        """Start the command on `line` (once a slot is free) or answer why it is not one."""
        if isinstance(line, Oversized):
            error = CorralError(
                ErrorKind.BAD_FRAME, f"a line of {line.length} bytes exceeds {MAX_FRAME} bytes"
            )
            await self.writer.reply(error_line(None, error))
            return
        if not line.strip():
            return
        try:
            frame_id, command = parse_frame(line)
        except FrameError as error:
            await self.writer.reply(error_line(error.frame_id, error))
            return
        await self._slots.acquire()  # released by `handle` once the reply is queued
        task = commands.create_task(self.handle(frame_id, command), name=f"command-{frame_id}")
        self.running.add(task)
        task.add_done_callback(self.running.discard)

    async def read_commands(
        self, stdin: ByteSource, shutdown: asyncio.Event, commands: asyncio.TaskGroup
    ) -> None:
        """Until EOF or shutdown: read lines, start their commands.

        Commands read but not yet started when a shutdown arrives (they were
        waiting for a slot) are answered with an error, never run.
        """
        splitter = LineSplitter(max_line=MAX_FRAME)
        while True:
            chunk = await _unless(shutdown, stdin.read())
            if chunk is None:
                return
            lines = splitter.feed(chunk) if chunk else splitter.end()
            for index, line in enumerate(lines):
                if self._slots.locked() and await _unless(shutdown, self._free_slot()) is None:
                    self._refuse(lines[index:])
                    return
                await self.submit(line, commands)
            if not chunk:
                return

    def _refuse(self, lines: list[bytes | Oversized]) -> None:
        """Answer commands that will not run; without waiting (the app may not read)."""
        for line in lines:
            if isinstance(line, Oversized) or not line.strip():
                continue
            try:
                frame_id, _ = parse_frame(line)
            except FrameError as error:
                self.writer.try_reply(error_line(error.frame_id, error))
                continue
            self.writer.try_reply(error_line(frame_id, _not_run()))

    async def _free_slot(self) -> bool:
        """Once a command slot is free (left free: only this reader takes them)."""
        await self._slots.acquire()
        self._slots.release()
        return True

    async def wind_down(self) -> None:
        """Close the live sessions while running commands drain; cancel the rest."""
        async with asyncio.TaskGroup() as closing:
            for session in self.runtime.sessions():
                closing.create_task(session.close(), name=f"close-{session.id}")
            if self.running:
                await asyncio.wait(self.running, timeout=self.settings.drain)
            for task in list(self.running):
                task.cancel()  # each still writes its reply (an error)
            if self.running:
                await asyncio.wait(self.running)


async def _unless(shutdown: asyncio.Event, work: Awaitable[T]) -> T | None:
    """`work`'s result, or None (and `work` cancelled) once `shutdown` is set first."""
    if shutdown.is_set():
        if asyncio.iscoroutine(work):
            work.close()
        return None
    doing = asyncio.ensure_future(work)
    stop = asyncio.ensure_future(shutdown.wait())
    try:
        await asyncio.wait({doing, stop}, return_when="FIRST_COMPLETED")
    finally:
        stop.cancel()
    if doing.done():
        return doing.result()
    doing.cancel()
    try:
        return await doing  # it may have finished as it was being cancelled
    except asyncio.CancelledError:
        current = asyncio.current_task()
        if current is not None and current.cancelling():
            raise  # this task's own cancellation, not only the one asked of `work`
        return None


async def serve(
    *,
    stdin: ByteSource,
    stdout: ByteStream,
    version: str,
    make_runtime: Callable[[], Runtime],
    handle_signals: bool = True,
    metrics: Metrics | None = None,
    settings: ServeSettings | None = None,
) -> int:
    shutdown = asyncio.Event()
    loop = asyncio.get_running_loop()
    interrupted = False

    def on_signal(signum: int) -> None:
        nonlocal interrupted
        interrupted = interrupted or signum == signal.SIGINT
        shutdown.set()

    if handle_signals:
        for signum in (signal.SIGTERM, signal.SIGINT):
            loop.add_signal_handler(signum, on_signal, signum)
    if metrics is not None:
        stdout = metrics.count_lines(stdout)  # line-protocol messages by type
    writer = LineWriter(_Guarded(stdout, shutdown))
    try:
        async with asyncio.TaskGroup() as outer:
            writing = outer.create_task(writer.run(), name="line-writer")
            await writer.reply(hello_line(version))
            async with make_runtime() as runtime:
                if metrics is not None:
                    # The Runtime binds its own channels; the line writer's are serve's.
                    metrics.add_channels(lambda: [writer.replies, writer.lines])
                server = Server(runtime, writer, settings)
                async with asyncio.TaskGroup() as commands:
                    await server.read_commands(stdin, shutdown, commands)
                    grace = runtime.settings.actor.close_grace
                    watchdog = outer.create_task(_watch_output(writer, grace), name="watchdog")
                    await server.wind_down()
            writer.close()
            await asyncio.wait({writing})  # all written (or dropped); not cancelling it
            watchdog.cancel()
    finally:
        if handle_signals:
            for signum in (signal.SIGTERM, signal.SIGINT):
                loop.remove_signal_handler(signum)
    # Ctrl-C is a clean shutdown too, but says it was interrupted (as every command does).
    return EXIT_INTERRUPTED if interrupted else 0


async def _watch_output(writer: LineWriter, grace: float) -> None:
    """During shutdown: an app that takes nothing for a whole `grace` loses the rest.

    Otherwise a shutdown would wait forever on an app that stopped reading
    (its pipe full, every session's last lines stuck behind it).
    """
    while True:
        written = writer.bytes_written
        await asyncio.sleep(grace)
        if writer.busy and writer.bytes_written == written:
            writer.discard()
            print(
                f"corral: the app read nothing for {grace:g} s while shutting down; "
                "the rest of the output is dropped",
                file=sys.stderr,
            )
            return


class _Guarded:
    """stdout that, once the app has gone, starts the shutdown and drops output."""

    def __init__(self, stream: ByteStream, shutdown: asyncio.Event) -> None:
        self._stream = stream
        self._shutdown = shutdown
        self.broken = False

    async def write(self, data: bytes) -> None:
        if self.broken:
            return
        try:
            await self._stream.write(data)
        except BrokenPipeError:
            self.broken = True
            self._shutdown.set()
            print("corral: the app closed its end of stdout; shutting down", file=sys.stderr)
