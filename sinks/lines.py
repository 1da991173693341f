"""The line protocol to the app: one writer, ordered per session.

`LineWriter` owns the output stream. Everything corral writes goes through
it: replies and errors to commands on a small priority channel (a reply is
never stuck behind a backlog of events), session lines on a bounded channel
(when the app reads slowly, sessions wait: backpressure, nothing dropped).
Lines are written in batches, one write per batch.

`LineSink` is one session's stage: it turns that session's records into
lines (events, the session error, the `closed` line) and waits for its
`release` before the first one, so the `open` reply always precedes the
session's events.
"""

from __future__ import annotations

import asyncio
from typing import Protocol

from ..pipeline.channels import Channel, EndOfChannel
from ..pipeline.events import Event
from ..pipeline.records import Closed, SessionFailed, SinkItem
from ..pipeline.wire import closed_line, event_line, session_error_line

__all__ = ["ByteStream", "LineSink", "LineWriter"]

_BATCH_BYTES = 256 * 1024


class ByteStream(Protocol):
    async def write(self, data: bytes) -> None:
        """Write all of `data`; raise BrokenPipeError when the reader is gone."""
        ...


class LineWriter:
    def __init__(self, stream: ByteStream, *, capacity: int = 256) -> None:
        self._stream = stream
        self.replies: Channel[bytes] = Channel(256, name="lines/replies")
        self.lines: Channel[bytes] = Channel(capacity, name="lines/sessions")
        self.bytes_written = 0

    async def reply(self, line: bytes) -> None:
        await self.replies.send(line)

    async def line(self, line: bytes) -> None:
        await self.lines.send(line)

    def close(self) -> None:
        """No more lines; `run` returns once everything queued is written."""
        self.replies.close()
        self.lines.close()

    def _batch(self) -> list[bytes]:
        batch: list[bytes] = []
        size = 0
        for source in (self.replies, self.lines):
            while size < _BATCH_BYTES:
                try:
                    line = source.try_receive()
                except EndOfChannel:
                    break
                if line is None:
                    break
                batch.append(line)
                size += len(line)
        return batch

    async def run(self) -> None:
        while True:
            batch = self._batch()
            if batch:
                data = b"".join(batch)
                await self._stream.write(data)
                self.bytes_written += len(data)
                continue
            if (
                self.replies.closed
                and self.lines.closed
                and not len(self.replies)
                and not len(self.lines)
            ):
                return
            await self._wait_readable()

    async def _wait_readable(self) -> None:
        waiter: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self.replies.watch(waiter)
        self.lines.watch(waiter)
        try:
            await waiter
        finally:
            waiter.cancel()  # a no-op once resolved
            self.replies.unwatch(waiter)
            self.lines.unwatch(waiter)


class LineSink:
    name = "lines"

    def __init__(self, writer: LineWriter, release: asyncio.Event) -> None:
        self._writer = writer
        self._release = release

    async def run(self, items_in: Channel[SinkItem]) -> None:
        await self._release.wait()
        async for batch in items_in.batches():
            # One writer item per batch: the session's lines stay together and
            # in order, and the writer's channel is paid once, not per event.
            lines = b"".join(_line(item) for item in batch)
            if lines:
                await self._writer.line(lines)


def _line(item: SinkItem) -> bytes:
    match item:
        case Event():
            return event_line(item)
        case SessionFailed(session_id=session_id, error=error):
            return session_error_line(session_id, error)
        case Closed(session_id=session_id):
            return closed_line(session_id)
    return b""
