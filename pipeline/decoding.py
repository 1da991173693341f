"""Sans-IO JSON-lines decoding: bytes in, JSON objects (or problems) out.

Most agent wires are one JSON value per line. `JsonLinesDecoder` splits on
`\\n` (through `LineSplitter`, so a line's size is capped) and parses each
line with orjson. A line that is not a JSON object is not dropped: it comes
out as `NotJson` with a bounded prefix of its bytes, so the source can turn
it into a Diagnostic and count it. Blank lines are skipped.
"""

from __future__ import annotations

from typing import Any

import attrs
import orjson

from .framing import DEFAULT_MAX_LINE, LineSplitter, Oversized

__all__ = ["JsonLinesDecoder", "JsonObject", "NotJson", "Oversized"]

JsonObject = dict[str, Any]
_PREFIX = 200


@attrs.frozen
class NotJson:
    """A line that is not a JSON object: a prefix of it and why."""

    prefix: str
    reason: str
    length: int


class JsonLinesDecoder:
    """`keep_lines`: `raw_lines` holds the line each item of the last output
    came from (b"" for an `Oversized` one), for a caller recording the wire;
    None without it."""

    def __init__(self, *, max_line: int = DEFAULT_MAX_LINE, keep_lines: bool = False) -> None:
        self._lines = LineSplitter(max_line=max_line)
        self._keep = keep_lines
        self.raw_lines: list[bytes] | None = [] if keep_lines else None

    def feed(self, chunk: bytes) -> list[JsonObject | NotJson | Oversized]:
        return self._decode(self._lines.feed(chunk))

    def end(self) -> list[JsonObject | NotJson | Oversized]:
        return self._decode(self._lines.end())

    def _decode(self, lines: list[bytes | Oversized]) -> list[JsonObject | NotJson | Oversized]:
        kept: list[bytes] | None = [] if self._keep else None
        out = _decoded(lines, kept)
        if kept is not None:
            self.raw_lines = kept
        return out


def _decoded(
    lines: list[bytes | Oversized], kept: list[bytes] | None
) -> list[JsonObject | NotJson | Oversized]:
    """Each line's object or problem; blank lines skipped, found without a copy."""
    out: list[JsonObject | NotJson | Oversized] = []
    for line in lines:
        item: JsonObject | NotJson | Oversized
        if isinstance(line, Oversized):
            item, line = line, b""
        elif not line or line.isspace():
            continue
        else:
            try:
                value = orjson.loads(line)
            except orjson.JSONDecodeError as error:
                item = _not_json(line, f"not JSON: {error}")
            else:
                is_object = isinstance(value, dict)
                item = value if is_object else _not_json(line, "a JSON value that is not an object")
        out.append(item)
        if kept is not None:
            kept.append(line)
    return out


def _not_json(line: bytes, reason: str) -> NotJson:
    prefix = line[:_PREFIX].decode("utf-8", errors="replace")
    return NotJson(prefix=prefix, reason=reason, length=len(line))
