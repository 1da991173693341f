"""The line protocol to the app: one writer, ordered per session.

`LineWriter` owns the output stream. Everything corral writes goes through
it: replies and errors to commands on a small priority channel (a reply is
never stuck behind a backlog of events), session lines on a bounded channel
(when the app reads slowly, sessions wait: backpressure, nothing dropped).
Lines are written in batches, one write per batch. Each channel is bounded
twice: by the count of items and by the bytes they hold (`max_bytes`), so
256 huge lines cannot hold 256 times their size; a single line larger than
the whole bound still passes, alone (see `pipeline/channels.py`). Besides
the channels, the writer holds at most the batch it is writing. At a
shutdown whose app has stopped reading, `discard` lets everything still
queued go nowhere (counted in `bytes_dropped`), so corral can exit.

`LineSink` is one session's stage: it turns that session's records into
lines (events, the session error, the `closed` line) and waits for its
`release` before the first one, so the `open` reply always precedes the
session's events.

A session that crashes inside corral loses its stages mid-stream; the
protocol still owes the app the end of that session. `LineSink.abandon`
writes it, after the last line the sink wrote: its open requests closed,
the running turn's `TurnEnded` (stop `Failed`) and the `Idle` status,
numbered on from the last sequence the app saw (no gap), then the session
error, then `closed`. `SessionTail` is the small record of what was written that makes
this possible; the Python API's stream sink keeps one too.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Sequence
from typing import Any, Protocol

from ..pipeline.channels import Channel, EndOfChannel
from ..pipeline.errors import CorralError
from ..pipeline.events import (
    Event,
    EventKind,
    Failed,
    ReasoningDelta,
    RequestClosed,
    RequestOpened,
    SessionStatus,
    StatusChanged,
    SystemTime,
    TextDelta,
    ToolOutputDelta,
    TurnContext,
    TurnEnded,
    TurnStarted,
)
from ..pipeline.extensions import decision_mark
from ..pipeline.records import Closed, SessionFailed, SinkItem
from ..pipeline.wakeup import Wakeup
from ..pipeline.wire import closed_line, event_line, event_lines, session_error_line

__all__ = ["ByteStream", "LineSink", "LineWriter", "SessionTail"]

_BATCH_BYTES = 256 * 1024
# Kinds that change nothing `SessionTail` keeps but the sequence number.
_PASSING: frozenset[type] = frozenset((TextDelta, ReasoningDelta, ToolOutputDelta))
MAX_HELD_BYTES = 8 * 1024 * 1024  # per channel of the writer


class ByteStream(Protocol):
    async def write(self, data: bytes) -> None:
        """Write all of `data`; raise BrokenPipeError when the reader is gone."""
        ...


class LineWriter:
    def __init__(
        self, stream: ByteStream, *, capacity: int = 256, max_bytes: int = MAX_HELD_BYTES
    ) -> None:
        self._stream = stream
        self.replies: Channel[bytes] = Channel(
            256, name="lines/replies", max_bytes=max_bytes, size=len
        )
        self.lines: Channel[bytes] = Channel(
            capacity, name="lines/sessions", max_bytes=max_bytes, size=len
        )
        self.bytes_written = 0
        self.bytes_dropped = 0  # only after `discard`
        self._discarding = False
        self._writing: asyncio.Task[Any] | None = None  # the task writing, while it writes
        self._readable = Wakeup(self.replies, self.lines)

    async def reply(self, line: bytes) -> None:
        await self.replies.send(line)

    async def line(self, line: bytes) -> None:
        await self.lines.send(line)

    def try_reply(self, line: bytes) -> bool:
        """Queue a reply without waiting; False (and dropped) when the channel is full."""
        return self.replies.try_send(line)

    def close(self) -> None:
        """No more lines; `run` returns once everything queued is written."""
        self.replies.close()
        self.lines.close()

    def _batch(self) -> list[bytes]:
        """Up to a batch's worth of lines, replies first."""
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

    @property
    def busy(self) -> bool:
        """Whether lines wait to be written, or a write is under way."""
        return self._writing is not None or bool(len(self.replies) or len(self.lines))

    def discard(self) -> None:
        """Write no more: drop (and count) every line from now on, the one being
        written included. For a shutdown whose app does not read its output."""
        self._discarding = True
        if self._writing is not None:
            self._writing.cancel()

    async def run(self) -> None:
        while True:
            batch = self._batch()
            if batch:
                await self._write(b"".join(batch))
                continue
            if (
                self.replies.closed
                and self.lines.closed
                and not len(self.replies)
                and not len(self.lines)
            ):
                return
            await self._readable.wait()

    async def _write(self, data: bytes) -> None:
        if self._discarding:
            self.bytes_dropped += len(data)
            return
        # Written from this task, not a task of its own (one fewer per batch):
        # `discard` cancels this task while it writes, and only that cancel
        # is taken back here.
        self._writing = task = asyncio.current_task()
        try:
            await self._stream.write(data)
        except asyncio.CancelledError:
            if not self._discarding or task is None or task.uncancel() > 0:
                raise
            self.bytes_dropped += len(data)
            return
        finally:
            self._writing = None
        self.bytes_written += len(data)


