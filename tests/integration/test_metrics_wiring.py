"""The metrics are wired where the issue says: the Runtime, `serve`, `demo`.

Each test here fails when one piece of wiring goes missing, which no unit
test of the metrics sink can see: `Runtime(metrics=...)` must add the
sink (sessions, turns), the observer (agent processes) and the channels
(queues, live and retired); `corral serve` must count its lines and leave
metrics off unless `--metrics` is given; `corral demo` must serve them by
default; every exposition binds loopback only.

Sockets are read from /proc: the TCP sockets in LISTEN state whose inode
is one of the process's file descriptors (Linux only).
"""

from __future__ import annotations

import asyncio
import json
import os
import socket
import sys
import urllib.request
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
import pytest_asyncio
from corral.actors.runtime import Runtime
from corral.pipeline.events import TurnEnded
from corral.sinks.metrics import Metrics, MetricsBoundError
from corral.sources.mock import parse_script
from prometheus_client.parser import text_string_to_metric_families

from tests.support.serve import ServeProcess

pytestmark = pytest.mark.skipif(not Path("/proc/self/net/tcp").exists(), reason="needs /proc")

STARTUP = 60.0
# One turn in a child process (so there is an agent process to count).
SCRIPT = {
    "process": True,
    "turns": [
        [
            {"Emit": {"TextDelta": {"message_id": "m1", "text": "hi"}}},
            {"End": {"Completed": {"source": "Protocol"}}},
        ]
    ],
}

Samples = dict[tuple[str, frozenset[tuple[str, str]]], float]


# ---- sockets and expositions -------------------------------------------------------


def _address(hex_address: str) -> tuple[str, int]:
    """A /proc/net/tcp{,6} local address ("0100007F:1F90") as (host, port)."""
    host_hex, port_hex = hex_address.split(":")
    raw = bytes.fromhex(host_hex)
    words = b"".join(raw[i : i + 4][::-1] for i in range(0, len(raw), 4))  # host byte order
    family = socket.AF_INET if len(raw) == 4 else socket.AF_INET6
    return socket.inet_ntop(family, words), int(port_hex, 16)


def listening(pid: int) -> set[tuple[str, int]]:
    """(host, port) of every TCP socket process `pid` listens on."""
    inodes = set()
    for fd in Path(f"/proc/{pid}/fd").iterdir():
        try:
            target = os.readlink(fd)
        except OSError:
            continue  # closed meanwhile
        if target.startswith("socket:["):
            inodes.add(target.removeprefix("socket:[").removesuffix("]"))
    found = set()
    for table in ("tcp", "tcp6"):
        for row in Path(f"/proc/{pid}/net/{table}").read_text().splitlines()[1:]:
            fields = row.split()
            if fields[3] == "0A" and fields[9] in inodes:  # 0A: LISTEN
                found.add(_address(fields[1]))
    return found


def samples(text: str) -> Samples:
    return {
        (sample.name, frozenset(sample.labels.items())): sample.value
        for family in text_string_to_metric_families(text)
        for sample in family.samples
    }


def value(found: Samples, name: str, **labels: str) -> float:
    return found.get((name, frozenset(labels.items())), 0.0)


def scrape(url: str) -> Samples:
    with urllib.request.urlopen(url, timeout=30) as response:  # loopback only
        return samples(response.read().decode())


async def metrics_url(stderr: asyncio.StreamReader) -> str:
    """The URL corral reports on stderr ("corral: metrics on URL")."""
    async with asyncio.timeout(STARTUP):
        while line := (await stderr.readline()).decode():
            if "metrics on " in line:
                return line.rsplit("metrics on ", 1)[1].strip()
    raise AssertionError("corral exited without serving metrics")


def port_of(url: str) -> int:
    assert url.startswith("http://127.0.0.1:") and url.endswith("/metrics"), url
    return int(url.removeprefix("http://127.0.0.1:").removesuffix("/metrics"))


# ---- corral serve --------------------------------------------------------------------


@pytest_asyncio.fixture
async def script_path(tmp_path: Path) -> Path:
    path = tmp_path / "script.json"
    path.write_text(json.dumps(SCRIPT))
    return path


async def start(script_path: Path, *args: str) -> ServeProcess:
    home = script_path.parent / "home"
    serve = await ServeProcess.start(
        "--mock", str(script_path), *args, env={"CORRAL_HOME": str(home)}
    )
    await serve.wait_for(lambda line: "hello" in line, timeout=STARTUP)
    return serve


@pytest_asyncio.fixture
async def stopping() -> AsyncIterator[list[ServeProcess]]:
    """Serve processes to stop at the end: cleanly, else killed."""
    started: list[ServeProcess] = []
    yield started
    for serve in started:
        try:
            assert await serve.finish(timeout=60) == 0
        finally:
            await serve.kill()


async def one_turn(serve: ServeProcess, directory: Path, *, close: bool = True) -> str:
    info = await serve.ok({"cmd": "open", "agent": "mock", "dir": str(directory)})
    await serve.ok({"cmd": "prompt", "session": info["id"], "text": "go"})
    await serve.wait_event(info["id"], "TurnEnded", timeout=STARTUP)
    if close:
        await serve.ok({"cmd": "close", "session": info["id"]})
        await serve.wait_for(lambda line: line.get("closed") == info["id"], timeout=STARTUP)
    return str(info["id"])


async def test_serve_without_metrics_listens_on_no_port(
    script_path: Path, tmp_path: Path, stopping: list[ServeProcess]
) -> None:
    serve = await start(script_path)
    stopping.append(serve)
    await one_turn(serve, tmp_path, close=False)  # everything a session starts, started
    assert listening(serve.process.pid) == set()


