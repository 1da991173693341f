"""Counting what the line protocol writes: a ByteStream that counts lines by type.

`LineCounter` wraps the stream `LineWriter` writes to (stdout for `corral
serve`). The writer hands it batches of whole lines; each line's type is
known from how the wire codec starts it (pipeline/wire.py):

    {"hello" ...   {"id":N,"ok" ...   {"id":N|null,"error" ...
    {"event" ...   {"session" ...     {"closed" ...

Counting uses `bytes.count` on line starts (C speed, no split), so a batch
of 256 KiB of events costs a few scans, not a parse.
"""

from __future__ import annotations

import re

from ..lines import ByteStream
from ._families import Families

__all__ = ["LineCounter", "count_lines"]

_EVENT = b'{"event"'
_PREFIXES = (
    ("hello", b'{"hello"'),
    ("event", _EVENT),
    ("session_error", b'{"session"'),
    ("closed", b'{"closed"'),
)
_REPLY = b'{"id"'
_ERROR_REPLY = re.compile(rb'(?:^|(?<=\n))\{"id":(?:-?\d+|null),"error"')
_NONE = dict.fromkeys([*(name for name, _ in _PREFIXES), "reply", "error"], 0)


def _starts(data: bytes, prefix: bytes) -> int:
    return int(data.startswith(prefix)) + data.count(b"\n" + prefix)


def count_lines(data: bytes) -> dict[str, int]:
    """Lines of each type in a batch of whole lines."""
    events = _starts(data, _EVENT)
    if events == data.count(b"\n"):  # the bulk of a stream: events only, two scans
        return {**_NONE, "event": events}
    counts = {name: _starts(data, prefix) for name, prefix in _PREFIXES}
    replies = _starts(data, _REPLY)
    errors = len(_ERROR_REPLY.findall(data)) if replies else 0
    counts["reply"] = replies - errors
    counts["error"] = errors
    return counts


class LineCounter:
    """A ByteStream that counts what passes through it, after it is written."""

    def __init__(self, stream: ByteStream, families: Families) -> None:
        self._stream = stream
        self._m = families

    async def write(self, data: bytes) -> None:
        await self._stream.write(data)
        for line_type, count in count_lines(data).items():
            if count:
                self._m.line_messages.inc((line_type,), float(count))
        self._m.line_bytes.inc((), float(len(data)))
