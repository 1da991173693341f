"""Exposition over HTTP (a real socket on 127.0.0.1) and as an ASGI app."""

from __future__ import annotations

import asyncio
import gzip
import socket
from collections.abc import AsyncIterator
from typing import Any

import pytest
from corral.sinks.metrics import Metrics, MetricsServer, MetricsServerError, parse_address
from corral.sinks.metrics._http import BadRequest, parse_head

OPENMETRICS = "application/openmetrics-text; version=1.0.0; charset=utf-8"


async def http(port: int, request: bytes) -> tuple[int, dict[str, str], bytes]:
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    try:
        writer.write(request)
        await writer.drain()
        async with asyncio.timeout(10):
            raw = await reader.read()
    finally:
        writer.close()
    head, _, body = raw.partition(b"\r\n\r\n")
    status_line, *header_lines = head.decode("latin-1").split("\r\n")
    headers = dict(line.split(": ", 1) for line in header_lines)
    return int(status_line.split(" ")[1]), {k.lower(): v for k, v in headers.items()}, body


def get(path: str, *headers: str, method: str = "GET") -> bytes:
    lines = [f"{method} {path} HTTP/1.1", "Host: 127.0.0.1", *headers, "", ""]
    return "\r\n".join(lines).encode()


@pytest.fixture
async def server(metrics: Metrics) -> AsyncIterator[MetricsServer]:
    server = await metrics.serve_http("127.0.0.1", 0)
    try:
        yield server
    finally:
        await server.aclose()


async def test_get_metrics_serves_the_text_format(server: MetricsServer) -> None:
    status, headers, body = await http(server.port, get("/metrics"))
    assert status == 200
    assert headers["content-type"].startswith("text/plain; version=0.0.4")
    assert b'corral_build_info{version="test"} 1.0' in body


async def test_a_scraper_asking_for_openmetrics_gets_it(server: MetricsServer) -> None:
    _, headers, body = await http(server.port, get("/metrics", f"Accept: {OPENMETRICS}"))
    assert headers["content-type"].startswith("application/openmetrics-text")
    assert body.endswith(b"# EOF\n")


async def test_gzip_is_used_when_the_scraper_accepts_it(server: MetricsServer) -> None:
    _, headers, body = await http(server.port, get("/metrics", "Accept-Encoding: gzip"))
    assert headers["content-encoding"] == "gzip"
    assert b"corral_build_info" in gzip.decompress(body)


async def test_head_has_headers_and_no_body(server: MetricsServer) -> None:
    status, headers, body = await http(server.port, get("/metrics", method="HEAD"))
    assert status == 200
    assert int(headers["content-length"]) > 0
    assert body == b""


@pytest.mark.parametrize(
    ("request_bytes", "status"),
    [(get("/nope"), 404), (get("/metrics", method="POST"), 405), (b"junk\r\n\r\n", 400)],
)
async def test_other_requests_get_an_error_status(
    server: MetricsServer, request_bytes: bytes, status: int
) -> None:
    assert (await http(server.port, request_bytes))[0] == status


async def test_the_server_binds_loopback_and_reports_its_url(server: MetricsServer) -> None:
    assert server.host == "127.0.0.1"
    assert server.url == f"http://127.0.0.1:{server.port}/metrics"


async def test_serving_without_a_host_binds_loopback_only(metrics: Metrics) -> None:
    server = await metrics.serve_http(port=0)
    try:
        assert server.addresses == [("127.0.0.1", server.port)]
    finally:
        await server.aclose()


async def test_a_port_in_use_is_a_clear_error(metrics: Metrics) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        with pytest.raises(MetricsServerError, match=r"already in use.*--metrics HOST:PORT"):
            await metrics.serve_http("127.0.0.1", port)


async def test_closing_stops_answering(metrics: Metrics) -> None:
    server = await metrics.serve_http("127.0.0.1", 0)
    port = server.port
    await server.aclose()
    with pytest.raises(OSError):
        await asyncio.open_connection("127.0.0.1", port)


@pytest.mark.parametrize(
    ("text", "address"),
    [
        ("9464", ("127.0.0.1", 9464)),
        (":9464", ("127.0.0.1", 9464)),
        ("0.0.0.0:80", ("0.0.0.0", 80)),
        ("[::1]:9464", ("::1", 9464)),
        ("localhost:0", ("localhost", 0)),
    ],
)
def test_addresses_default_to_loopback(text: str, address: tuple[str, int]) -> None:
    assert parse_address(text) == address


@pytest.mark.parametrize("text", ["", "host:", "host:port", "1:99999", "-1"])
def test_a_bad_address_is_refused(text: str) -> None:
    with pytest.raises(ValueError):
        parse_address(text)


def test_a_head_is_parsed_into_method_path_and_headers() -> None:
    request = parse_head(b"GET /metrics?x=1 HTTP/1.1\r\nAccept: a\r\naccept: b\r\n\r\n")
    assert (request.method, request.path) == ("GET", "/metrics")
    assert request.headers == {"accept": "a,b"}


@pytest.mark.parametrize("head", [b"GET /\r\n\r\n", b"GET / HTTP/1.1\r\nno colon\r\n\r\n"])
def test_a_malformed_head_is_refused(head: bytes) -> None:
    with pytest.raises(BadRequest):
        parse_head(head)


async def asgi(metrics: Metrics, scope: dict[str, Any], *messages: dict[str, Any]) -> list[Any]:
    incoming = list(messages)
    sent: list[Any] = []

    async def receive() -> dict[str, Any]:
        return incoming.pop(0)

    async def send(message: Any) -> None:
        sent.append(message)

    await metrics.asgi_app()(scope, receive, send)
    return sent


async def test_the_asgi_app_serves_metrics(metrics: Metrics) -> None:
    scope = {
        "type": "http",
        "method": "GET",
        "path": "/metrics",
        "headers": [(b"accept", OPENMETRICS.encode())],
    }
    start, body = await asgi(metrics, scope, {"type": "http.request"})
    assert start["status"] == 200
    assert (
        b"content-type",
        b"application/openmetrics-text; version=1.0.0; charset=utf-8; escaping=underscores",
    ) in start["headers"]
    assert b"corral_build_info" in body["body"]


async def test_the_asgi_app_acknowledges_lifespan_events(metrics: Metrics) -> None:
    sent = await asgi(
        metrics, {"type": "lifespan"}, {"type": "lifespan.startup"}, {"type": "lifespan.shutdown"}
    )
    assert [m["type"] for m in sent] == ["lifespan.startup.complete", "lifespan.shutdown.complete"]