class SessionTail:
    """What one session's consumer has been given: where the stream stands."""

    def __init__(self) -> None:
        self.sequence = 0
        self.turn: TurnContext | None = None  # the running turn
        self.requests: dict[str, TurnContext | None] = {}  # open requests, by id
        self.status = SessionStatus.IDLE
        self.failed = False
        self.closed = False

    def saw(self, item: SinkItem) -> None:
        if type(item) is Event and type(item.kind) in _PASSING:
            self.sequence = item.sequence  # the bulk of a stream: only its number counts
            return
        match item:
            case Event(kind=TurnStarted()):
                self.turn = item.turn_info
            case Event(kind=TurnEnded()):
                self.turn = None
            case Event(kind=RequestOpened(request=request)):
                self.requests[request.id] = item.turn_info
            case Event(kind=RequestClosed(request_id=request_id)):
                self.requests.pop(request_id, None)
            case Event(kind=StatusChanged(status=status)):
                self.status = status
            case SessionFailed():
                self.failed = True
            case Closed():
                self.closed = True
        if isinstance(item, Event):
            self.sequence = item.sequence

    def saw_all(self, batch: Sequence[SinkItem]) -> None:
        """`saw` each item of `batch`, in order; the bulk of a stream costs no call."""
        last: Event | None = None
        for item in batch:
            if type(item) is Event:
                last = item
                if type(item.kind) in _PASSING:
                    continue
            self.saw(item)
        if last is not None:
            self.sequence = last.sequence

    def last_events(self, session_id: str, error: CorralError, at: SystemTime) -> list[Event]:
        """The events that end the stream as the engine would have: open requests
        withdrawn, the running turn ended `Failed`, then `Idle`."""
        if self.closed or self.failed:
            return []
        ending: list[tuple[EventKind, TurnContext | None, dict[str, Any]]] = []
        for request_id, context in self.requests.items():
            decision = {"request_id": request_id, "decision": "cancelled", "decided_by": "shutdown"}
            ending.append((RequestClosed(request_id), context, decision_mark(decision)))
        if self.turn is not None:
            ending.append((TurnEnded(stop=Failed(message=error.message)), self.turn, {}))
        if self.status is not SessionStatus.IDLE:
            ending.append((StatusChanged(status=SessionStatus.IDLE), None, {}))
        events = []
        for kind, context, extensions in ending:
            event = Event(
                sequence=self.sequence + 1,
                session_id=session_id,
                kind=kind,
                occurred_at=at,
                turn_info=context,
                extensions=extensions,
            )
            self.saw(event)
            events.append(event)
        return events


class LineSink:
    name = "lines"

    def __init__(self, writer: LineWriter, release: asyncio.Event) -> None:
        self._writer = writer
        self._release = release
        self.tail = SessionTail()

    async def run(self, items_in: Channel[SinkItem]) -> None:
        await self._release.wait()
        async for batch in items_in.batches():
            # One writer item per batch: the session's lines stay together and
            # in order, and the writer's channel is paid once, not per event.
            lines = _lines(batch)
            if lines:
                await self._writer.line(lines)
            self.tail.saw_all(batch)  # only once written: the tail is what the app has

    async def abandon(self, session_id: str, error: CorralError) -> None:
        """The session crashed inside corral: end its stream after what was written."""
        await self._release.wait()
        tail = self.tail
        if tail.closed:
            return
        at = SystemTime.from_ns(time.time_ns())
        lines = b"".join(event_line(event) for event in tail.last_events(session_id, error, at))
        if not tail.failed:
            lines += session_error_line(session_id, error)
        lines += closed_line(session_id)
        tail.failed = tail.closed = True
        await self._writer.line(lines)


def _lines(batch: Sequence[SinkItem]) -> bytes:
    """The lines of `batch`; a batch of events only (the bulk of a stream) is one
    join of their JSON, with no call per event."""
    events = [item for item in batch if type(item) is Event]
    if len(events) < len(batch):
        return b"".join(_line(item) for item in batch)
    return event_lines(events)


def _line(item: SinkItem) -> bytes:
    match item:
        case Event():
            return event_line(item)
        case SessionFailed(session_id=session_id, error=error):
            return session_error_line(session_id, error)
        case Closed(session_id=session_id):
            return closed_line(session_id)
    return b""
