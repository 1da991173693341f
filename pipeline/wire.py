"""The line protocol codec: frames in, lines out, as bytes.

Input: one line of bytes from the app becomes `(id, Command)` or a
`FrameError` that carries the id when one could be read (so the BadFrame
reply can name it). Output: each kind of line the schema's `Line` allows,
encoded with orjson and terminated by `\\n`. Nothing here does I/O.

The other direction, for clients of `corral serve` (and tests): `Line` is
the closed union of what corral writes (`Hello`, `OkReply`, `ErrorReply`,
`EventLine`, `SessionErrorLine`, `ClosedLine`), read by `line_from_wire`
(or `read_line` from bytes) and written by each variant's `to_wire`. The
`*_line` encoders below write exactly `to_wire` of the matching variant.
An `ok` value stays JSON: its type depends on the command it answers.
The schema's `Line` is untagged; a variant is known by its keys, and a
`session` key makes an `error` the session's, not a reply's.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import attrs
import orjson

from .commands import Command, Frame
from .errors import CorralError, ErrorBody, ErrorKind
from .events import Event, Fields, ShapeError

__all__ = [
    "PROTOCOL_VERSION",
    "ClosedLine",
    "ErrorReply",
    "EventLine",
    "FrameError",
    "Hello",
    "Line",
    "OkReply",
    "SessionErrorLine",
    "closed_line",
    "encode_value",
    "error_line",
    "event_line",
    "event_lines",
    "hello_line",
    "line_from_wire",
    "ok_line",
    "parse_frame",
    "read_line",
    "session_error_line",
]

PROTOCOL_VERSION = 1


class FrameError(CorralError):
    """A line from the app that is not a valid command (BadFrame)."""

    def __init__(self, message: str, frame_id: int | None) -> None:
        super().__init__(ErrorKind.BAD_FRAME, message)
        self.frame_id = frame_id


def parse_frame(line: bytes) -> tuple[int, Command]:
    try:
        raw = orjson.loads(line)
    except orjson.JSONDecodeError as error:
        raise FrameError(f"not JSON: {error}", None) from None
    if not isinstance(raw, dict):
        raise FrameError("a frame must be a JSON object", None)
    frame_id = raw.get("id")
    if isinstance(frame_id, bool) or not isinstance(frame_id, int) or frame_id < 0:
        raise FrameError('a frame needs an "id": a non-negative integer', None)
    try:
        frame = Frame.from_wire(raw)
    except ShapeError as error:
        raise FrameError(str(error), frame_id) from None
    return frame.id, frame.command


def encode_value(value: object) -> Any:
    """A reply value as JSON: model objects through `to_wire`, the rest as is."""
    to_wire = getattr(value, "to_wire", None)
    return value if to_wire is None else to_wire()


@attrs.frozen(kw_only=True)
class Hello:
    protocol: int
    anyagent: str  # the corral version

    def to_wire(self) -> dict[str, object]:
        return {"hello": {"protocol": self.protocol, "anyagent": self.anyagent}}


@attrs.frozen(kw_only=True)
class OkReply:
    id: int
    value: Any  # JSON; what it holds depends on the command answered

    def to_wire(self) -> dict[str, object]:
        return {"id": self.id, "ok": self.value}


@attrs.frozen(kw_only=True)
class ErrorReply:
    id: int | None  # None: the frame's id could not be read
    error: ErrorBody

    def to_wire(self) -> dict[str, object]:
        return {"id": self.id, "error": self.error.to_wire()}


@attrs.frozen
class EventLine:
    event: Event

    def to_wire(self) -> dict[str, object]:
        return {"event": self.event.to_wire()}


@attrs.frozen(kw_only=True)
class SessionErrorLine:
    session: str
    error: ErrorBody  # terminal for the session

    def to_wire(self) -> dict[str, object]:
        return {"session": self.session, "error": self.error.to_wire()}


@attrs.frozen
class ClosedLine:
    session: str

    def to_wire(self) -> dict[str, object]:
        return {"closed": self.session}


Line = Hello | OkReply | ErrorReply | EventLine | SessionErrorLine | ClosedLine


def line_from_wire(raw: object) -> Line:
    """One decoded line from corral, or `ShapeError` naming what is wrong."""
    fields = Fields(raw)
    if "hello" in fields.raw:
        hello = fields.obj("hello")
        return Hello(protocol=hello.integer("protocol"), anyagent=hello.string("anyagent"))
    if "event" in fields.raw:
        return EventLine(Event.from_wire(fields.value("event")))
    if "closed" in fields.raw:
        return ClosedLine(fields.string("closed"))
    if "ok" in fields.raw:
        return OkReply(id=fields.integer("id"), value=fields.value("ok"))
    if "error" in fields.raw:
        error = ErrorBody.from_wire(fields.value("error"))
        if "session" in fields.raw:
            return SessionErrorLine(session=fields.string("session"), error=error)
        return ErrorReply(id=fields.opt_integer("id"), error=error)
    raise ShapeError("", "not a line: expected a hello, ok, error, event or closed key")


def read_line(line: bytes) -> Line:
    """One line of corral's stdout (with or without its newline)."""
    try:
        raw = orjson.loads(line)
    except orjson.JSONDecodeError as error:
        raise ShapeError("", f"not JSON: {error}") from None
    return line_from_wire(raw)


def _line(obj: object) -> bytes:
    return orjson.dumps(obj, option=orjson.OPT_APPEND_NEWLINE)


def hello_line(version: str) -> bytes:
    return _line(Hello(protocol=PROTOCOL_VERSION, anyagent=version).to_wire())


def ok_line(frame_id: int, value: object) -> bytes:
    return _line(OkReply(id=frame_id, value=encode_value(value)).to_wire())


def error_line(frame_id: int | None, error: CorralError) -> bytes:
    return _line(ErrorReply(id=frame_id, error=error.error_body()).to_wire())


def event_line(event: Event) -> bytes:
    # The event's JSON is encoded once and shared by every sink; splice it in.
    return b'{"event":' + event.json() + b"}\n"


def event_lines(events: Sequence[Event]) -> bytes:
    """`event_line` of each, joined: one join, no call per event."""
    if not events:
        return b""
    return b'{"event":' + b'}\n{"event":'.join([event.json() for event in events]) + b"}\n"


def session_error_line(session_id: str, error: CorralError) -> bytes:
    return _line(SessionErrorLine(session=session_id, error=error.error_body()).to_wire())


def closed_line(session_id: str) -> bytes:
    return _line(ClosedLine(session_id).to_wire())
