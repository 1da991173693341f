"""Sans-IO line splitting with a cap on the bytes held for one line.

Bytes go in with `feed`; complete lines come out (without the `\\n`). The
split is on `b"\\n"` only, never `str.splitlines()`, which would also break
on U+2028, U+0085 and form feed inside JSON strings. A trailing `\\r` is
kept: JSON decoders treat it as whitespace.

A line longer than `max_line` is not kept: its bytes are discarded as they
arrive and one `Oversized(length)` marker takes its place in the output, so
a single giant line can never make the process hold it all. `end()` flushes
a final line that had no newline. Once `end()` has been called, `feed`
raises: a splitter is used for exactly one stream.
"""

from __future__ import annotations

import attrs

__all__ = ["LineSplitter", "Oversized"]

DEFAULT_MAX_LINE = 16 * 1024 * 1024


@attrs.frozen
class Oversized:
    """A line that exceeded the cap; `length` is how many bytes it had."""

    length: int


class LineSplitter:
    def __init__(self, *, max_line: int = DEFAULT_MAX_LINE) -> None:
        if max_line < 1:
            raise ValueError("max_line must be positive")
        self._max_line = max_line
        self._pending = bytearray()
        self._discarding = 0  # bytes dropped so far of an oversized line
        self._ended = False

    @property
    def buffered(self) -> int:
        return len(self._pending)

    def feed(self, chunk: bytes) -> list[bytes | Oversized]:
        if self._ended:
            raise RuntimeError("feed() after end()")
        out: list[bytes | Oversized] = []
        start = 0
        while True:
            newline = chunk.find(b"\n", start)
            if newline < 0:
                self._hold(chunk[start:])
                return out
            piece = chunk[start:newline]
            if self._discarding:
                out.append(Oversized(self._discarding + len(piece)))
                self._discarding = 0
            elif len(self._pending) + len(piece) > self._max_line:
                out.append(Oversized(len(self._pending) + len(piece)))
                self._pending.clear()
            elif self._pending:
                self._pending += piece
                out.append(bytes(self._pending))
                self._pending.clear()
            else:
                out.append(piece)
            start = newline + 1

    def _hold(self, rest: bytes) -> None:
        if not rest:
            return
        if self._discarding:
            self._discarding += len(rest)
        elif len(self._pending) + len(rest) > self._max_line:
            self._discarding = len(self._pending) + len(rest)
            self._pending.clear()
        else:
            self._pending += rest

    def end(self) -> list[bytes | Oversized]:
        self._ended = True
        if self._discarding:
            length, self._discarding = self._discarding, 0
            return [Oversized(length)]
        if self._pending:
            line = bytes(self._pending)
            self._pending.clear()
            return [line]
        return []
