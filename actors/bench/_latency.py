"""Latency: from the agent writing a line to the app reading the event.

A real `corral serve` runs the mock agent in process mode; the agent writes
text deltas stamped with `time.monotonic_ns()` (a clock both processes
share) at a steady rate; the bench reads serve's stdout and takes the
difference. First the maximum rate of that path is measured, then the
latency at 10 %, 50 % and 90 % of it. The baseline is a plain relay of the
same agent (parse each line, print it) at the same rate.

Each run starts with `_WARMUP` events that are not counted, in both: what
is measured is the steady state, not a process still starting (importing,
creating its first transcript), which a few hundred samples' p99 would
otherwise be about.
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
import tempfile
import time
from collections.abc import Sequence

import attrs
import orjson

from ._scratch import scratch_transcripts

__all__ = ["Latency", "measure_latency", "measure_max_rate"]

_RELAY = (
    "import sys, json\n"
    "for line in sys.stdin.buffer:\n"
    "    obj = json.loads(line)\n"
    "    print(json.dumps(obj), flush=True)\n"
)


@attrs.frozen(kw_only=True)
class Latency:
    load: float  # fraction of the measured maximum rate
    rate: float  # events per second
    p50_ms: float
    p99_ms: float
    p999_ms: float
    relay_p99_ms: float


def _percentile(values: Sequence[float], fraction: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(fraction * len(ordered)))]


_WARMUP = 200


def _script(rate: float, count: int) -> str:
    paced = [{"Paced": {"per_second": rate, "count": n}} for n in (_WARMUP, count)]
    body = {"process": True, "turns": [paced]}
    handle, path = tempfile.mkstemp(suffix=".json", prefix="corral-bench-")
    with os.fdopen(handle, "w") as out:
        json.dump(body, out)
    return path


async def _serve_run(rate: float, count: int) -> tuple[list[float], float]:
    """Latencies (ms) through corral serve, and the rate achieved."""
    with scratch_transcripts() as transcripts:
        return await _serve_measured(rate, count, str(transcripts.dir))


async def _serve_measured(rate: float, count: int, archive: str) -> tuple[list[float], float]:
    """`_serve_run` with serve's transcripts (on, as by default) kept in `archive`."""
    path = _script(rate, count)
    process = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "corral.actors.cli",
        "serve",
        "--mock",
        path,
        "--transcripts",
        archive,
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.DEVNULL,
        limit=16 * 1024 * 1024,
    )
    assert process.stdin is not None and process.stdout is not None
    commands = [
        {"id": 1, "cmd": "open", "agent": "mock", "dir": tempfile.gettempdir()},
    ]
    process.stdin.write(b"".join(orjson.dumps(c) + b"\n" for c in commands))
    await process.stdin.drain()
    latencies: list[float] = []
    first = last = 0.0
    skip = _WARMUP
    try:
        while raw := await process.stdout.readline():
            line = orjson.loads(raw)
            if line.get("id") == 1:
                prompt = {"id": 2, "cmd": "prompt", "session": "s1", "text": "go"}
                process.stdin.write(orjson.dumps(prompt) + b"\n")
                await process.stdin.drain()
                continue
            kind = line.get("event", {}).get("kind", {})
            delta = kind.get("TextDelta") if isinstance(kind, dict) else None
            if delta is None:
                continue
            if skip:
                skip -= 1
                continue
            now = time.monotonic_ns()
            latencies.append((now - int(delta["text"])) / 1e6)
            first = first or time.perf_counter()
            last = time.perf_counter()
            if len(latencies) == count:
                break
    finally:
        process.stdin.close()
        await process.wait()
        os.unlink(path)
    achieved = (len(latencies) - 1) / (last - first) if last > first else 0.0
    return latencies, achieved


async def _relay_run(rate: float, count: int) -> list[float]:
    """The same agent through a plain relay process instead of corral."""
    path = _script(rate, count)
    command = f"{sys.executable} -m corral.sources.mock.agent | {sys.executable} -c '{_RELAY}'"
    process = await asyncio.create_subprocess_shell(
        command,
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.DEVNULL,
        limit=16 * 1024 * 1024,
    )
    assert process.stdin is not None and process.stdout is not None
    body = orjson.loads(await asyncio.to_thread(_read, path))
    start = {"StartTurn": {"turn_id": "t1", "prompt_id": "p1", "text": "go", "attachments": []}}
    process.stdin.write(orjson.dumps({"Script": body}) + b"\n" + orjson.dumps(start) + b"\n")
    await process.stdin.drain()
    latencies: list[float] = []
    skip = _WARMUP
    try:
        while len(latencies) < count and (raw := await process.stdout.readline()):
            emitted = orjson.loads(raw).get("Emitted")
            if emitted and "TextDelta" in emitted["kind"]:
                if skip:
                    skip -= 1
                    continue
                stamp = int(emitted["kind"]["TextDelta"]["text"])
                latencies.append((time.monotonic_ns() - stamp) / 1e6)
    finally:
        process.stdin.close()
        await process.wait()
        os.unlink(path)
    return latencies


def _read(path: str) -> bytes:
    with open(path, "rb") as script:
        return script.read()


async def measure_max_rate(count: int) -> float:
    _, achieved = await _serve_run(0, count)
    return achieved


async def measure_latency(max_rate: float, load: float, count: int) -> Latency:
    rate = max_rate * load
    latencies, _ = await _serve_run(rate, count)
    relay = await _relay_run(rate, count)
    return Latency(
        load=load,
        rate=rate,
        p50_ms=_percentile(latencies, 0.50),
        p99_ms=_percentile(latencies, 0.99),
        p999_ms=_percentile(latencies, 0.999),
        relay_p99_ms=_percentile(relay, 0.99),
    )
