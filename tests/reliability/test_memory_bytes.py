"""Memory bounded in bytes, not only in items, measured as resident memory.

- A channel bounds the bytes it holds as well as the count (`max_bytes`),
  and still admits an item larger than the bound when it is empty alone.
- An agent writing huge lines (50 of 20 MB, over the 16 MB line cap) has
  them refused as they stream in: `corral serve`'s peak resident memory
  (VmHWM of the real process) stays below one such line held twice.
- An agent writing many large lines under the cap while the app does not
  read: the byte-bounded channels stop the agent (backpressure) before the
  lines pile up; the serve process's peak memory stays under a stated
  bound, and every event arrives, in order, once the app reads again.
- A JSON-RPC agent (Codex, ACP agents) writing a 20 MiB line has it
  refused at the 16 MiB cap, as for every live agent, never held whole.
- An agent that asks permission without end: past `MAX_OPEN_REQUESTS` each
  request is declined at once, with a Warning Diagnostic, so the open
  requests a session tracks (and its memory) stay bounded.
"""

from __future__ import annotations

import asyncio
import json
import os
import tracemalloc
from collections.abc import AsyncIterator
from pathlib import Path
from typing import cast

import pytest
import pytest_asyncio
from corral.actors.engine._requests import MAX_OPEN_REQUESTS
from corral.pipeline.channels import Channel
from corral.pipeline.driver import RequestAsked, Respond, TurnBegan
from corral.pipeline.events import (
    CommandInput,
    Diagnostic,
    DiagnosticLevel,
    PermissionAnswer,
    PermissionChoice,
    PermissionRequest,
    ToolKind,
    ToolStatus,
    ToolUpdate,
)
from corral.sources._jsonrpc import Incoming, JsonRpcPeer, WireNoise
from corral.sources._process import AgentProcess

from tests.reliability.helpers import END, children_of, text
from tests.support.serve import ServeProcess
from tests.support.waiting import settled, until
from tests.unit.engine.harness import decisions, events, make_engine, sent

MiB = 1024 * 1024
STARTUP = 30.0


def _kib(pid: int, field: str) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith(f"{field}:"):
            return int(line.split()[1])
    raise AssertionError(f"no {field} for {pid}")


# ---- the channel's byte bound ----------------------------------------------------------------


async def test_a_channel_bounds_the_bytes_it_holds() -> None:
    channel: Channel[bytes] = Channel(100, name="b", max_bytes=10, size=len)
    assert channel.try_send(b"x" * 6)
    assert not channel.try_send(b"y" * 6)  # 12 bytes > 10, though 1 item < 100
    assert channel.try_send(b"z" * 4)
    stats = channel.statistics()
    assert (stats.depth, stats.bytes, stats.max_bytes) == (2, 10, 10)
    assert channel.try_receive() == b"x" * 6
    assert channel.statistics().bytes == 4


async def test_a_sender_waits_for_bytes_and_goes_on_when_they_leave() -> None:
    channel: Channel[bytes] = Channel(100, name="b", max_bytes=10, size=len)
    await channel.send(b"a" * 8)
    sending = asyncio.create_task(channel.send(b"b" * 8))
    await settled()
    assert not sending.done() and channel.statistics().waiting_senders == 1
    assert await channel.receive() == b"a" * 8
    async with asyncio.timeout(5):
        await sending
    assert await channel.receive_batch() == [b"b" * 8]
    assert channel.statistics().bytes == 0


async def test_an_item_larger_than_the_bound_passes_alone() -> None:
    channel: Channel[bytes] = Channel(100, name="b", max_bytes=10, size=len)
    await channel.send(b"s")
    sending = asyncio.create_task(channel.send(b"L" * 50))
    await settled()
    assert not sending.done()  # not beside another item...
    assert await channel.receive() == b"s"
    async with asyncio.timeout(5):
        await sending  # ...but alone, so nothing deadlocks
    assert channel.statistics().bytes == 50
    assert not channel.try_send(b"t")
    assert await channel.receive() == b"L" * 50


def test_a_byte_bound_needs_a_size() -> None:
    with pytest.raises(ValueError, match="both max_bytes and size"):
        Channel(4, max_bytes=10)
    with pytest.raises(ValueError, match="at least 1"):
        Channel(4, max_bytes=0, size=len)


