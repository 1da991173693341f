"""The transcript sink: one session's records to its file, off the event loop.

```
sink channel ─► TranscriptSink.run ─(batch)─► worker thread: TranscriptWriter.write ─► file
```

`run` takes what is waiting in its channel as one batch and hands it to a
worker thread (the archive's `DiskWorker`, which takes every sink's pending
batch in one round; alone, the loop's default executor); it takes the next
batch only when that write returned. A
slow disk therefore fills the sink's channel, which stops the fan-out, the
engine and the agent: backpressure, nothing dropped.

Handing a batch to the thread and back costs far more than writing one
record (~0.2 ms of CPU on a cloud VM, where waking a thread is dear), so a
small batch lingers (`linger`, 5 ms by default) for more records to join
it. A batch that ends a turn or the session goes at once: that is where
the writer makes the file durable, and where a reader looks.

After each batch the bytes written and the time spent in fsync go to the
metrics, when there are any (`TranscriptMetrics`: a `sinks.metrics.Metrics`
fits), from the event loop.

When writing fails (disk full, directory not writable, I/O error) the
records already on disk stay valid, the sink goes on draining its channel
(so the session is never stalled by a dead disk) and counts what it could
not keep, and every failure listener hears about it once: the archive
prints it on stderr, and the session actor (through `on_failure`) turns it
into an Error `Diagnostic` the app sees. `caught_up(n)` lets the actor wait,
before the session's last records, until the first n records are handled,
so a failure on the session's last events still reaches the app.

A channel that ends without `Closed` (the session crashed inside corral)
leaves the file without a footer; the next reopen marks it interrupted.
"""

from __future__ import annotations

import asyncio
import functools
from collections.abc import Callable, Mapping
from typing import Protocol, TypeVar

from ...pipeline.channels import Channel, EndOfChannel
from ...pipeline.events import Event, TurnEnded
from ...pipeline.records import Closed, SessionFailed, SinkItem
from ._file import TranscriptWriteError
from ._worker import DiskWorker
from ._writer import TranscriptWriter

__all__ = ["FailureReport", "TranscriptMetrics", "TranscriptSink"]

FailureReport = Callable[[str, str, Mapping[str, object]], None]
"""(sink name, human message, fields) — how a sink tells the session it failed."""


class TranscriptMetrics(Protocol):
    """What the sink reports to (`sinks.metrics.Metrics` has all three)."""

    def transcript_written(self, nbytes: int) -> None: ...

    def transcript_fsynced(self, seconds: float) -> None: ...

    def sink_error(self, sink: str) -> None: ...


T = TypeVar("T")
_BATCH = 512
_FULL_ENOUGH = 64  # a batch this large goes without lingering


class TranscriptSink:
    name = "transcript"

    def __init__(
        self,
        writer: TranscriptWriter,
        *,
        session_id: str,
        worker: DiskWorker | None = None,
        on_closed: Callable[[str], None] | None = None,
        metrics: TranscriptMetrics | None = None,
        linger: float = 0.005,
    ) -> None:
        self.writer = writer
        self._linger = linger
        self._metrics = metrics
        self._handled = 0  # records taken from the channel and written (or counted lost)
        self._over = False
        self._progress = asyncio.Event()
        self.session_id = session_id
        self.failure: TranscriptWriteError | None = None
        self._worker = worker
        self._listeners: list[FailureReport] = []
        self._on_closed = on_closed

    @property
    def transcript_id(self) -> str:
        return self.writer.transcript_id

    def on_failure(self, report: FailureReport) -> None:
        """Register a listener, called once, in the event loop, if writing fails."""
        self._listeners.append(report)
        if self.failure is not None:
            report(self.name, self._message(self.failure), self._fields(self.failure))

    async def caught_up(self, count: int) -> None:
        """Return once the first `count` records are handled (or the sink has ended)."""
        while self._handled < count and not self._over:
            await self._progress.wait()

    def _advance(self, handled: int) -> None:
        self._handled += handled
        progressed, self._progress = self._progress, asyncio.Event()
        progressed.set()

    async def _off_loop(self, call: Callable[[], T]) -> T:
        if self._worker is not None:
            return await self._worker.run(call)
        return await asyncio.get_running_loop().run_in_executor(None, call)

    async def run(self, items_in: Channel[SinkItem]) -> None:
        try:
            while True:
                try:
                    batch = await items_in.receive_batch(_BATCH)
                except EndOfChannel:
                    return
                if self._linger > 0 and len(batch) < _FULL_ENOUGH and not _ends_a_turn(batch):
                    await asyncio.sleep(self._linger)
                    batch += items_in.take_ready(_BATCH - len(batch))
                try:
                    await self._off_loop(functools.partial(self.writer.write, batch))
                except TranscriptWriteError as error:
                    self._failed(error)
                self._report_io()
                self._advance(len(batch))
        finally:
            self._over = True
            self._advance(0)
            if not self.writer.closed:
                await asyncio.shield(self._off_loop(self.writer.abandon))
            if self._on_closed is not None:
                self._on_closed(self.session_id)

    def _report_io(self) -> None:
        if self._metrics is None:
            return
        written, fsyncs = self.writer.take_io()
        if written:
            self._metrics.transcript_written(written)
        for seconds in fsyncs:
            self._metrics.transcript_fsynced(seconds)

    def _failed(self, error: TranscriptWriteError) -> None:
        if self.failure is not None:
            return
        self.failure = error
        if self._metrics is not None:
            self._metrics.sink_error(self.name)
        message, fields = self._message(error), self._fields(error)
        for report in self._listeners:
            report(self.name, message, fields)

    def _message(self, error: TranscriptWriteError) -> str:
        if not self.writer.created:
            return (
                f"the transcript of session {self.session_id} could not be created: {error}; "
                "the session is not kept"
            )
        last = self.writer.counts.last_sequence
        return (
            f"the transcript of session {self.session_id} stopped: {error}; "
            f"it is valid up to event {last}, later records are not kept"
        )

    def _fields(self, error: TranscriptWriteError) -> dict[str, object]:
        return {
            "transcript": self.writer.transcript_id,
            "path": str(error.path),
            "errno": error.errno,
            "reason": error.reason,
            "last_sequence": self.writer.counts.last_sequence,
        }


def _ends_a_turn(batch: list[SinkItem]) -> bool:
    for item in batch:
        if isinstance(item, Closed | SessionFailed) or (
            isinstance(item, Event) and isinstance(item.kind, TurnEnded)
        ):
            return True
    return False
