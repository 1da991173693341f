"""A minimal sans-IO HTTP/1.1 request parser and response encoders.

Bytes from a client socket go into `RequestParser.feed`; whole `HttpRequest`
values come out (zero, one or several when the client pipelines). The parser
never does I/O and knows no clock. It understands what the agent CLIs send:
`Content-Length` bodies, `Transfer-Encoding: chunked` bodies (trailers are
read and dropped), gzip/deflate `Content-Encoding`, keep-alive by default for
HTTP/1.1 and `Connection: close`. Header blocks are capped at 64 KiB and
bodies at 64 MiB; a violation raises `HttpError`, after which the parser is
broken for good (the connection must be closed).

Responses are encoded by plain functions: `encode_head` for the status line
and headers, `encode_chunk` / `LAST_CHUNK` for chunked (streamed) bodies.
"""

from __future__ import annotations

import zlib
from dataclasses import dataclass, field
from urllib.parse import parse_qsl, urlsplit

__all__ = [
    "LAST_CHUNK",
    "HttpError",
    "HttpRequest",
    "RequestParser",
    "encode_chunk",
    "encode_head",
]

MAX_HEAD_BYTES = 64 * 1024
MAX_BODY_BYTES = 64 * 1024 * 1024
LAST_CHUNK = b"0\r\n\r\n"

_REASONS = {
    200: "OK",
    400: "Bad Request",
    404: "Not Found",
    405: "Method Not Allowed",
    413: "Payload Too Large",
    415: "Unsupported Media Type",
    500: "Internal Server Error",
}


class HttpError(Exception):
    """The client broke HTTP/1.1; `status` is the answer to send before closing."""

    def __init__(self, status: int, detail: str) -> None:
        super().__init__(detail)
        self.status = status
        self.detail = detail


@dataclass(frozen=True, kw_only=True)
class HttpRequest:
    """One parsed request; header names are lower-cased."""

    method: str
    target: str
    version: str
    headers: dict[str, str]
    body: bytes

    @property
    def path(self) -> str:
        return urlsplit(self.target).path

    @property
    def query(self) -> dict[str, str]:
        return dict(parse_qsl(urlsplit(self.target).query, keep_blank_values=True))

    @property
    def keep_alive(self) -> bool:
        connection = self.headers.get("connection", "").lower()
        if self.version == "HTTP/1.0":
            return "keep-alive" in connection
        return "close" not in connection


@dataclass
class _Head:
    method: str
    target: str
    version: str
    headers: dict[str, str]


@dataclass
class RequestParser:
    """Incremental request parser: `feed(bytes) -> list[HttpRequest]`."""

    _buffer: bytearray = field(default_factory=bytearray)
    _head: _Head | None = None
    _chunks: bytearray = field(default_factory=bytearray)
    _broken: HttpError | None = None

    def feed(self, incoming: bytes) -> list[HttpRequest]:
        if self._broken is not None:
            raise self._broken
        self._buffer += incoming
        parsed: list[HttpRequest] = []
        try:
            while (request := self._next()) is not None:
                parsed.append(request)
        except HttpError as error:
            self._broken = error
            raise
        return parsed

    @property
    def idle(self) -> bool:
        """True when no partial request is buffered (a clean place to close)."""
        return self._head is None and not self._buffer

    def _next(self) -> HttpRequest | None:
        if self._head is None:
            self._head = self._read_head()
            if self._head is None:
                return None
        head = self._head
        body = self._read_body(head)
        if body is None:
            return None
        self._head = None
        return HttpRequest(
            method=head.method,
            target=head.target,
            version=head.version,
            headers=head.headers,
            body=_decode_content(head.headers.get("content-encoding", ""), body),
        )

    def _read_head(self) -> _Head | None:
        # Tolerate stray CRLFs between pipelined requests (RFC 9112 §2.2).
        while self._buffer.startswith(b"\r\n"):
            del self._buffer[:2]
        end = self._buffer.find(b"\r\n\r\n")
        if end < 0:
            if len(self._buffer) > MAX_HEAD_BYTES:
                raise HttpError(413, "request head too large")
            return None
        raw = bytes(self._buffer[:end]).decode("latin-1")
        del self._buffer[: end + 4]
        request_line, *header_lines = raw.split("\r\n")
        parts = request_line.split(" ")
        if len(parts) != 3 or not parts[2].startswith("HTTP/1."):
            raise HttpError(400, f"bad request line {request_line!r}")
        headers: dict[str, str] = {}
        for line in header_lines:
            name, sep, value = line.partition(":")
            if not sep or not name or name != name.strip():
                raise HttpError(400, f"bad header line {line!r}")
            key = name.lower()
            value = value.strip()
            headers[key] = f"{headers[key]}, {value}" if key in headers else value
        return _Head(method=parts[0], target=parts[1], version=parts[2], headers=headers)

    def _read_body(self, head: _Head) -> bytes | None:
        if "chunked" in head.headers.get("transfer-encoding", "").lower():
            return self._read_chunked()
        length_text = head.headers.get("content-length", "0")
        if not length_text.isdigit():
            raise HttpError(400, f"bad content-length {length_text!r}")
        length = int(length_text)
        if length > MAX_BODY_BYTES:
            raise HttpError(413, "request body too large")
        if len(self._buffer) < length:
            return None
        body = bytes(self._buffer[:length])
        del self._buffer[:length]
        return body

    def _read_chunked(self) -> bytes | None:
        while True:
            line_end = self._buffer.find(b"\r\n")
            if line_end < 0:
                return None
            size_text = bytes(self._buffer[:line_end]).split(b";")[0].strip()
            try:
                size = int(size_text, 16)
            except ValueError as error:
                raise HttpError(400, f"bad chunk size {size_text!r}") from error
            if size == 0:
                return self._read_trailers(line_end + 2)
            if len(self._chunks) + size > MAX_BODY_BYTES:
                raise HttpError(413, "request body too large")
            start = line_end + 2
            if len(self._buffer) < start + size + 2:
                return None
            if self._buffer[start + size : start + size + 2] != b"\r\n":
                raise HttpError(400, "chunk not terminated by CRLF")
            self._chunks += self._buffer[start : start + size]
            del self._buffer[: start + size + 2]

    def _read_trailers(self, offset: int) -> bytes | None:
        if self._buffer[offset : offset + 2] == b"\r\n":
            end = offset + 2
        else:
            found = self._buffer.find(b"\r\n\r\n", offset)
            if found < 0:
                return None
            end = found + 4
        del self._buffer[:end]
        body = bytes(self._chunks)
        self._chunks.clear()
        return body


def _decode_content(encoding: str, body: bytes) -> bytes:
    name = encoding.strip().lower()
    if name in ("", "identity"):
        return body
    if name in ("gzip", "x-gzip"):
        return zlib.decompress(body, wbits=16 + zlib.MAX_WBITS)
    if name == "deflate":
        return zlib.decompress(body)
    raise HttpError(415, f"unsupported content-encoding {encoding!r}")


def encode_head(status: int, headers: dict[str, str]) -> bytes:
    """Status line plus headers, ending with the blank line."""
    lines = [f"HTTP/1.1 {status} {_REASONS.get(status, 'Unknown')}"]
    lines += [f"{name}: {value}" for name, value in headers.items()]
    return ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1")


def encode_chunk(payload: bytes) -> bytes:
    """One chunk of a chunked body; empty payloads are skipped (they would end it)."""
    if not payload:
        return b""
    return f"{len(payload):x}\r\n".encode("ascii") + payload + b"\r\n"
