"""The line protocol codec: frames in, lines out, as bytes.

Input: one line of bytes from the app becomes `(id, Command)` or a
`FrameError` that carries the id when one could be read (so the BadFrame
reply can name it). Output: each kind of line the schema's `Line` allows,
encoded with orjson and terminated by `\\n`. Nothing here does I/O.
"""

from __future__ import annotations

from typing import Any

import orjson

from .commands import Command, command_from_wire
from .errors import CorralError, ErrorKind
from .events import Event, Fields, ShapeError

__all__ = [
    "PROTOCOL_VERSION",
    "FrameError",
    "closed_line",
    "encode_value",
    "error_line",
    "event_line",
    "hello_line",
    "ok_line",
    "parse_frame",
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
        return frame_id, command_from_wire(Fields(raw))
    except ShapeError as error:
        raise FrameError(str(error), frame_id) from None


def encode_value(value: object) -> Any:
    """A reply value as JSON: model objects through `to_wire`, the rest as is."""
    to_wire = getattr(value, "to_wire", None)
    return value if to_wire is None else to_wire()


def _line(obj: object) -> bytes:
    return orjson.dumps(obj, option=orjson.OPT_APPEND_NEWLINE)


def hello_line(version: str) -> bytes:
    return _line({"hello": {"protocol": PROTOCOL_VERSION, "anyagent": version}})


def ok_line(frame_id: int, value: object) -> bytes:
    return _line({"id": frame_id, "ok": encode_value(value)})


def error_line(frame_id: int | None, error: CorralError) -> bytes:
    return _line({"id": frame_id, "error": error.body()})


def event_line(event: Event) -> bytes:
    return b'{"event":' + event.json() + b"}\n"


def session_error_line(session_id: str, error: CorralError) -> bytes:
    return _line({"session": session_id, "error": error.body()})


def closed_line(session_id: str) -> bytes:
    return _line({"closed": session_id})
