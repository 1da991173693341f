"""Exposition over HTTP: a small asyncio server and an ASGI app.

Both render on the event loop that runs the sessions, never on a thread:
the channel collector reads live channels, which are not thread-safe, and
the stores are plain dictionaries updated by that loop. (prometheus-client's
own `start_http_server` serves from a thread, which is why it is not used.)

`Exposition.render(accept, accept_encoding)` picks the format the scraper
asks for (OpenMetrics with exemplars for Prometheus, the classic text
format otherwise) and gzips when allowed. `MetricsServer` answers
`GET /metrics` (and `HEAD`), a one-line index on `/`, 404 elsewhere and 405
for other methods; each connection serves one request and closes. The
request head is parsed by `parse_head`, a plain function (bytes in,
request out).

A bind failure (address in use, permission denied, bad host) raises
`MetricsServerError` with a message fit for the command line.

The metrics say which agents run, what their tools do and what they cost,
and the server has no authentication: it listens on 127.0.0.1 by default.
Bound anywhere else (`0.0.0.0`, a LAN address), it starts anyway, since a
scraper on another host may be the point, but says so on stderr
(`exposure_warning`), so nobody exposes it without knowing.
"""

from __future__ import annotations

import asyncio
import errno
import gzip
import ipaddress
import sys
from collections.abc import Awaitable, Callable, MutableMapping
from types import TracebackType
from typing import Any

import attrs
from prometheus_client.exposition import choose_encoder, gzip_accepted
from prometheus_client.registry import CollectorRegistry

__all__ = [
    "AsgiApp",
    "Exposition",
    "HttpRequest",
    "MetricsServer",
    "MetricsServerError",
    "exposure_warning",
    "parse_address",
    "parse_head",
]

DEFAULT_HOST = "127.0.0.1"
_MAX_HEAD = 16 * 1024
_CONNECTION_TIMEOUT = 30.0
_INDEX = b"corral metrics: /metrics\n"
_REASONS = {200: "OK", 400: "Bad Request", 404: "Not Found", 405: "Method Not Allowed"}

AsgiApp = Callable[
    [
        MutableMapping[str, Any],
        Callable[[], Awaitable[MutableMapping[str, Any]]],
        Callable[[MutableMapping[str, Any]], Awaitable[None]],
    ],
    Awaitable[None],
]


class MetricsServerError(Exception):
    """The exposition server could not start; the message says why and what to do."""


class BadRequest(Exception):
    pass


@attrs.frozen(kw_only=True)
class HttpRequest:
    method: str
    path: str
    headers: dict[str, str]  # lower-case names; repeated headers joined with ","


def parse_head(head: bytes) -> HttpRequest:
    """An HTTP/1.x request head (request line and headers, CRLF CRLF ended)."""
    lines = head.decode("latin-1").split("\r\n")  # latin-1 decodes any byte
    parts = lines[0].split(" ")
    if len(parts) != 3 or not parts[2].startswith("HTTP/1."):
        raise BadRequest(f"bad request line {lines[0][:80]!r}")
    method, target, _ = parts
    headers: dict[str, str] = {}
    for line in lines[1:]:
        if not line:
            continue
        name, colon, value = line.partition(":")
        if not colon or not name or name != name.strip():
            raise BadRequest(f"bad header line {line[:80]!r}")
        key = name.lower()
        headers[key] = f"{headers[key]},{value.strip()}" if key in headers else value.strip()
    return HttpRequest(method=method, path=target.split("?", 1)[0], headers=headers)


def parse_address(text: str, *, default_host: str = DEFAULT_HOST) -> tuple[str, int]:
    """`PORT`, `:PORT`, `HOST:PORT` or `[IPv6]:PORT`; the host defaults to 127.0.0.1."""
    host, sep, port_text = text.rpartition(":")
    if not sep:
        host, port_text = "", text
    if host.startswith("[") and host.endswith("]"):
        host = host[1:-1]
    if not port_text.isdigit() or not 0 <= int(port_text) <= 65535:
        raise ValueError(f"expected HOST:PORT with a port from 0 to 65535, got {text!r}")
    return host or default_host, int(port_text)


class Exposition:
    def __init__(self, registry: CollectorRegistry) -> None:
        self.registry = registry

    def render(self, accept: str = "", accept_encoding: str = "") -> tuple[bytes, dict[str, str]]:
        encoder, content_type = choose_encoder(accept)
        body = encoder(self.registry)
        headers = {"Content-Type": content_type}
        if gzip_accepted(accept_encoding):
            body = gzip.compress(body, compresslevel=5)
            headers["Content-Encoding"] = "gzip"
        return body, headers

    def respond(self, request: HttpRequest) -> tuple[int, dict[str, str], bytes]:
        if request.method not in ("GET", "HEAD"):
            return 405, {"Allow": "GET, HEAD", "Content-Type": "text/plain"}, b"GET only\n"
        if request.path == "/metrics":
            body, headers = self.render(
                request.headers.get("accept", ""), request.headers.get("accept-encoding", "")
            )
            return 200, headers, body
        if request.path == "/":
            return 200, {"Content-Type": "text/plain; charset=utf-8"}, _INDEX
        return 404, {"Content-Type": "text/plain"}, b"not found; try /metrics\n"

    def asgi_app(self) -> AsgiApp:
        """An ASGI 3 app serving the same routes (lifespan events are acknowledged)."""

        async def app(
            scope: MutableMapping[str, Any],
            receive: Callable[[], Awaitable[MutableMapping[str, Any]]],
            send: Callable[[MutableMapping[str, Any]], Awaitable[None]],
        ) -> None:
            if scope["type"] == "lifespan":
                await _lifespan(receive, send)
                return
            if scope["type"] != "http":
                return
            headers: dict[str, str] = {}
            for raw_name, raw_value in scope.get("headers", []):
                name = raw_name.decode("latin-1").lower()
                value = raw_value.decode("latin-1")
                headers[name] = f"{headers[name]},{value}" if name in headers else value
            request = HttpRequest(method=scope["method"], path=scope["path"], headers=headers)
            status, response_headers, body = self.respond(request)
            await send(
                {
                    "type": "http.response.start",
                    "status": status,
                    "headers": [
                        (k.lower().encode(), v.encode()) for k, v in response_headers.items()
                    ],
                }
            )
            await send(
                {"type": "http.response.body", "body": b"" if request.method == "HEAD" else body}
            )

        return app


