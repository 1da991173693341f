"""`corral transcripts serve` as a person meets it: a real server process, a real browser.

The server runs as `corral transcripts serve --port 0` (a free port, read
from the line it prints); headless Chromium loads the list and a session
page and the test reads the DOM Chromium built (`--dump-dom`), with the
page's own script run. A live session is followed twice while this test
appends to a transcript whose writer it holds: its event stream read
straight from the server, and the page in Chromium, driven and read over
the DevTools protocol, growing and then ending.
"""

from __future__ import annotations

import asyncio
import contextlib
import html
import os
import re
import select
import signal
import subprocess
import sys
import time
import urllib.request
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import aiohttp
import attrs
import pytest
from corral.pipeline.events import PromptOrigin, SystemTime, TextDelta, TurnStarted
from corral.pipeline.records import Opened, Prompted

from tests.integration import test_transcripts as _transcripts
from tests.support.waiting import retries
from tests.unit.transcript.helpers import T0, at, closed, event, opened, turn, writer

chromium = _transcripts.chromium  # the export tests' fixture: found, installed, or skip/fail

XSS = "<img src=x onerror=alert(1)><script>document.title='owned'</script>"


def _opened(day: int) -> Opened:
    return attrs.evolve(opened(), at=SystemTime.from_ns(T0 + day * 86_400 * 10**9))


@attrs.define
class Viewer:
    process: subprocess.Popen[str]
    url: str

    def get(self, path: str) -> str:
        with urllib.request.urlopen(self.url + path, timeout=30) as reply:
            return str(reply.read().decode())


def _served_at(process: subprocess.Popen[str], timeout: float = 60) -> str:
    """The URL from the line `serve` prints once bound (bounded wait, never a sleep)."""
    assert process.stderr is not None
    deadline, seen = time.monotonic() + timeout, ""
    while time.monotonic() < deadline:
        ready, _, _ = select.select([process.stderr], [], [], max(0.0, deadline - time.monotonic()))
        if not ready:
            break
        line = process.stderr.readline()
        seen += line
        found = re.search(r"at (http://127\.0\.0\.1:\d+)/", line)
        if found:
            return found.group(1)
        if not line:
            break
    raise AssertionError(f"`corral transcripts serve` did not say where it serves: {seen!r}")


@contextlib.contextmanager
def _serving(archive: Path) -> Iterator[Viewer]:
    """A real `corral transcripts serve` on a free port, ended by its pid (exit status 0)."""
    process = subprocess.Popen(
        [sys.executable, "-m", "corral.actors.cli", "transcripts", "serve", "--port", "0",
         "--transcripts", str(archive)],
        stderr=subprocess.PIPE, stdout=subprocess.DEVNULL, text=True,
    )  # fmt: skip
    try:
        yield Viewer(process, _served_at(process))
    finally:
        os.kill(process.pid, signal.SIGTERM)
        assert process.wait(timeout=30) == 0


@pytest.fixture
def viewer(tmp_path: Path) -> Iterator[Viewer]:
    archive = tmp_path / "archive"
    prompt = Prompted(session_id="s1", prompt_id="p1", text=f"check {XSS}", at=at(1))
    first = writer(archive / "2025-06-01" / "older.jsonl")
    first.write([_opened(1), prompt, *turn(1, "Two files: a.txt and b.txt"), closed(6)])
    second = writer(archive / "2025-06-02" / "newer.jsonl")
    second.write([_opened(2), *turn(1, f"quoting {XSS}"), closed(6)])
    with _serving(archive) as running:
        yield running


def _next_event(stream: Any) -> dict[str, str]:
    """One server-sent event's fields, read line by line (the socket timeout bounds it)."""
    fields: dict[str, str] = {}
    for raw in iter(stream.readline, b""):
        line = raw.decode().rstrip("\n")
        if not line:
            return fields
        name, _, value = line.partition(": ")
        fields[name] = value
    raise AssertionError(f"the stream ended mid-event: {fields}")


def _dom(browser: str, url: str, profile: Path) -> str:
    rendered = subprocess.run(
        [browser, "--headless", "--no-sandbox", "--disable-gpu",
         f"--user-data-dir={profile}", "--dump-dom", url],
        capture_output=True, text=True, timeout=180,
    )  # fmt: skip
    assert "<body" in rendered.stdout, rendered.stderr[-2000:]
    return rendered.stdout


def _visible(dom: str) -> str:
    return " ".join(html.unescape(re.sub(r"<[^>]+>", " ", dom)).split())


@pytest.mark.slow
def test_chromium_shows_the_list_and_a_session_page_from_a_real_server(
    chromium: str, viewer: Viewer, tmp_path: Path
) -> None:
    listing = _dom(chromium, viewer.url + "/", tmp_path / "profile")
    rows = re.findall(r'<tr class="session" data-id="([^"]+)"', listing)
    assert rows == ["newer", "older"]  # newest first
    shown = _visible(listing)
    assert "corral transcripts" in shown and "completed" in shown and "mock" in shown
    found = _dom(chromium, viewer.url + "/?q=a.txt", tmp_path / "profile")
    assert re.findall(r'<tr class="session" data-id="([^"]+)"', found) == ["older"]

    page = _dom(chromium, viewer.url + "/session/older#seq-3", tmp_path / "profile")
    shown = _visible(page)
    assert "corral transcript older" in shown and "all sessions" in shown
    assert "Two files: a.txt and b.txt" in shown
    assert f"check {XSS}" in shown  # the prompt, as text
    assert 'id="turn-t1"' in page and 'id="seq-3"' in page
    # #seq-4 (the message's end) is folded into the message's block: the link lands there
    folded = _dom(chromium, viewer.url + "/session/older#seq-4", tmp_path / "profile")
    (target,) = re.findall(r"<[^>]*corral-target[^>]*>", folded)
    assert 'id="seq-3"' in target
    other = _dom(chromium, viewer.url + "/session/newer", tmp_path / "profile")
    assert f"quoting {XSS}" in _visible(other)
    for dom in (page, other):
        assert "<img" not in dom, dom[dom.index("<img") - 200 :][:400]  # no element of theirs
        assert "<title>corral transcript" in dom  # their script did not retitle the page


