"""Copilot's own transcripts: `~/.copilot/session-state/<id>/events.jsonl`, replayed.

One persisted `SessionEvent` per line, written by Copilot as the session
runs (ephemeral events, deltas and `session.idle` among them, are not
kept). The reader splits on `\\n` only (strings may hold a raw U+2028 or
U+0085, which `str.splitlines()` would break on), tolerates a torn last
line (a crash mid-write) by reporting it as a Warning `Diagnostic` instead
of failing, and runs every event through the live normalizer.

Turns: each `user.message` is a prompt of the user's, so it becomes
`PromptSent` (with its timestamp) followed by `TurnBegan`; a transcript has
no `session.idle`, so the prompt's turn ends (`TurnFinished`) just before
the next prompt, at `session.shutdown`, or at the end of the file.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from pathlib import Path

from ...pipeline.decoding import JsonLinesDecoder, NotJson, Oversized
from ...pipeline.driver import (
    Emitted,
    ProblemKind,
    PromptSent,
    ReplayItem,
    TurnBegan,
    TurnFinished,
)
from ...pipeline.events import Diagnostic, DiagnosticLevel
from .._timestamps import iso_ns
from ._base import RAW_KEY
from ._normalize import CopilotNormalizer

__all__ = ["TranscriptDecoder", "read_native_transcript", "recognizes_line"]

_CHUNK = 256 * 1024


def _at_ns(event: Mapping[str, object]) -> int | None:
    return iso_ns(event.get("timestamp"))


def _problem(item: NotJson | Oversized, last: bool) -> Emitted:
    kind: str
    if isinstance(item, Oversized):
        message, kind, raw = (
            f"a transcript line of {item.length} bytes was skipped",
            ProblemKind.OVERSIZED,
            "",
        )
    elif last:
        message, kind, raw = (
            "the transcript's last line is torn (cut off mid-write)",
            "torn",
            item.prefix,
        )
    else:
        message, kind, raw = (
            f"a transcript line is not JSON: {item.reason}",
            ProblemKind.NOT_JSON,
            item.prefix,
        )
    note = Diagnostic(level=DiagnosticLevel.WARNING, message=message)
    if kind == "torn":  # a transcript's own problem, not the wire's: outside `ProblemKind`
        return Emitted(kind=note, extensions={RAW_KEY: raw, "corral/decode_error": kind})
    return Emitted(kind=note, problem=ProblemKind(kind), extensions={RAW_KEY: raw})


class _Replay:
    def __init__(self) -> None:
        self.normalizer = CopilotNormalizer()
        self.in_turn = False

    def event(self, event: dict[str, object]) -> Iterator[ReplayItem]:
        kind, data = event.get("type"), event.get("data")
        if kind in ("user.message", "session.shutdown"):
            yield from self.end_turn()
        if kind == "user.message" and isinstance(data, Mapping):
            content = data.get("content")
            yield PromptSent(text=content if isinstance(content, str) else "", at_ns=_at_ns(event))
            yield TurnBegan()
            self.in_turn = True
            return
        for item in self.normalizer.feed(event):
            if isinstance(item, TurnBegan):
                if self.in_turn:
                    continue  # a model call inside the prompt's turn
                self.in_turn = True  # a turn the agent started on its own
            elif isinstance(item, TurnFinished):
                self.in_turn = False
            yield item

    def end_turn(self) -> Iterator[ReplayItem]:
        if self.in_turn:
            self.in_turn = False
            yield self.normalizer.finish_turn()


class TranscriptDecoder:
    """Sans-IO: bytes of an `events.jsonl` in, ReplayItems out; `end()` at EOF."""

    def __init__(self) -> None:
        self._replay = _Replay()
        self._lines = JsonLinesDecoder()

    def feed(self, chunk: bytes) -> list[ReplayItem]:
        out: list[ReplayItem] = []
        for item in self._lines.feed(chunk):
            if isinstance(item, NotJson | Oversized):
                out.append(_problem(item, last=False))
            else:
                out.extend(self._replay.event(item))
        return out

    def end(self) -> list[ReplayItem]:
        out: list[ReplayItem] = []
        for item in self._lines.end():  # a last line without newline: whole, or torn
            if isinstance(item, NotJson | Oversized):
                out.append(_problem(item, last=True))
            else:
                out.extend(self._replay.event(item))
        out.extend(self._replay.end_turn())
        return out


def read_native_transcript(path: str | Path) -> Iterator[ReplayItem]:
    """PromptSent and DriverEvents in file order; OSError if the file cannot be read."""
    decoder = TranscriptDecoder()
    with Path(path).open("rb") as handle:
        while chunk := handle.read(_CHUNK):
            yield from decoder.feed(chunk)
    yield from decoder.end()


def recognizes_line(value: Mapping[str, object], path: Path) -> bool:
    """Whether one of a file's first lines is a `SessionEvent`: a dotted type, data, an id."""
    kind = value.get("type")
    return isinstance(kind, str) and "." in kind and "data" in value and "id" in value
