"""The viewer's routes: aiohttp handlers over `ArchiveReader`, Jinja2 pages.

    GET /                      the list: filters (agent, status) and search (q)
    GET /session/{id}          the transcript, rendered by the HTML export's renderer
    GET /session/{id}/events   server-sent events: each event past `after`, then `ended`
    GET /static/live.js        the page's one script (package data)

Everything is GET (HEAD comes with it): no route writes, and any other
method is 405. Every page is server-rendered; Jinja2 escapes every value
(autoescape on), the export renderer escapes every block, and the
Content-Security-Policy allows only our own script, so agent-written
text that looks like markup stays text. Bound to loopback, requests must
also name a loopback host (a page elsewhere cannot reach the archive by
rebinding a name of its own to 127.0.0.1).

The event stream polls the transcript's files (size and mtime of each
part) every `poll` seconds, re-reads them when they change and sends the
events it has not sent yet, the event's line-protocol JSON as data and
its sequence number as the SSE id (so a reconnecting browser resumes with
`Last-Event-ID`). It ends once the transcript has a footer or no writer.
"""

from __future__ import annotations

import asyncio
import contextlib
from pathlib import Path
from typing import Any

import attrs
import jinja2
import orjson
from aiohttp import web

from .._paths import TranscriptFiles, files_of
from .._render import render_html
from .._view import summary
from ._listing import STATES, Filters, state
from ._reading import ArchiveReader, read

__all__ = ["ViewerSettings", "make_app"]

_HERE = Path(__file__).parent
_LOOPBACK_NAMES = frozenset({"127.0.0.1", "localhost", "::1", "[::1]"})
_CSP = (
    "default-src 'none'; script-src 'self'; style-src 'unsafe-inline'; "
    "connect-src 'self'; img-src 'self'; base-uri 'none'; form-action 'self'"
)


@attrs.frozen(kw_only=True)
class ViewerSettings:
    root: Path
    loopback_only: bool = True
    poll: float = 0.5


_SETTINGS = web.AppKey("settings", ViewerSettings)
_READER = web.AppKey("reader", ArchiveReader)
_PAGES = web.AppKey("pages", jinja2.Environment)
_STOPPING = web.AppKey("stopping", asyncio.Event)


def _pages() -> jinja2.Environment:
    return jinja2.Environment(
        loader=jinja2.FileSystemLoader(_HERE / "templates"),
        autoescape=True,
        undefined=jinja2.StrictUndefined,
    )


@web.middleware
async def _guard(request: web.Request, handler: Any) -> web.StreamResponse:
    settings = request.app[_SETTINGS]
    if settings.loopback_only and (request.url.host or "") not in _LOOPBACK_NAMES:
        raise web.HTTPMisdirectedRequest(text="this viewer answers on its loopback address only")
    try:
        response: web.StreamResponse = await handler(request)
    except web.HTTPException as error:  # a 404 or 405 is a page too
        _secure(error.headers)
        raise
    _secure(response.headers)
    return response


def _secure(headers: Any) -> None:
    headers["Content-Security-Policy"] = _CSP
    headers["X-Content-Type-Options"] = "nosniff"
    headers["Referrer-Policy"] = "no-referrer"


def _html(text: str) -> web.Response:
    return web.Response(text=text, content_type="text/html", charset="utf-8")


async def _list(request: web.Request) -> web.Response:
    filters = Filters.of(request.query.get)
    listing = await asyncio.to_thread(request.app[_READER].listing, filters)
    page = (
        request.app[_PAGES]
        .get_template("list.html")
        .render(listing=listing, filters=filters, states=STATES)
    )
    return _html(page)


async def _files(request: web.Request) -> TranscriptFiles:
    files = await asyncio.to_thread(request.app[_READER].files, request.match_info["id"])
    if files is None:
        raise web.HTTPNotFound(text="no such transcript in the archive")
    return files


async def _session(request: web.Request) -> web.Response:
    files = await _files(request)
    transcript, live = await asyncio.to_thread(read, files)
    events = transcript.events()
    row = summary(transcript, live=live)
    pages = request.app[_PAGES]
    nav = pages.get_template("session_nav.html").render(
        transcript_id=files.transcript_id,
        state=state(row.status),
        live=live and transcript.footer is None,
        after=events[-1].sequence if events else 0,
    )
    page = render_html(transcript)  # the export's page, whole: one renderer for both
    opened, closed = page.index("<body>") + len("<body>"), page.rindex("</body>")
    tail = '</div><script src="/static/live.js" defer></script>'
    return _html(page[:opened] + nav + page[opened:closed] + tail + page[closed:])


def _sse(name: str, data: bytes, ident: int | None = None) -> bytes:
    head = f"event: {name}\n" + (f"id: {ident}\n" if ident is not None else "")
    return head.encode() + b"data: " + data + b"\n\n"


def _signature(files: TranscriptFiles) -> list[tuple[str, int, int]]:
    found = []
    for path in files_of(files.active).all():
        with contextlib.suppress(FileNotFoundError):
            stat = path.stat()
            found.append((str(path), stat.st_size, stat.st_mtime_ns))
    return found


def _after(request: web.Request) -> int:
    text = request.headers.get("Last-Event-ID") or request.query.get("after") or "0"
    if not text.isdigit():
        raise web.HTTPBadRequest(text="`after` is an event sequence number")
    return int(text)


async def _events(request: web.Request) -> web.StreamResponse:
    files, after = await _files(request), _after(request)
    response = web.StreamResponse(headers={"Cache-Control": "no-store"})
    response.content_type = "text/event-stream"
    await response.prepare(request)
    stopping, poll = request.app[_STOPPING], request.app[_SETTINGS].poll
    seen = None
    while not stopping.is_set():
        signature = await asyncio.to_thread(_signature, files)
        if signature != seen:
            seen = signature
            transcript, live = await asyncio.to_thread(read, files_of(files.active))
            for event in transcript.events():
                if event.sequence > after:
                    await response.write(_sse("transcript", event.json(), event.sequence))
                    after = event.sequence
            if transcript.footer is not None or not live:
                row = summary(transcript, live=live)
                await response.write(_sse("ended", orjson.dumps({"state": state(row.status)})))
                break
        with contextlib.suppress(TimeoutError):
            async with asyncio.timeout(poll):
                await stopping.wait()
    return response


async def _script(request: web.Request) -> web.Response:
    return web.Response(
        body=(_HERE / "static" / "live.js").read_bytes(),
        content_type="text/javascript",
        charset="utf-8",
    )


async def _stop_streams(app: web.Application) -> None:
    app[_STOPPING].set()


def make_app(settings: ViewerSettings) -> web.Application:
    app = web.Application(middlewares=[_guard])
    app[_SETTINGS] = settings
    app[_READER] = ArchiveReader(settings.root)
    app[_PAGES] = _pages()
    app[_STOPPING] = asyncio.Event()
    app.on_shutdown.append(_stop_streams)
    app.router.add_get("/", _list)
    app.router.add_get("/session/{id}", _session)
    app.router.add_get("/session/{id}/events", _events)
    app.router.add_get("/static/live.js", _script)
    return app
