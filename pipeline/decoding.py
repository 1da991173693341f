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
    def __init__(self, *, max_line: int = DEFAULT_MAX_LINE) -> None:
        self._lines = LineSplitter(max_line=max_line)

    def feed(self, chunk: bytes) -> list[JsonObject | NotJson | Oversized]:
        return self._decode(self._lines.feed(chunk))

    def end(self) -> list[JsonObject | NotJson | Oversized]:
        return self._decode(self._lines.end())

    @staticmethod
    def _decode(lines: list[bytes | Oversized]) -> list[JsonObject | NotJson | Oversized]:
        out: list[JsonObject | NotJson | Oversized] = []
        for line in lines:
            if isinstance(line, Oversized):
                out.append(line)
                continue
            if not line or line.isspace():  # blank (no copy, unlike strip)
                continue
            try:
                value = orjson.loads(line)
            except orjson.JSONDecodeError as error:
                out.append(_not_json(line, f"not JSON: {error}"))
                continue
            if isinstance(value, dict):
                out.append(value)
            else:
                out.append(_not_json(line, "a JSON value that is not an object"))
        return out


def _not_json(line: bytes, reason: str) -> NotJson:
    prefix = line[:_PREFIX].decode("utf-8", errors="replace")
    return NotJson(prefix=prefix, reason=reason, length=len(line))