# ---- a real corral serve ---------------------------------------------------------------------


@pytest_asyncio.fixture
async def serves() -> AsyncIterator[list[ServeProcess]]:
    started: list[ServeProcess] = []
    yield started
    for serve in started:
        await serve.kill()


async def _serve(tmp_path: Path, script: dict[str, object], serves: list[ServeProcess]) -> str:
    script_path = tmp_path / "script.json"
    script_path.write_text(json.dumps(script))
    serve = await ServeProcess.start(
        "--mock",
        str(script_path),
        "--no-transcripts",
        env={"CORRAL_HOME": str(tmp_path / "home")},
    )
    serves.append(serve)
    await serve.wait_for(lambda line: "hello" in line, timeout=STARTUP)
    opened = await serve.ok({"cmd": "open", "agent": "mock", "dir": str(tmp_path)})
    return str(opened["id"])


@pytest.mark.slow
async def test_fifty_lines_of_20_mb_are_refused_without_being_held(
    tmp_path: Path, serves: list[ServeProcess]
) -> None:
    script = {
        "process": True,
        "turns": [[{"Repeat": {"times": 50, "steps": [{"Flood": 20 * MiB}]}}, END]],
    }
    session = await _serve(tmp_path, script, serves)
    serve = serves[0]
    before = _kib(serve.process.pid, "VmRSS")
    await serve.ok({"cmd": "prompt", "session": session, "text": "flood"})
    await serve.wait_event(session, "TurnEnded", timeout=120)
    refused = [
        event
        for event in serve.events(session)
        if isinstance(event["kind"], dict)
        and event["kind"].get("Diagnostic", {}).get("level") == "Warning"
        and event["extensions"].get("corral/decode_error") == "oversized"
    ]
    assert len(refused) == 50
    grown = _kib(serve.process.pid, "VmHWM") - before
    # The splitter holds at most the cap (16 MiB) of a line before it refuses it, once: a
    # line held twice (the bytes and a copy, or decoded) would pass 32 MiB.
    assert grown < 28 * 1024, f"serve's peak memory grew by {grown} KiB"
    assert await serve.finish() == 0


@pytest.mark.slow
async def test_large_lines_wait_in_bounded_bytes_while_the_app_does_not_read(
    tmp_path: Path, serves: list[ServeProcess]
) -> None:
    lines, size = 40, 4 * MiB  # 160 MiB in all; every channel holds 256 items or more
    body = "y" * size
    script = {
        "process": True,
        "turns": [[{"Repeat": {"times": lines, "steps": [text(body)]}}, END]],
    }
    session = await _serve(tmp_path, script, serves)
    serve = serves[0]
    before = _kib(serve.process.pid, "VmRSS")
    await serve.ok({"cmd": "prompt", "session": session, "text": "talk"})
    serve.pause_reading()  # the app stops reading: corral must stop the agent
    await _agent_blocked(serve.process.pid, lines * size)
    grown = _kib(serve.process.pid, "VmHWM") - before
    serve.resume_reading()
    await serve.wait_event(session, "TurnEnded", timeout=120)
    texts = [
        event["kind"]["TextDelta"]["text"]
        for event in serve.events(session)
        if isinstance(event["kind"], dict) and "TextDelta" in event["kind"]
    ]
    assert len(texts) == lines and all(piece == body for piece in texts)  # nothing lost
    # Held whole, the 40 lines would be 160 MiB, several times over (decoded, encoded).
    assert grown < 120 * 1024, f"serve's peak memory grew by {grown} KiB"
    assert await serve.finish() == 0


async def _agent_blocked(serve_pid: int, total: int) -> None:
    """Until the agent (serve's child) has stopped writing, short of `total` bytes.

    It writes through the event loop, so a full pipe shows as a writer that writes
    nothing more (its written-bytes count unchanged across a second of looks) though it
    has more to say: stopped by backpressure.
    """
    async with asyncio.timeout(120):
        await until(lambda: children_of(serve_pid), timeout=120, what="corral's agent")
        (agent,) = children_of(serve_pid)
        still, written = 0, -1
        while still < 5:
            await asyncio.sleep(0.2)  # a look at the agent's state, repeated until it holds
            now = _io(agent, "wchar")
            assert now < total, "the agent wrote everything: nothing stopped it"
            still = still + 1 if now == written else 0
            written = now


