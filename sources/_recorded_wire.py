"""corral's own `--record-wire` files, read back for `corral import` (what every wire shares).

What flows in: a `<transcript id>.wire.jsonl` that `corral serve
--record-wire` wrote beside a session's transcript (`sinks/transcript/
_wire.py`), one line per message: `{"out": <sent>, "at": SystemTime}`,
`{"in": <received>, "at": ...}`, `{"in_text": "<not JSON>"}` (or
`out_text`) and `{"dropped": n}`. What flows out: replay items, made by the
recording's own source (`sources/<name>/_native_wire.py`), a
`RecordedWire` that gets each message in file order through the live
source's translator, so an import of a wire gets what the live session got,
as this corral version normalizes it.

`read_recorded_wire(path, wire)` does what every wire shares:

- a `dropped` line is a Warning `Diagnostic` (lines the recorder lost);
- `in_text` / `out_text` lines (an agent's non-JSON output) replay nothing;
- a line that is not JSON, or not a tagged message (torn, garbled), is a
  Warning `Diagnostic` with its prefix under the wire's raw key, and the
  rest of the file is read as if it were not there: nothing else is lost;
- the app's answer to a permission request, which the source reads off
  corral's reply (`answered`), is an `AnswerSent`, so the request closes
  where and as it did live (the recording cannot tell the app's answer
  from a policy's: a request the import's engine decided itself keeps
  that decision);
- each prompt's turn is acknowledged by the import's replay itself
  (`actors/replay`), so the first `TurnBegan` after each `PromptSent` (the
  wire's mark that the prompt's turn began) is dropped; a turn the agent
  began by itself, with no prompt waiting, keeps its `TurnBegan`.

Which wire a file is: the file has no header; each source's recognizer
knows its handshake (`recorded(value, "out")` reads one tagged message).
`unknown_wire(path)` says what a recording that none of them knows begins
with, for the import's error.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any, Literal, Protocol

import orjson

from ..pipeline.decoding import JsonLinesDecoder, NotJson, Oversized
from ..pipeline.driver import AnswerSent, Emitted, PromptSent, ReplayItem, TurnBegan
from ..pipeline.events import (
    Diagnostic,
    DiagnosticLevel,
    PermissionAnswer,
    PermissionChoice,
    ShapeError,
    SystemTime,
)
from ._kit.problems import ProblemKind, WireProblem

__all__ = [
    "RecordedWire",
    "answered",
    "at_ns",
    "block_text",
    "read_recorded_wire",
    "recorded",
    "unknown_wire",
]

_CHUNK = 256 * 1024
_PEEK_LINES = 40
_TAGS = frozenset({"in", "out", "in_text", "out_text", "dropped"})
Direction = Literal["in", "out"]


class RecordedWire(Protocol):
    """One source's reader of its recorded messages (sans-IO), in file order."""

    @property
    def wire(self) -> str: ...  # what a line should have been: "a tagged Claude Code line"

    @property
    def raw_key(self) -> str: ...  # the extension holding a bad line's prefix

    def sent(self, message: dict[str, Any], at_ns: int | None) -> list[ReplayItem]: ...

    def received(self, message: dict[str, Any]) -> list[ReplayItem]: ...

    def end(self) -> list[ReplayItem]: ...


def recorded(value: Mapping[str, Any], direction: Direction) -> dict[str, Any] | None:
    """The message of one recorded line, if it went that way and is a JSON object."""
    message = value.get(direction)
    return message if isinstance(message, dict) else None


def at_ns(value: Mapping[str, Any]) -> int | None:
    """When the recorder saw the line (its `at`, a SystemTime), in ns since the epoch."""
    try:
        at = SystemTime.from_wire(value.get("at"), "at")
    except ShapeError:
        return None
    return at.secs * 1_000_000_000 + at.nanos


def answered(request_id: object, choice: PermissionChoice | None) -> list[ReplayItem]:
    """The app's answer to a permission request, as corral wrote it (None: not the app's).

    The replay gives it to the engine, which ignores an answer to a request
    that is not open (a policy decided it) or that it does not fit (a question).
    """
    if not isinstance(request_id, str) or choice is None:
        return []
    return [AnswerSent(request_id=request_id, answer=PermissionAnswer(choice))]