async def _lifespan(
    receive: Callable[[], Awaitable[MutableMapping[str, Any]]],
    send: Callable[[MutableMapping[str, Any]], Awaitable[None]],
) -> None:
    while True:
        message = await receive()
        if message["type"] == "lifespan.startup":
            await send({"type": "lifespan.startup.complete"})
        elif message["type"] == "lifespan.shutdown":
            await send({"type": "lifespan.shutdown.complete"})
            return


def _response(status: int, headers: dict[str, str], body: bytes, head_only: bool) -> bytes:
    lines = [f"HTTP/1.1 {status} {_REASONS.get(status, 'Error')}"]
    lines += [f"{name}: {value}" for name, value in headers.items()]
    lines += [f"Content-Length: {len(body)}", "Connection: close", "", ""]
    return "\r\n".join(lines).encode("latin-1") + (b"" if head_only else body)


class MetricsServer:
    """`GET /metrics` on HOST:PORT, served by the running event loop."""

    def __init__(self, exposition: Exposition, host: str = DEFAULT_HOST, port: int = 0) -> None:
        self._exposition = exposition
        self.host = host
        self._requested_port = port
        self._server: asyncio.Server | None = None
        self._writers: set[asyncio.StreamWriter] = set()

    @property
    def port(self) -> int:
        return self.addresses[0][1]

    @property
    def addresses(self) -> list[tuple[str, int]]:
        """(host, port) of every socket the server listens on."""
        if self._server is None or not self._server.sockets:
            raise RuntimeError("the metrics server is not running")
        return [
            (str(name[0]), int(name[1]))
            for name in (sock.getsockname() for sock in self._server.sockets)
        ]

    @property
    def url(self) -> str:
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"http://{host}:{self.port}/metrics"

    async def start(self) -> None:
        try:
            self._server = await asyncio.start_server(
                self._handle, self.host, self._requested_port, limit=_MAX_HEAD
            )
        except OSError as error:
            raise MetricsServerError(
                _bind_message(self.host, self._requested_port, error)
            ) from None
        warning = exposure_warning(self.host, self.addresses)
        if warning is not None:
            print(f"corral: {warning}", file=sys.stderr, flush=True)

    async def aclose(self) -> None:
        server, self._server = self._server, None
        if server is None:
            return
        server.close()
        for writer in list(self._writers):
            writer.close()
        await server.wait_closed()

    async def __aenter__(self) -> MetricsServer:
        await self.start()
        return self

    async def __aexit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        trace: TracebackType | None,
    ) -> None:
        await self.aclose()

    async def _handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self._writers.add(writer)
        try:
            async with asyncio.timeout(_CONNECTION_TIMEOUT):  # a stuck client is dropped
                head = await reader.readuntil(b"\r\n\r\n")
                try:
                    request = parse_head(head)
                except BadRequest:
                    writer.write(
                        _response(400, {"Content-Type": "text/plain"}, b"bad request\n", False)
                    )
                else:
                    status, headers, body = self._exposition.respond(request)
                    writer.write(_response(status, headers, body, request.method == "HEAD"))
                await writer.drain()
        except (
            TimeoutError,
            ConnectionError,
            asyncio.IncompleteReadError,
            asyncio.LimitOverrunError,
        ):
            pass  # a scraper that went away or sent garbage: nothing to answer
        finally:
            self._writers.discard(writer)
            writer.close()


def exposure_warning(host: str, addresses: list[tuple[str, int]]) -> str | None:
    """A warning when any of the bound `addresses` is reachable from another machine."""
    exposed = [address for address in addresses if not _loopback(address[0])]
    if not exposed:
        return None
    port = exposed[0][1]
    return (
        f"warning: metrics are served on {host}, not only on this machine: anyone who can "
        f"reach port {port} reads them (agents, tools, costs), with no authentication; "
        "use --metrics 127.0.0.1:PORT unless that is meant"
    )


def _loopback(address: str) -> bool:
    try:
        return ipaddress.ip_address(address.partition("%")[0]).is_loopback
    except ValueError:
        return False


def _bind_message(host: str, port: int, error: OSError) -> str:
    where = f"{host}:{port}"
    if error.errno == errno.EADDRINUSE:
        return (
            f"cannot serve metrics on {where}: the address is already in use "
            "(another corral or exporter?); choose another with --metrics HOST:PORT, "
            "or port 0 for any free port"
        )
    if error.errno == errno.EACCES:
        return (
            f"cannot serve metrics on {where}: permission denied (ports below 1024 need privileges)"
        )
    return f"cannot serve metrics on {where}: {error.strerror or error}"
