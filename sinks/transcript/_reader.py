"""Reading transcripts back, and repairing the ones a crash left open.

Reading joins a transcript's parts in order and splits each on `\\n` only
(a U+2028 inside a JSON string is text, not a line break). Whatever is
after the last `\\n` of the newest file is a torn line: a writer died in
the middle of it. It is never returned as a record; the reader reports it.
Every other line that is not a known record, and every jump in the event
sequence, is reported as a `Problem` with its file and line number:
damage is shown, never hidden.

`repair` is what reopening a transcript does when nobody is writing it
(the writer's lock is free) and it has no footer: the torn line is cut
(and counted in a `repair` record), then a footer with reason
`interrupted` closes it. A transcript still being written is left alone.
"""

from __future__ import annotations

import errno
import gzip
import os
import sys
import time
import zlib
from pathlib import Path

import attrs
import orjson

from ...pipeline.events import Event, SystemTime, TurnStarted
from ._format import (
    DecisionRecord,
    EventRecord,
    Footer,
    Header,
    PromptRecord,
    Record,
    RepairRecord,
    decode_record,
)
from ._paths import TranscriptFiles

if sys.platform != "win32":  # POSIX-only; `corral --help` must import anywhere
    import fcntl

__all__ = ["Problem", "Transcript", "is_live", "read_transcript", "repair", "split_lines"]


@attrs.frozen(kw_only=True)
class Problem:
    file: str
    line: int  # 1-based; 0 for the file as a whole
    problem: str

    def __str__(self) -> str:
        where = f"{self.file}:{self.line}" if self.line else self.file
        return f"{where}: {self.problem}"


@attrs.define(kw_only=True)
class Transcript:
    files: TranscriptFiles
    header: Header | None = None
    records: list[Record] = attrs.field(factory=list)  # after the header, parts joined
    footer: Footer | None = None
    torn_bytes: int = 0  # an unfinished last line, still on disk
    problems: list[Problem] = attrs.field(factory=list)

    @property
    def transcript_id(self) -> str:
        return self.files.transcript_id

    def events(self) -> list[Event]:
        return [r.event for r in self.records if isinstance(r, EventRecord)]

    @property
    def torn_lines_cut(self) -> int:
        return sum(r.torn_lines for r in self.records if isinstance(r, RepairRecord))

    @property
    def turns(self) -> int:
        return sum(isinstance(e.kind, TurnStarted) for e in self.events())


def split_lines(data: bytes) -> tuple[list[bytes], bytes]:
    """Complete lines (without `\\n`) and the torn rest after the last `\\n`."""
    *lines, rest = data.split(b"\n")
    return lines, rest


def _load(path: Path) -> bytes:
    if path.name.endswith(".gz"):
        with gzip.open(path, "rb") as packed:
            return packed.read()
    return path.read_bytes()


def read_transcript(files: TranscriptFiles) -> Transcript:
    transcript = Transcript(files=files)
    paths = files.all()
    if not paths:
        transcript.problems.append(Problem(file=str(files.active), line=0, problem="no files"))
    expected = 1
    for index, path in enumerate(paths):
        try:
            data = _load(path)
        except (OSError, EOFError, zlib.error) as error:
            transcript.problems.append(
                Problem(file=str(path), line=0, problem=f"unreadable: {error}")
            )
            continue
        lines, rest = split_lines(data)
        if rest:
            if index == len(paths) - 1:
                transcript.torn_bytes = len(rest)
            else:
                transcript.problems.append(
                    Problem(file=str(path), line=len(lines) + 1, problem="part ends mid-line")
                )
        expected = _read_lines(transcript, path, lines, expected)
    return transcript


def _read_lines(transcript: Transcript, path: Path, lines: list[bytes], expected: int) -> int:
    for number, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            record = decode_record(orjson.loads(line))
        except ValueError as error:  # orjson.JSONDecodeError is a ValueError
            problem = Problem(file=str(path), line=number, problem=f"damaged record: {error}")
            transcript.problems.append(problem)
            continue
        if transcript.footer is not None and not isinstance(record, Header):
            transcript.problems.append(
                Problem(file=str(path), line=number, problem="record after the footer")
            )
        match record:
            case Header():
                if transcript.header is None:
                    transcript.header = record
                continue  # a part's own header repeats the first one
            case Footer():
                transcript.footer = record
            case EventRecord(event=event):
                if event.sequence != expected:
                    transcript.problems.append(
                        Problem(
                            file=str(path),
                            line=number,
                            problem=f"sequence jumps from {expected - 1} to {event.sequence}",
                        )
                    )
                expected = event.sequence + 1
        transcript.records.append(record)
    return expected


def is_live(files: TranscriptFiles) -> bool:
    """True while a writer holds the transcript's lock."""
    try:
        fd = os.open(files.active, os.O_RDONLY | os.O_CLOEXEC)
    except OSError:
        return False
    try:
        fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
    except BlockingIOError:
        return True
    finally:
        os.close(fd)
    return False


@attrs.frozen(kw_only=True)
class RepairReport:
    path: Path
    cut_bytes: int
    footer_added: bool


def repair(files: TranscriptFiles, *, now_ns: int | None = None) -> RepairReport | None:
    """Cut a torn last line and close an unfinished transcript; None if nothing to do.

    Returns None as well while a writer holds the lock. OSError when the
    archive cannot be written (reading still works, reporting the damage).
    """
    path = files.active
    if not path.exists():
        return None  # a crash right after rotation: the parts are read as they are
    fd = os.open(path, os.O_RDWR | os.O_CLOEXEC)
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError as error:
            if error.errno in (errno.EWOULDBLOCK, errno.EAGAIN):
                return None  # a live writer owns it
            raise
        return _repair_locked(fd, files, now_ns if now_ns is not None else time.time_ns())
    finally:
        os.close(fd)


def _repair_locked(fd: int, files: TranscriptFiles, now_ns: int) -> RepairReport | None:
    transcript = read_transcript(files)
    if transcript.footer is not None and not transcript.torn_bytes:
        return None
    size = os.fstat(fd).st_size
    cut = transcript.torn_bytes
    if cut:
        os.ftruncate(fd, size - cut)
    at = SystemTime.from_ns(now_ns).to_wire()
    lines: list[dict[str, object]] = []
    if cut:
        lines.append({"repair": {"cut_bytes": cut, "torn_lines": 1, "at": at}})
    if transcript.footer is None and transcript.header is not None:
        lines.append({"footer": _interrupted_footer(transcript, at, torn=1 if cut else 0)})
    data = b"".join(orjson.dumps(line, option=orjson.OPT_APPEND_NEWLINE) for line in lines)
    os.lseek(fd, 0, os.SEEK_END)
    while data:
        data = data[os.write(fd, data) :]
    os.fsync(fd)
    return RepairReport(path=files.active, cut_bytes=cut, footer_added=transcript.footer is None)


def _interrupted_footer(transcript: Transcript, at: object, *, torn: int) -> dict[str, object]:
    events = transcript.events()
    return {
        "session": None if transcript.header is None else transcript.header.session_id,
        "reason": "interrupted",
        "ended_at": at,
        "events": len(events),
        "turns": transcript.turns,
        "prompts": sum(isinstance(r, PromptRecord) for r in transcript.records),
        "decisions": sum(isinstance(r, DecisionRecord) for r in transcript.records),
        "last_sequence": events[-1].sequence if events else 0,
        "torn_lines_cut": transcript.torn_lines_cut + torn,
    }