async def test_serve_with_metrics_listens_on_loopback_only(
    script_path: Path, stopping: list[ServeProcess]
) -> None:
    serve = await start(script_path, "--metrics", ":0")  # no host: loopback
    stopping.append(serve)
    assert serve.process.stderr is not None
    port = port_of(await metrics_url(serve.process.stderr))
    assert listening(serve.process.pid) == {("127.0.0.1", port)}


async def test_serve_with_metrics_counts_sessions_processes_lines_and_retired_queues(
    script_path: Path, tmp_path: Path, stopping: list[ServeProcess]
) -> None:
    serve = await start(script_path, "--metrics", "127.0.0.1:0")
    stopping.append(serve)
    assert serve.process.stderr is not None
    url = await metrics_url(serve.process.stderr)
    await one_turn(serve, tmp_path)  # no scrape while it ran: only retiring keeps its queues
    found = await asyncio.to_thread(scrape, url)
    assert value(found, "corral_sessions_started_total", agent="mock") == 1
    assert value(found, "corral_sessions_ended_total", agent="mock", outcome="closed") == 1
    assert value(found, "corral_turns_ended_total", agent="mock", stop="Completed") == 1
    assert value(found, "corral_agent_process_starts_total", agent="mock") == 1
    assert value(found, "corral_channel_items_sent_total", queue="driver") > 0
    events = sum(1 for line in serve.lines if "event" in line)
    assert value(found, "corral_line_messages_total", type="hello") == 1
    assert value(found, "corral_line_messages_total", type="event") == events
    assert value(found, "corral_line_messages_total", type="closed") == 1


async def test_serve_with_metrics_reads_live_session_and_line_writer_queues(
    script_path: Path, tmp_path: Path, stopping: list[ServeProcess]
) -> None:
    serve = await start(script_path, "--metrics", "127.0.0.1:0")
    stopping.append(serve)
    assert serve.process.stderr is not None
    url = await metrics_url(serve.process.stderr)
    await one_turn(serve, tmp_path, close=False)
    found = await asyncio.to_thread(scrape, url)
    assert value(found, "corral_channels_live", queue="driver") == 1
    assert value(found, "corral_channels_live", queue="engine") == 1
    assert value(found, "corral_channels_live", queue="lines/replies") == 1
    assert value(found, "corral_channels_live", queue="lines/sessions") == 1


# ---- corral demo ---------------------------------------------------------------------


@pytest_asyncio.fixture
async def demo(tmp_path: Path) -> AsyncIterator[asyncio.subprocess.Process]:
    """`corral demo` with its default metrics, slowed down so it is still running."""
    process = await asyncio.create_subprocess_exec(
        *(sys.executable, "-m", "corral.actors.cli", "demo", "--speed", "0.05"),
        *("--no-color", "--no-transcripts"),
        stdout=asyncio.subprocess.DEVNULL,
        stderr=asyncio.subprocess.PIPE,
        env={**os.environ, "CORRAL_HOME": str(tmp_path / "home")},
    )
    try:
        yield process
    finally:
        if process.returncode is None:
            process.kill()
        await process.wait()


async def test_demo_serves_metrics_on_loopback_by_default(
    demo: asyncio.subprocess.Process,
) -> None:
    assert demo.stderr is not None
    url = await metrics_url(demo.stderr)
    assert listening(demo.pid) == {("127.0.0.1", port_of(url))}
    found = await asyncio.to_thread(scrape, url)
    assert demo.returncode is None, "the demo ended before the scrape"
    assert [v for (name, _), v in found.items() if name == "corral_build_info"] == [1.0]


# ---- Runtime(metrics=...) ------------------------------------------------------------


def runtime(metrics: Metrics) -> Runtime:
    return Runtime(mock=parse_script(SCRIPT), metrics=metrics, transcripts=False)


async def play_one_turn(rt: Runtime, directory: Path) -> Any:
    session = await rt.open("mock", str(directory))
    events = session.events()
    await session.prompt("go")
    async with asyncio.timeout(STARTUP):
        async for event in events:
            if isinstance(event.kind, TurnEnded):
                break
    return session


async def test_a_runtime_with_metrics_records_sessions_turns_processes_and_queues(
    tmp_path: Path,
) -> None:
    metrics = Metrics(version="test")
    async with runtime(metrics) as rt:
        session = await play_one_turn(rt, tmp_path)
        live = samples(metrics.render()[0].decode())
        await session.close()
        await session.wait_closed()
    assert value(live, "corral_sessions_started_total", agent="mock") == 1
    assert value(live, "corral_turns_ended_total", agent="mock", stop="Completed") == 1
    assert value(live, "corral_agent_process_starts_total", agent="mock") == 1
    assert value(live, "corral_channels_live", queue="driver") == 1


async def test_a_runtime_retires_its_sessions_queues_with_their_totals(tmp_path: Path) -> None:
    metrics = Metrics(version="test")
    async with runtime(metrics) as rt:
        session = await play_one_turn(rt, tmp_path)  # never scraped while it ran
        await session.close()
        await session.wait_closed()
        ended = samples(metrics.render()[0].decode())
    assert value(ended, "corral_channels_live", queue="driver") == 0
    assert value(ended, "corral_channel_items_sent_total", queue="driver") > 0


def test_a_second_runtime_cannot_share_a_metrics() -> None:
    metrics = Metrics(version="test")
    runtime(metrics)
    with pytest.raises(MetricsBoundError, match="one registry per Runtime"):
        runtime(metrics)