def test_the_server_streams_a_live_session_s_new_events_as_they_are_written(
    tmp_path: Path,
) -> None:
    archive = tmp_path / "archive"
    live = writer(archive / "2025-06-01" / "live.jsonl")
    live.write([_opened(1), *turn(1, "first")])
    with _serving(archive) as viewer:
        assert 'data-live="yes"' in viewer.get("/session/live")
        with urllib.request.urlopen(viewer.url + "/session/live/events?after=6", timeout=30) as sse:
            live.write([event(7, TurnStarted(PromptOrigin("p2"))),
                        event(8, TextDelta(message_id="m2", text="a new answer"))])  # fmt: skip
            started, answered = _next_event(sse), _next_event(sse)
            assert (started["event"], started["id"]) == ("transcript", "7")
            assert (answered["event"], answered["id"]) == ("transcript", "8")
            assert '"text":"a new answer"' in answered["data"]
            live.write([closed(8)])
            assert _next_event(sse) == {"event": "ended", "data": '{"state":"completed"}'}
            assert sse.readline() == b""  # the stream ends with the session
        assert "a new answer" in viewer.get("/session/live")


class DevTools:
    """One page of a headless Chromium, driven over the DevTools protocol (aiohttp's websocket)."""

    def __init__(self, socket: aiohttp.ClientWebSocketResponse) -> None:
        self.socket = socket
        self.calls = 0

    async def call(self, method: str, **params: Any) -> dict[str, Any]:
        self.calls += 1
        await self.socket.send_json({"id": self.calls, "method": method, "params": params})
        while True:  # events of the page come in between; the reply carries our id
            message = await asyncio.wait_for(self.socket.receive_json(), 60)
            if message.get("id") == self.calls:
                result: dict[str, Any] = message.get("result", {})
                return result

    async def text(self) -> str:
        reply = await self.call(
            "Runtime.evaluate", expression="document.body ? document.body.innerText : ''",
            returnByValue=True,
        )  # fmt: skip
        return str(reply["result"].get("value", ""))

    async def shows(self, wanted: str, *, timeout: float = 30) -> str:
        async for _ in retries(timeout=timeout, what=f"the page to show {wanted!r}"):
            if wanted in (shown := await self.text()):
                return shown
        raise AssertionError  # unreachable: retries raises when time runs out


@contextlib.asynccontextmanager
async def _devtools(browser: str, profile: Path) -> AsyncIterator[DevTools]:
    process = await asyncio.create_subprocess_exec(
        browser, "--headless", "--no-sandbox", "--disable-gpu", f"--user-data-dir={profile}",
        "--remote-debugging-port=0", "about:blank",
        stdout=asyncio.subprocess.DEVNULL, stderr=asyncio.subprocess.PIPE,
    )  # fmt: skip
    try:
        assert process.stderr is not None
        seen = b""
        while b"DevTools listening on" not in seen:
            line = await asyncio.wait_for(process.stderr.readline(), 120)
            assert line, f"Chromium ended before its DevTools listened: {seen[-2000:]!r}"
            seen += line
        port = re.search(rb"ws://127\.0\.0\.1:(\d+)/", seen)
        assert port is not None, seen[-2000:]
        async with aiohttp.ClientSession() as http:
            base = f"http://127.0.0.1:{int(port.group(1))}"
            async with http.get(base + "/json/list") as reply:
                pages = [t for t in await reply.json() if t["type"] == "page"]
            async with http.ws_connect(pages[0]["webSocketDebuggerUrl"], max_msg_size=0) as ws:
                yield DevTools(ws)
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.kill(process.pid, signal.SIGKILL)  # by pid: the browser this test started
        await process.wait()


@pytest.mark.slow
async def test_chromium_shows_a_live_session_growing_and_ending(
    chromium: str, tmp_path: Path
) -> None:
    archive = tmp_path / "archive"
    live = writer(archive / "2025-06-01" / "live.jsonl")
    live.write([_opened(1), *turn(1, "the first answer")])
    with _serving(archive) as viewer:
        async with _devtools(chromium, tmp_path / "profile") as page:
            await page.call("Page.navigate", url=viewer.url + "/session/live")
            assert "updating as the session goes on" in await page.shows("the first answer")
            # The page rendered up to sequence 6; whatever is written after it, before or
            # after its stream connects, comes through the stream and the page fetches it.
            await asyncio.to_thread(live.write, turn(7, "a second answer, written later"))
            await page.shows("a second answer, written later")
            await asyncio.to_thread(live.write, [closed(12, turns=2)])
            shown = await page.shows("ended: completed")
            assert shown.startswith("← all sessions · completed ·")  # the state, no longer live
            await page.shows("ended: closed")  # the renderer's footer, fetched again
