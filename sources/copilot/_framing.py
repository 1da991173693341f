"""Sans-IO Content-Length framing (the LSP / vscode-jsonrpc framing).

`copilot --headless --stdio` speaks JSON-RPC 2.0 with each message framed as

    Content-Length: <n>\\r\\n
    [other headers]\\r\\n
    \\r\\n
    <n bytes of UTF-8 JSON>

Bytes go in with `feed`; decoded JSON objects come out, in the same shapes
`JsonLinesDecoder` produces, so `JsonRpcPeer` can use either: a message that
is not a JSON object is `NotJson` (a bounded prefix and why); a body larger
than `max_message` is discarded as it arrives and reported once as
`Oversized`. A header block without a usable `Content-Length` is reported as
`NotJson` and skipped up to its blank line, so one bad header never wedges
the stream. Header lines are capped too (`max_header`). `end()` reports a
message cut short by EOF. Header names are case-insensitive; header lines
may end in `\\r\\n` or `\\n`.
"""

from __future__ import annotations

import orjson

from ...pipeline.decoding import JsonObject, NotJson, Oversized

__all__ = ["ContentLengthDecoder", "frame"]

_PREFIX = 200
DEFAULT_MAX_MESSAGE = 64 * 1024 * 1024


def frame(body: bytes) -> bytes:
    """One message on the wire: its header, a blank line, the body."""
    return b"Content-Length: %d\r\n\r\n" % len(body) + body


def _not_json(data: bytes, reason: str) -> NotJson:
    return NotJson(
        prefix=data[:_PREFIX].decode("utf-8", "replace"), reason=reason, length=len(data)
    )


class ContentLengthDecoder:
    def __init__(self, *, max_message: int = DEFAULT_MAX_MESSAGE, max_header: int = 8192) -> None:
        if max_message < 1 or max_header < 1:
            raise ValueError("limits must be positive")
        self._max_message = max_message
        self._max_header = max_header
        self._buffer = bytearray()
        self._headers: list[bytes] = []  # header lines of the message being read
        self._body_left: int | None = None  # bytes of body still expected
        self._discard: int | None = None  # total size of an oversized body being skipped
        self._ended = False

    def feed(self, chunk: bytes) -> list[JsonObject | NotJson | Oversized]:
        if self._ended:
            raise RuntimeError("feed() after end()")
        self._buffer += chunk
        out: list[JsonObject | NotJson | Oversized] = []
        while self._step(out):
            pass
        return out

    def end(self) -> list[JsonObject | NotJson | Oversized]:
        self._ended = True
        out: list[JsonObject | NotJson | Oversized] = []
        if self._discard is not None:
            out.append(Oversized(self._discard))
        elif self._body_left is not None or self._headers or self._buffer.strip():
            out.append(_not_json(bytes(self._buffer), "the stream ended inside a message"))
        self._buffer.clear()
        self._headers.clear()
        self._body_left = self._discard = None
        return out

    def _step(self, out: list[JsonObject | NotJson | Oversized]) -> bool:
        """Make progress on the buffer; False when more bytes are needed."""
        if self._discard is not None:
            return self._skip_body(out)
        if self._body_left is not None:
            return self._take_body(out)
        return self._take_header_line(out)

    def _take_header_line(self, out: list[JsonObject | NotJson | Oversized]) -> bool:
        newline = self._buffer.find(b"\n")
        if newline < 0:
            if len(self._buffer) > self._max_header:
                out.append(_not_json(bytes(self._buffer), "a header line is too long"))
                self._buffer.clear()
                self._headers.clear()
            return False
        line = bytes(self._buffer[:newline]).rstrip(b"\r")
        del self._buffer[: newline + 1]
        if line:
            self._headers.append(line)
            return True
        if not self._headers:
            return True  # a stray blank line between messages
        self._begin_body(out)
        return True

    def _begin_body(self, out: list[JsonObject | NotJson | Oversized]) -> None:
        headers, self._headers = self._headers, []
        length = _content_length(headers)
        if length is None:
            out.append(_not_json(b"\n".join(headers), "a header block without Content-Length"))
        elif length > self._max_message:
            self._discard = length
            self._body_left = length
        else:
            self._body_left = length

    def _take_body(self, out: list[JsonObject | NotJson | Oversized]) -> bool:
        assert self._body_left is not None
        if len(self._buffer) < self._body_left:
            return False
        body = bytes(self._buffer[: self._body_left])
        del self._buffer[: self._body_left]
        self._body_left = None
        out.append(_decode(body))
        return True

    def _skip_body(self, out: list[JsonObject | NotJson | Oversized]) -> bool:
        assert self._discard is not None and self._body_left is not None
        dropped = min(len(self._buffer), self._body_left)
        del self._buffer[:dropped]
        self._body_left -= dropped
        if self._body_left:
            return False
        out.append(Oversized(self._discard))
        self._discard = self._body_left = None
        return True


def _content_length(headers: list[bytes]) -> int | None:
    for header in headers:
        name, sep, value = header.partition(b":")
        if sep and name.strip().lower() == b"content-length":
            text = value.strip()
            if text.isdigit():
                return int(text)
            return None
    return None


def _decode(body: bytes) -> JsonObject | NotJson:
    try:
        value = orjson.loads(body)
    except orjson.JSONDecodeError as error:
        return _not_json(body, f"not JSON: {error}")
    if isinstance(value, dict):
        return value
    return _not_json(body, "a JSON value that is not an object")
