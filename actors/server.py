"""`corral serve`: the line protocol between an app and the Runtime.

```
stdin ─► LineSplitter ─► parse_frame ─► one task per command ─► Runtime
                                              │ reply                │ session lines
                                              ▼                      ▼
                                         LineWriter (replies first, then lines) ─► stdout
```

The first line is `hello`. Commands run concurrently; replies may come out
of order. A line that is not a command gets a `BadFrame` error and the loop
goes on. EOF on stdin (or SIGTERM/SIGINT, or the app closing stdout) stops
reading: every session is closed, their `closed` lines written, and the
process exits 0.
"""

from __future__ import annotations

import asyncio
import signal
import sys
from collections.abc import Callable
from typing import Protocol

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

__all__ = ["ByteSource", "Server", "serve"]

MAX_FRAME = 16 * 1024 * 1024


class ByteSource(Protocol):
    async def read(self) -> bytes: ...


class Server:
    def __init__(self, runtime: Runtime, writer: LineWriter) -> None:
        self.runtime = runtime
        self.writer = writer

    async def handle(self, frame_id: int, command: Command) -> None:
        try:
            if isinstance(command, OpenCmd):
                await self._open(frame_id, command)
                return
            value = await self.dispatch(command)
        except CorralError as error:
            await self.writer.reply(error_line(frame_id, error))
            return
        await self.writer.reply(ok_line(frame_id, value))

    async def _open(self, frame_id: int, command: OpenCmd) -> None:
        release = asyncio.Event()
        sink = LineSink(self.writer, release)
        session = await self.runtime.open(command.options, app_sink=sink)
        await self.writer.reply(ok_line(frame_id, session.info()))
        release.set()  # only now may the session's events follow

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
                return await rt.session(sid).configure(option, value)
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
        commands.create_task(self.handle(frame_id, command), name=f"command-{frame_id}")


async def _next_chunk(stdin: ByteSource, shutdown: asyncio.Event) -> bytes | None:
    """The next chunk of input, or None when shutting down."""
    read = asyncio.ensure_future(stdin.read())
    stop = asyncio.ensure_future(shutdown.wait())
    try:
        await asyncio.wait({read, stop}, return_when="FIRST_COMPLETED")
    finally:
        stop.cancel()
    if read.done():
        return read.result()
    read.cancel()
    return None


async def serve(
    *,
    stdin: ByteSource,
    stdout: ByteStream,
    version: str,
    make_runtime: Callable[[], Runtime],
    handle_signals: bool = True,
    metrics: Metrics | None = None,
) -> int:
    shutdown = asyncio.Event()
    loop = asyncio.get_running_loop()
    if handle_signals:
        for signum in (signal.SIGTERM, signal.SIGINT):
            loop.add_signal_handler(signum, shutdown.set)
    if metrics is not None:
        stdout = metrics.count_lines(stdout)  # line-protocol messages by type
    writer = LineWriter(_Guarded(stdout, shutdown))
    try:
        async with asyncio.TaskGroup() as outer:
            outer.create_task(writer.run(), name="line-writer")
            await writer.reply(hello_line(version))
            async with make_runtime() as runtime:
                if metrics is not None:
                    # The Runtime binds its own channels; the line writer's are serve's.
                    metrics.add_channels(lambda: [writer.replies, writer.lines])
                server = Server(runtime, writer)
                splitter = LineSplitter(max_line=MAX_FRAME)
                async with asyncio.TaskGroup() as commands:
                    while (chunk := await _next_chunk(stdin, shutdown)) is not None and chunk:
                        for line in splitter.feed(chunk):
                            await server.submit(line, commands)
                    if chunk == b"":
                        for line in splitter.end():
                            await server.submit(line, commands)
            writer.close()
    finally:
        if handle_signals:
            for signum in (signal.SIGTERM, signal.SIGINT):
                loop.remove_signal_handler(signum)
    return 0


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