def block_text(blocks: object) -> str:
    """A prompt's text from its content blocks (`[{"type": "text", "text": ...}, ...]`)."""
    if isinstance(blocks, str):
        return blocks
    listed = blocks if isinstance(blocks, list) else []
    return "\n".join(
        block["text"]
        for block in listed
        if isinstance(block, dict) and isinstance(block.get("text"), str)
    )


class _Reading:
    """The lines of one file in, the wire's replay items out."""

    def __init__(self, wire: RecordedWire) -> None:
        self._wire = wire
        self._unacknowledged = 0  # prompts whose turn the wire has not said began

    def items(self, line: dict[str, Any] | NotJson | Oversized) -> Iterator[ReplayItem]:
        for item in self._of(line):
            if isinstance(item, PromptSent):
                self._unacknowledged += 1
            elif isinstance(item, TurnBegan) and self._unacknowledged:
                self._unacknowledged -= 1
                continue  # the import's replay acknowledges the prompt's turn itself
            yield item

    def _of(self, line: dict[str, Any] | NotJson | Oversized) -> list[ReplayItem]:
        if isinstance(line, NotJson | Oversized):
            return [self._problem(WireProblem.from_decoder(line))]
        if (sent := recorded(line, "out")) is not None:
            return self._wire.sent(sent, at_ns(line))
        if (received := recorded(line, "in")) is not None:
            return self._wire.received(received)
        if "dropped" in line:
            message = f"the recording lost {line['dropped']} wire lines here (its queue was full)"
            return [Emitted(kind=Diagnostic(level=DiagnosticLevel.WARNING, message=message))]
        if "in_text" in line or "out_text" in line:
            return []
        raw = orjson.dumps(line)[:200].decode(errors="replace")
        reason = "a recorded line without in/out"
        return [self._problem(WireProblem(kind=ProblemKind.BAD_SHAPE, reason=reason, raw=raw))]

    def _problem(self, problem: WireProblem) -> Emitted:
        return problem.event(
            speaker="the recording", wire=self._wire.wire, raw_key=self._wire.raw_key
        )

    def end(self) -> list[ReplayItem]:
        return self._wire.end()


def read_recorded_wire(path: Path, wire: RecordedWire) -> Iterator[ReplayItem]:
    """PromptSent and DriverEvents in wire order; OSError if the file cannot be read."""
    reading = _Reading(wire)
    lines = JsonLinesDecoder()
    with Path(path).open("rb") as handle:
        while chunk := handle.read(_CHUNK):
            for line in lines.feed(chunk):
                yield from reading.items(line)
    for line in lines.end():
        yield from reading.items(line)
    yield from reading.end()


def _peek(path: Path) -> list[dict[str, Any]]:
    lines = JsonLinesDecoder()
    with Path(path).open("rb") as handle:
        found = lines.feed(handle.read(_CHUNK))
    return [line for line in found[:_PEEK_LINES] if isinstance(line, dict)]


def _named(message: Mapping[str, Any]) -> str:
    for key in ("method", "type"):
        if isinstance(message.get(key), str):
            return f"{key} {message[key]!r}"
    return "keys " + ", ".join(sorted(map(str, message))[:6])


def unknown_wire(path: Path) -> str | None:
    """Why a corral wire recording of a wire no reader knows is not imported; None: not one."""
    try:
        values = _peek(path)
    except OSError:
        return None
    if not values or any(not (_TAGS & set(value)) for value in values):
        return None
    first: dict[str, dict[str, Any]] = {}
    for value in values:
        for direction in ("out", "in"):
            if (message := recorded(value, direction)) is not None:
                first.setdefault(direction, message)
    seen = "; ".join(f"first {d} message: {_named(m)}" for d, m in first.items()) or "no messages"
    return f"a corral wire recording (--record-wire) of a wire corral cannot read back ({seen})"