def _io(pid: int, field: str) -> int:
    for line in Path(f"/proc/{pid}/io").read_text().splitlines():
        if line.startswith(f"{field}:"):
            return int(line.split()[1])
    raise AssertionError(f"no {field} for {pid}")


# ---- open requests per session ---------------------------------------------------------------


def _asking(request_id: str, command: str) -> RequestAsked:
    tool = ToolUpdate(
        id="tool1",  # one tool: the requests, not the tools, are what grows
        kind=ToolKind.EXECUTE,
        title="run",
        status=ToolStatus.PENDING,
        input=CommandInput(command=command),
    )
    options = (PermissionChoice.ALLOW_ONCE, PermissionChoice.DENY_ONCE)
    return RequestAsked(request=PermissionRequest(id=request_id, tool=tool, options=options))


def test_past_the_cap_a_request_is_declined_with_a_warning() -> None:
    engine, _ = make_engine()
    engine.prompt("go")
    engine.on_driver_event(TurnBegan())
    for n in range(MAX_OPEN_REQUESTS):
        engine.on_driver_event(_asking(f"r{n}", "make"))
    sent(engine)
    events(engine)
    engine.on_driver_event(_asking("over", "make"))
    assert len(engine.requests) == MAX_OPEN_REQUESTS and "over" not in engine.requests
    (declined,) = sent(engine)
    assert isinstance(declined, Respond) and declined.request_id == "over"
    assert declined.answer == PermissionAnswer(PermissionChoice.DENY_ONCE)
    (warning,) = events(engine)
    assert isinstance(warning.kind, Diagnostic) and warning.kind.level is DiagnosticLevel.WARNING
    assert warning.extensions["corral/declined_request"] == "over"
    assert decisions(engine)[-1].decided_by == "limit"
    engine.answer("r0", PermissionAnswer(PermissionChoice.ALLOW_ONCE))  # room again
    engine.on_driver_event(_asking("next", "make"))
    assert "next" in engine.requests


def test_an_agent_asking_without_end_keeps_the_session_memory_flat() -> None:
    engine, _ = make_engine()
    engine.prompt("go")
    engine.on_driver_event(TurnBegan())
    before = _kib(os.getpid(), "VmRSS")
    for n in range(20_000):  # 20,000 requests of 10 kB: 200 MB if all were kept open
        engine.on_driver_event(_asking(f"r{n}", f"{n:05d}" + "x" * 10_000))
        engine.outbox.clear()  # what the sinks take
        engine.to_driver.clear()  # what the agent is sent
    grown = _kib(os.getpid(), "VmRSS") - before
    assert grown < 32 * 1024, f"the test process grew by {grown} KiB"
    assert len(engine.requests) == MAX_OPEN_REQUESTS
    assert len(engine.closed_requests) <= 4096  # the closed ids it keeps are bounded too


# ---- a JSON-RPC agent's huge line ------------------------------------------------------------


class _HugeLineAgent:
    """An agent process whose stdout is one 20 MiB JSON-RPC notification, in 256 KiB reads."""

    def __init__(self) -> None:
        self._chunk = b"a" * (256 * 1024)  # one object, handed out again and again
        self._reads = [b'{"jsonrpc":"2.0","method":"session/update","params":{"text":"']
        self._reads += [self._chunk] * (20 * MiB // len(self._chunk))
        self._reads += [b'"}}\n']

    async def read(self) -> bytes:
        return self._reads.pop(0) if self._reads else b""


async def test_a_json_rpc_agents_20_mb_line_is_refused_as_it_streams() -> None:
    incoming: Channel[Incoming] = Channel(4, name="incoming")
    peer = JsonRpcPeer(cast(AgentProcess, _HugeLineAgent()))
    tracemalloc.start()
    try:
        await peer.pump(incoming)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    # Held up to the 16 MiB cap, once; a line kept, copied and decoded would be 60 MiB.
    assert peak < 20 * MiB, f"{peak} bytes at the peak"
    (noise,) = [item async for item in incoming]
    assert isinstance(noise, WireNoise) and "too long" in noise.reason
