"""`corral transcripts serve`'s routes, through aiohttp's test client, on archives written here."""

from __future__ import annotations

import asyncio
import hashlib
import html
import re
import sys
from collections.abc import AsyncIterator
from pathlib import Path

import attrs
import pytest
from aiohttp import web
from aiohttp.test_utils import TestClient, TestServer
from corral.actors.cli import main
from corral.pipeline.events import (
    CommandInput,
    ContextUsage,
    PromptOrigin,
    SystemTime,
    TextDelta,
    ToolKind,
    ToolStatus,
    ToolUpdate,
    ToolUpdated,
    TurnStarted,
)
from corral.pipeline.records import Opened, Prompted
from corral.sinks.transcript import read_transcript, repair
from corral.sinks.transcript._paths import files_of
from corral.sinks.transcript._render import render_html
from corral.sinks.transcript._viewer._app import ViewerSettings, make_app
from corral.sinks.transcript._viewer._listing import state
from yarl import URL

from .helpers import T0, at, closed, event, opened, turn, writer

Client = TestClient[web.Request, web.Application]
XSS = '<script>alert("x")</script><img src=x onerror=alert(1)>'


def _opened(day: int) -> Opened:
    return attrs.evolve(opened(), at=SystemTime.from_ns(T0 + day * 86_400 * 10**9))


def _finished(root: Path, name: str, day: int, text: str, *, cost: float = 0.0) -> Path:
    path = root / f"2025-06-0{day}" / f"{name}.jsonl"
    usage = event(7, ContextUsage(used_tokens=50, cost_usd=cost),
                  **{"corral/tokens": {"input": 30, "output": 12}})  # fmt: skip
    writer(path).write([_opened(day), *turn(1, text), usage, closed(7)])
    return path


def _client(root: Path) -> Client:
    app = make_app(ViewerSettings(root=root, poll=0.02))
    return TestClient(TestServer(app, host="127.0.0.1"))


@pytest.fixture
async def archive(tmp_path: Path) -> Path:
    _finished(tmp_path, "older", 1, "alpha answer", cost=0.25)
    _finished(tmp_path, "newer", 2, "walrus answer")
    unfinished = writer(tmp_path / "2025-06-03" / "crashed.jsonl")
    unfinished.write([_opened(3), *turn(1, "half")])
    unfinished.abandon()
    return tmp_path


@pytest.fixture
async def client(archive: Path) -> AsyncIterator[Client]:
    async with _client(archive) as running:
        yield running


def _ids(page: str) -> list[str]:
    return re.findall(r'<tr class="session" data-id="([^"]+)"', page)


def _text(page: str) -> str:
    return html.unescape(re.sub(r"<[^>]+>", " ", page))


async def test_the_list_shows_every_session_newest_first_with_its_columns(
    client: Client,
) -> None:
    reply = await client.get("/")
    page = await reply.text()
    assert reply.status == 200 and reply.content_type == "text/html"
    assert _ids(page) == ["crashed", "newer", "older"]
    older = _text(page[page.index('data-id="older"') :].split("</tr>")[0])
    assert "mock" in older and "completed" in older and "$0.2500" in older
    assert "42" in older and "2025" in older and "1" in older.split()
    crashed = _text(page[page.index('data-id="crashed"') :].split("</tr>")[0])
    assert "interrupted" in crashed


async def test_the_list_filters_by_status_and_agent(client: Client) -> None:
    assert _ids(await (await client.get("/?status=interrupted")).text()) == ["crashed"]
    assert _ids(await (await client.get("/?status=completed")).text()) == ["newer", "older"]
    assert _ids(await (await client.get("/?agent=mock")).text()) == ["crashed", "newer", "older"]
    assert _ids(await (await client.get("/?agent=claude")).text()) == []


async def test_search_goes_through_the_index_and_links_to_the_event(
    client: Client,
) -> None:
    page = await (await client.get("/", params={"q": "walrus"})).text()
    assert _ids(page) == ["newer"]
    assert 'href="/session/newer#seq-3"' in page


async def test_the_session_page_is_the_export_renderer_s_page_with_deep_links(
    client: Client, archive: Path
) -> None:
    reply = await client.get("/session/older")
    page = await reply.text()
    assert reply.status == 200
    exported = render_html(read_transcript(files_of(archive / "2025-06-01" / "older.jsonl")))
    body = exported[exported.index("<body>") + 6 : exported.rindex("</body>")]
    assert body in page  # the same renderer, called, not copied
    assert 'id="turn-t1"' in page and 'id="seq-3"' in page
    assert '<script src="/static/live.js" defer></script>' in page
    assert 'data-live="no"' in page and "completed" in page
    script = await client.get("/static/live.js")
    assert script.status == 200 and "EventSource" in await script.text()


async def test_agent_written_markup_renders_as_text_everywhere(tmp_path: Path) -> None:
    path = tmp_path / "2025-06-01" / "xss.jsonl"
    tool = ToolUpdate(id="c1", kind=ToolKind.EXECUTE, title=XSS, status=ToolStatus.COMPLETED,
                      input=CommandInput(command=XSS), output=XSS)  # fmt: skip
    writer(path).write([
        opened(), Prompted(session_id="s1", prompt_id="p1", text=XSS, at=at(1)),
        event(1, TurnStarted(PromptOrigin("p1"))), event(2, ToolUpdated(tool)),
        event(3, TextDelta(message_id="m1", text=f"xssword {XSS}")), closed(3),
    ])  # fmt: skip
    async with _client(tmp_path) as client:
        pages = [
            await (await client.get("/session/xss")).text(),
            await (await client.get("/", params={"q": "xssword"})).text(),
            await (await client.get("/", params={"q": XSS, "agent": XSS})).text(),
        ]
        reply = await client.get("/session/xss")
    for page in pages:
        assert "<script>alert" not in page and "<img src=x" not in page
    assert html.escape(XSS) in pages[0]
    assert "script-src 'self'" in reply.headers["Content-Security-Policy"]


