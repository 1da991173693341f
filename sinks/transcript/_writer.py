"""Records in, transcript lines out: one session's writer (blocking; run in a thread).

`TranscriptWriter.write(items)` takes a batch of a session's records in
order: `Opened` creates the file and writes the header; events, prompts,
decisions and the session error become one line each, redacted first;
`Closed` writes the footer and closes the file. The live sink and the
importer both write through it, so both produce the same format.

Invariants:
- nothing is written before redaction (when on); each changed record is
  marked and the footer counts every replacement;
- a write error leaves the file valid (whole lines only, see `LineFile`)
  and puts the writer in the failed state: later records are counted as
  lost, never written after a gap; the footer, if it can still be written,
  says the transcript is incomplete and why;
- once the file passes `rotate_bytes` at a record boundary it becomes a
  numbered part (gzip-compressed) and a new file continues with a header
  of its own; nothing is deleted.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any, cast

import attrs
import orjson

from ...pipeline.events import (
    ContextUsage,
    Event,
    SystemTime,
    TurnEnded,
    TurnStarted,
)
from ...pipeline.records import Closed, Decision, Opened, Prompted, SessionFailed, SinkItem
from ...pipeline.wire import event_line, event_lines
from ._file import (
    FsyncPolicy,
    IoStats,
    LineFile,
    OsSync,
    OsWrite,
    TranscriptWriteError,
    compress_part,
)
from ._format import encode_item, footer_record, header_record
from ._paths import files_of, part_path
from ._redact import Redaction, Redactor
from ._screen import Screen, Streamed
from ._usage import Usage

__all__ = ["TranscriptWriter", "WriterSettings"]

Json = dict[str, Any]


@attrs.frozen(kw_only=True)
class WriterSettings:
    corral_version: str
    fsync: FsyncPolicy = FsyncPolicy.TURN
    redactor: Redactor | None = attrs.field(factory=Redactor)  # None: --no-redact
    rotate_bytes: int = 64 * 1024 * 1024
    write: OsWrite | None = None  # the OS calls, injectable for tests
    sync: OsSync | None = None
    max_write: int | None = None


@attrs.define
class _Counts:
    events: int = 0
    turns: int = 0
    prompts: int = 0
    decisions: int = 0
    errors: int = 0
    redactions: int = 0
    redacted_records: int = 0
    lost: int = 0
    parts: int = 1
    last_sequence: int = 0
    tokens: int = 0
    cost_usd: float = 0.0

    def to_wire(self) -> Json:
        return attrs.asdict(self)


class TranscriptWriter:
    def __init__(
        self,
        *,
        path: Path,
        transcript_id: str,
        settings: WriterSettings,
        source: Json | None = None,
        now: Callable[[], SystemTime] | None = None,
    ) -> None:
        self.path = path
        self.transcript_id = transcript_id
        self.settings = settings
        self.counts = _Counts()
        self._usage = Usage()  # the footer's tokens and cost, as `transcripts list` sees them
        self.failure: TranscriptWriteError | None = None
        self.created = False  # the file exists, with its header
        self.closed = False
        self._source = source
        self._now = now
        self._header: Json | None = None
        self._screen = None if settings.redactor is None else Screen(settings.redactor)
        self._lock = threading.Lock()  # a cancelled sink may abandon while a write runs
        self._stats = IoStats()  # kept across rotation
        self._file = self._line_file(path)

    def _line_file(self, path: Path) -> LineFile:
        settings = self.settings
        return LineFile(
            path,
            fsync=settings.fsync,
            write=settings.write or os.write,
            sync=settings.sync or os.fsync,
            max_write=settings.max_write,
            stats=self._stats,
        )

    def learn_secrets(self, values: Sequence[str]) -> None:
        """Mask these values (the session's own secrets) too, from the next record on."""
        redactor = self.settings.redactor
        if redactor is None or not values:
            return
        redactor = redactor.knowing(values)
        self.settings = attrs.evolve(self.settings, redactor=redactor)
        self._screen = Screen(redactor)  # what it found clean may hold these

    def take_io(self) -> tuple[int, list[float]]:
        """Bytes written and fsync durations since the last call (for the metrics)."""
        with self._lock:
            return self._stats.take()

    # ---- encoding ---------------------------------------------------------------

    def _line(self, record: Json, found: Redaction | None = None) -> tuple[bytes, int]:
        redactor = self.settings.redactor
        if redactor is None:
            return orjson.dumps(record, option=orjson.OPT_APPEND_NEWLINE), 0
        redaction = found if found is not None else Redaction()
        record, _ = redactor.redact(record, redaction)
        if redaction.total:
            record["redacted"] = redaction.mark()
        return orjson.dumps(record, option=orjson.OPT_APPEND_NEWLINE), redaction.total

    def _event_line(
        self, event: Event, redacted: Streamed | None, scanned: bool | None
    ) -> tuple[bytes, int]:
        """The event's shared encoding (`Event.json`), unless a secret may be in it.

        `redacted`: a delta's text and what was masked in it; `scanned`: whether
        the event may hold a secret, if the batch's screening knows (`Screen.batch`).
        """
        encoded = event.json()
        screen = self._screen
        if screen is None:
            return event_line(event), 0
        text, streamed = (None, None) if redacted is None else redacted
        if not (scanned if scanned is not None else screen.may_hold_more(event, text, encoded)):
            return event_line(event), 0
        record: Json = {"event": event.to_wire()}
        if text is not None:
            next(iter(record["event"]["kind"].values()))["text"] = text
        line, found = self._line(record, streamed)
        if text is None and not found:
            screen.remember(encoded)
        return line, found

    def _count(self, records: Sequence[SinkItem], redactions: Sequence[int]) -> None:
        """Count records written; `redactions`: the replacements made in each, by
        place (empty: none in any)."""
        counts = self.counts
        for found in redactions:
            if found:
                counts.redactions += found
                counts.redacted_records += 1
        last: Event | None = None
        events = 0
        for item in records:
            if type(item) is Event:
                last = item
                events += 1
                kind = type(item.kind)  # exact classes: none has subclasses
                if kind is TurnStarted:
                    counts.turns += 1
                elif kind is ContextUsage:
                    self._usage.add(item)
            elif isinstance(item, Decision):
                counts.decisions += 1
            elif isinstance(item, Prompted):
                counts.prompts += 1
            elif isinstance(item, SessionFailed):
                counts.errors += 1
        if last is not None:
            counts.events += events
            counts.last_sequence = last.sequence
        counts.tokens, counts.cost_usd = self._usage.tokens, self._usage.cost_usd

    # ---- writing ----------------------------------------------------------------

    def write(self, items: Sequence[SinkItem]) -> None:
        """Write a batch in order; raise TranscriptWriteError the first time writing fails."""
        with self._lock:
            self._write(items)

    def _write(self, items: Sequence[SinkItem]) -> None:
        streamed, scanned = self._screen.batch(items) if self._screen is not None else ({}, {})
        clean = _clean_events(items, scanned)
        if clean is not None and self.failure is None and not self.closed:
            # Each is its shared encoding, as `_event_line` writes it: one join for all.
            durable = any(type(event.kind) is TurnEnded for event in clean)
            self._append(clean, [event_lines(clean)], (), durable=durable)
            return
        pending: list[tuple[SinkItem, bytes, int]] = []  # each record, its line, its redactions
        durable = False
        for index, item in enumerate(items):
            if isinstance(item, Event) and self.failure is None and not self.closed:
                line, found = self._event_line(item, streamed.get(index), scanned.get(index))
                pending.append((item, line, found))
                durable = durable or isinstance(item.kind, TurnEnded)
            elif isinstance(item, Opened):
                self._open(item)
            elif isinstance(item, Closed):
                self._flush(pending, durable=True)
                pending, durable = [], False
                self._close(item)
            elif self.failure is not None or self.closed:
                self.counts.lost += 1
            else:
                line, found = self._line(encode_item(item))
                pending.append((item, line, found))
                durable = durable or isinstance(item, SessionFailed)
        self._flush(pending, durable=durable)

    def _flush(self, pending: list[tuple[SinkItem, bytes, int]], *, durable: bool) -> None:
        if pending:
            records, lines, found = zip(*pending, strict=True)
            self._append(records, lines, found, durable=durable)

    def _append(
        self,
        records: Sequence[SinkItem],
        lines: Sequence[bytes],
        redactions: Sequence[int],
        *,
        durable: bool,
    ) -> None:
        """Write `records` as `lines` (one line each, in order), and count them."""
        if self.failure is not None:
            self.counts.lost += len(records)
            return
        if not self._file.is_open:
            raise RuntimeError(f"transcript {self.transcript_id}: a record came before Opened")
        try:
            self._file.append(lines, durable=durable)
        except TranscriptWriteError as error:
            kept = error.kept_lines
            self._count(records[:kept], redactions[:kept])
            self.counts.lost += len(records) - kept
            self.failure = error
            raise
        self._count(records, redactions)
        if self._file.size >= self.settings.rotate_bytes:
            self._rotate()

    def _open(self, opened: Opened) -> None:
        self._header = header_record(
            opened=opened,
            transcript_id=self.transcript_id,
            corral_version=self.settings.corral_version,
            redaction=self.settings.redactor is not None,
            source=self._source,
        )
        line, _ = self._line(self._header)
        try:
            self._file.create(line)
        except TranscriptWriteError as error:
            self.failure = error
            raise
        self.created = True

    def _close(self, closed: Closed) -> None:
        if self.closed:
            return
        self.closed = True
        if not self._file.is_open:
            return
        counts = self.counts.to_wire()
        if self.failure is not None:
            counts["incomplete"] = {"error": str(self.failure), "lost_records": self.counts.lost}
        ended_at = closed.at if self._now is None else self._now()
        line, _ = self._line(footer_record(closed, counts=counts, ended_at=ended_at))
        try:
            self._file.append([line], durable=True)
        except TranscriptWriteError as error:
            if self.failure is None:
                self.failure = error
                raise
        finally:
            self._release()

    def abandon(self) -> None:
        """Close the file without a footer (the next reopen marks it interrupted)."""
        with self._lock:
            self._release()

    def _release(self) -> None:
        try:
            self._file.close(durable=self.failure is None)
        except OSError as error:
            if self.failure is None:
                self.failure = TranscriptWriteError(self.path, error, doing="close")

    def _rotate(self) -> None:
        """The file is full: it becomes part N (gzip), a fresh file continues."""
        assert self._header is not None
        files = files_of(self.path)
        number = files.next_part()
        plain = part_path(self.path, number, gz=False)
        durable = self.settings.fsync is not FsyncPolicy.NEVER
        try:
            self._file.sync()
            self.path.rename(plain)  # our descriptor (and lock) follow the file
            header = {"transcript": {**self._header["transcript"], "part": number}}
            fresh = self._line_file(self.path)
            fresh.create(self._line(header)[0])
            self._file.close(durable=durable)
            self._file = fresh
            self.counts.parts += 1
            compress_part(plain, durable=durable)
        except TranscriptWriteError as error:
            self.failure = error
            raise
        except OSError as error:
            self.failure = TranscriptWriteError(self.path, error, doing="rotate")
            raise self.failure from None


def _clean_events(items: Sequence[SinkItem], scanned: Mapping[int, bool]) -> Sequence[Event] | None:
    """`items`, if each is an event the screen found clean: it gives a verdict to
    events only, so one for every item, none of them suspect."""
    if items and len(scanned) == len(items) and not any(scanned.values()):
        return cast(Sequence[Event], items)
    return None
