"""`corral serve` under stress, as a real process: a slow app, a vanished app,
SIGTERM and SIGINT with live sessions. Nothing is lost, memory stays bounded,
no agent process outlives corral."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import sys
from pathlib import Path
from typing import Any

import orjson
import pytest
from corral.sinks.transcript import find_transcripts, read_transcript

from tests.support.schema import check_line
from tests.support.serve import ServeProcess
from tests.support.waiting import until

from .helpers import alive, children_of

EVENTS = 30_000
CHATTY = {
    "process": True,
    "turns": [
        [
            {
                "Repeat": {
                    "times": EVENTS,
                    "steps": [
                        {"Emit": {"TextDelta": {"message_id": "m1", "text": "0123456789" * 10}}}
                    ],
                }
            },
            {"End": {"Completed": {"source": "Protocol"}}},
        ]
    ],
}
IDLE_FOREVER = {"process": True, "turns": [[{"Sleep": 600_000}]]}


def rss_kib(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    return 0


async def start_raw(script_path: str) -> asyncio.subprocess.Process:
    return await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "corral.actors.cli",
        "serve",
        "--mock",
        script_path,
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
        limit=64 * 1024 * 1024,
    )


async def send(process: asyncio.subprocess.Process, command: dict[str, Any]) -> None:
    assert process.stdin is not None
    process.stdin.write(json.dumps(command).encode() + b"\n")
    await process.stdin.drain()


async def open_and_prompt(process: asyncio.subprocess.Process, tmp_path: Path) -> list[Any]:
    """Open s1 and prompt it once the open reply arrived; the lines read so far."""
    assert process.stdout is not None
    await send(process, {"id": 1, "cmd": "open", "agent": "mock", "dir": str(tmp_path)})
    seen = []
    async with asyncio.timeout(30):
        while True:
            line = orjson.loads(await process.stdout.readline())
            check_line(line)
            seen.append(line)
            if line.get("id") == 1:
                break
    await send(process, {"id": 2, "cmd": "prompt", "session": "s1", "text": "go"})
    return seen


async def test_an_app_that_stops_reading_for_ten_seconds_loses_nothing(
    write_script: Any, tmp_path: Path
) -> None:
    process = await start_raw(write_script(CHATTY))
    assert process.stdout is not None
    lines = await open_and_prompt(process, tmp_path)
    # The app reads nothing for ten seconds: corral and its agent must wait, not buffer.
    samples = []
    for _ in range(10):
        await asyncio.sleep(1)
        samples.append(rss_kib(process.pid) + sum(rss_kib(c) for c in children_of(process.pid)))
    assert max(samples) - samples[2] < 30_000, f"memory grew while the app stalled: {samples}"
    async with asyncio.timeout(120):
        while raw := await process.stdout.readline():
            line = orjson.loads(raw)
            check_line(line)
            lines.append(line)
            if line.get("event", {}).get("kind", {}).get("TurnEnded"):
                break
    events = [line["event"] for line in lines if "event" in line]
    assert [e["sequence"] for e in events] == list(range(1, len(events) + 1))
    assert sum(1 for e in events if "TextDelta" in e["kind"]) == EVENTS
    process.stdin.close()  # type: ignore[union-attr]
    assert await asyncio.wait_for(process.wait(), 30) == 0


async def test_an_app_that_disappears_shuts_corral_down_cleanly(
    write_script: Any, tmp_path: Path
) -> None:
    process = await start_raw(write_script(CHATTY))
    await open_and_prompt(process, tmp_path)
    await until(lambda: children_of(process.pid), timeout=30, what="corral's agent")
    agents = children_of(process.pid)
    await process.stdout.read(1000)  # type: ignore[union-attr]
    process._transport.get_pipe_transport(1).close()  # type: ignore[attr-defined]  # the app's end of stdout
    code = await asyncio.wait_for(process.wait(), 30)
    stderr = await process.stderr.read()  # type: ignore[union-attr]
    assert code == 0, stderr.decode()[-3000:]
    assert b"closed its end of stdout" in stderr
    assert not any(alive(pid) for pid in agents)


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGINT])
async def test_a_signal_closes_every_live_session_and_leaves_no_agent_behind(
    write_script: Any, tmp_path: Path, signum: signal.Signals, corral_home: Path
) -> None:
    serve = await ServeProcess.start("--mock", write_script(IDLE_FOREVER))
    try:
        first = await serve.ok({"cmd": "open", "agent": "mock", "dir": str(tmp_path)})
        second = await serve.ok({"cmd": "open", "agent": "mock", "dir": str(tmp_path)})
        await serve.ok({"cmd": "prompt", "session": first["id"], "text": "work"})
        await serve.wait_event(first["id"], "TurnStarted")
        agents = children_of(serve.process.pid)
        assert len(agents) == 2
        os.kill(serve.process.pid, signum)
        assert await serve.finish() == (130 if signum == signal.SIGINT else 0)
        closed = sorted(line["closed"] for line in serve.lines if "closed" in line)
        assert closed == sorted([first["id"], second["id"]])
        ended = [e for e in serve.events(first["id"]) if "TurnEnded" in e["kind"]]
        assert ended[0]["kind"]["TurnEnded"]["stop"] == "Cancelled"
        assert not any(alive(pid) for pid in agents)
        # Every transcript was closed and flushed: a footer, no torn line, and
        # the same events the app saw.
        transcripts = [read_transcript(f) for f in find_transcripts(corral_home / "transcripts")]
        assert sorted(t.header.session_id for t in transcripts if t.header) == closed
        for transcript in transcripts:
            assert transcript.footer is not None and transcript.torn_bytes == 0
            assert not transcript.problems
            assert transcript.header is not None
            seen = [e["sequence"] for e in serve.events(transcript.header.session_id)]
            assert [e.sequence for e in transcript.events()] == seen
    finally:
        await serve.kill()