async def test_no_route_writes_and_an_unfinished_transcript_is_left_as_it_is(
    client: Client, archive: Path
) -> None:
    def digests() -> dict[str, str]:
        return {
            str(p): hashlib.sha256(p.read_bytes()).hexdigest() for p in archive.rglob("*.jsonl*")
        }

    before = digests()
    for path in ("/", "/?q=walrus", "/session/crashed", "/session/older"):
        assert (await client.get(path)).status == 200
    for method in ("POST", "PUT", "DELETE", "PATCH"):
        assert (await client.request(method, "/session/older")).status == 405
        assert (await client.request(method, "/")).status == 405
    assert digests() == before  # the crashed one is not repaired by looking at it


@pytest.mark.parametrize(
    "path",
    [
        "/session/..%2F..%2Fetc%2Fpasswd",
        "/session/%2E%2E",
        "/session/2025-06-01%2Folder",
        "/session/old",  # a prefix is not an id here
        "/session/older%00",
        "/session/..%2F2025-06-01%2Folder/events",
    ],
)
async def test_a_session_id_that_is_not_exactly_one_transcript_is_not_found(
    client: Client, path: str
) -> None:
    reply = await client.get(URL(path, encoded=True))  # as written: no client-side `..` folding
    assert reply.status == 404
    assert "root:" not in await reply.text()


async def test_a_request_naming_another_host_is_refused(
    client: Client,
) -> None:
    reply = await client.get("/", headers={"Host": "attacker.example:8765"})
    assert reply.status == 421


async def _read_event(content: object) -> dict[str, str]:
    fields: dict[str, str] = {}
    while True:
        line = (await content.readline()).decode()  # type: ignore[attr-defined]
        if line in ("\n", ""):
            return fields
        name, _, value = line.rstrip("\n").partition(": ")
        fields[name] = value


async def test_a_live_session_s_event_stream_delivers_each_new_event_then_ends(
    tmp_path: Path,
) -> None:
    live = writer(tmp_path / "2025-06-01" / "live.jsonl")
    live.write([opened(), *turn(1, "first")])
    async with _client(tmp_path) as client:
        page = await (await client.get("/session/live")).text()
        assert 'data-live="yes"' in page and 'data-after="6"' in page
        assert "live" in _text(await (await client.get("/?status=live")).text())
        stream = await client.get("/session/live/events", params={"after": "6"})
        assert stream.content_type == "text/event-stream"
        live.write(turn(7, "second answer"))
        got = await asyncio.wait_for(_read_event(stream.content), 10)
        assert got["event"] == "transcript" and got["id"] == "7"
        assert '"sequence":7' in got["data"] and "TurnStarted" in got["data"]
        seqs = [int((await asyncio.wait_for(_read_event(stream.content), 10))["id"])
                for _ in range(5)]  # fmt: skip
        assert seqs == [8, 9, 10, 11, 12]
        live.write([closed(12, turns=2)])
        ended = await asyncio.wait_for(_read_event(stream.content), 10)
        assert ended == {"event": "ended", "data": '{"state":"completed"}'}
        assert "second answer" in await (await client.get("/session/live")).text()


def test_states_fold_the_end_reasons_a_person_reads() -> None:
    assert [state(s) for s in ("closed", "failed", "unfinished", "interrupted", "live")] == [
        "completed", "failed", "interrupted", "repaired", "live",
    ]  # fmt: skip
    assert state("closed (incomplete)") == "completed"


def test_serve_refuses_a_remote_address_without_allow_remote(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    status = main(["transcripts", "serve", "--host", "0.0.0.0", "--transcripts", str(tmp_path)])
    assert status == 1
    err = capsys.readouterr().err
    assert "refusing to serve the archive on 0.0.0.0" in err and "--allow-remote" in err


def test_serve_without_the_viewer_extra_says_how_to_install_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    for name in list(sys.modules):
        lazy = name.startswith(("aiohttp", "corral.sinks.transcript._viewer._"))
        if lazy and not name.endswith(("_command", "_listing", "_reading")):
            monkeypatch.delitem(sys.modules, name)
    monkeypatch.setitem(sys.modules, "aiohttp", None)
    status = main(["transcripts", "serve", "--transcripts", str(tmp_path)])
    err = capsys.readouterr().err
    assert status == 1
    assert err == "corral: `transcripts serve` needs the viewer extra: pip install " \
        "'corral[viewer]' (aiohttp and Jinja2)\n"  # fmt: skip


def test_only_loopback_is_served_without_allow_remote_and_remote_is_warned_about() -> None:
    from corral.sinks.transcript._viewer._server import RemoteRefused, check_host

    for host in ("127.0.0.1", "localhost", "::1", "127.0.0.2"):
        assert check_host(host, allow_remote=False) is None
    for host in ("0.0.0.0", "192.168.1.5", "::", "example.com"):
        with pytest.raises(RemoteRefused):
            check_host(host, allow_remote=False)
        warning = check_host(host, allow_remote=True)
        assert warning is not None and "anyone who can reach this address" in warning


async def test_a_transcript_corral_repaired_is_listed_as_repaired(archive: Path) -> None:
    assert repair(files_of(archive / "2025-06-03" / "crashed.jsonl")) is not None
    async with _client(archive) as client:
        page = await (await client.get("/?status=repaired")).text()
        missing = await client.get("/session/nothing-here")
    assert _ids(page) == ["crashed"]
    assert missing.status == 404  # and an error page carries the same policy
    assert "script-src 'self'" in missing.headers["Content-Security-Policy"]
