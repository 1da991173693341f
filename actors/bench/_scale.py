"""Scale: many concurrent mock sessions in one process.

For N sessions each playing the same turn of `events` text deltas: total
events per second, resident memory per session (measured with the
sessions open and idle, against the process before them), and event-loop
lag (how late a 5 ms ticker wakes while the sessions run).
"""

from __future__ import annotations

import asyncio
import subprocess
import sys
import time

import attrs
import orjson

from ...pipeline.channels import Channel
from ...pipeline.records import SinkItem
from ...sinks.transcript import TranscriptSettings
from ...sources.mock import MockScript, parse_script
from .._collector import tune_collector
from ..runtime import Runtime
from ._scratch import scratch_transcripts

__all__ = ["Scale", "measure_scale", "measure_scale_apart", "rss_mib"]


def rss_mib() -> float:
    with open("/proc/self/status") as status:
        for line in status:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return 0.0


@attrs.frozen(kw_only=True)
class Scale:
    sessions: int
    events: int
    seconds: float
    rss_before_mib: float
    rss_open_mib: float
    max_lag_ms: float

    @property
    def events_per_s(self) -> float:
        return self.events / self.seconds

    @property
    def rss_per_session_kib(self) -> float:
        return (self.rss_open_mib - self.rss_before_mib) * 1024 / self.sessions


class _Counter:
    """A null app sink that counts events."""

    name = "count"

    def __init__(self) -> None:
        self.events = 0

    async def run(self, items_in: Channel[SinkItem]) -> None:
        async for _ in items_in:
            self.events += 1


async def _ticker(stop: asyncio.Event, lags: list[float]) -> None:
    loop = asyncio.get_running_loop()
    while not stop.is_set():
        wanted = loop.time() + 0.005
        await asyncio.sleep(0.005)
        lags.append(max(0.0, loop.time() - wanted))


def measure_scale_apart(sessions: int, events: int, loop: str) -> Scale:
    """`measure_scale` in a fresh process, so memory figures start clean."""
    done = subprocess.run(
        [sys.executable, "-m", "corral.actors.bench._scale", str(sessions), str(events), loop],
        capture_output=True,
        check=True,
        timeout=600,
    )
    return Scale(**orjson.loads(done.stdout))


async def measure_scale(sessions: int, events: int, ray: str | None = None) -> Scale:
    """`ray`: run the sessions on this Ray cluster (`corral bench --ray`, `_ray.py`)."""
    step = {"Emit": {"TextDelta": {"message_id": "m1", "text": "token "}}}
    script = parse_script(
        {
            "turns": [
                [
                    {"Repeat": {"times": events, "steps": [step]}},
                    {"End": {"Completed": {"source": "Protocol"}}},
                ]
            ]
        }
    )
    with scratch_transcripts() as transcripts:
        return await _measure(script, sessions, transcripts, ray)


async def _measure(
    script: MockScript, sessions: int, transcripts: TranscriptSettings, ray: str | None
) -> Scale:
    counters = [_Counter() for _ in range(sessions)]
    async with Runtime(mock=script, transcripts=transcripts, ray=ray) as rt:
        before = rss_mib()  # with Ray, after connecting: its driver is no session's
        opened = [await rt.open("mock", dir=".", app_sink=counter) for counter in counters]
        rss_open = rss_mib()
        lags: list[float] = []
        stop = asyncio.Event()
        async with asyncio.TaskGroup() as tasks:
            tasks.create_task(_ticker(stop, lags))
            started = time.perf_counter()
            for session in opened:
                await session.prompt("go")
            for session in opened:
                await session.wait_idle()
            seconds = time.perf_counter() - started
            stop.set()
        total = sum(s.events_made for s in opened)
    return Scale(
        sessions=sessions,
        events=total,
        seconds=seconds,
        rss_before_mib=before,
        rss_open_mib=rss_open,
        max_lag_ms=max(lags, default=0.0) * 1000,
    )


if __name__ == "__main__":
    tune_collector()  # as in every process of corral's own (`actors/_collector.py`)
    count, per_session, loop_name = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
    on_ray = sys.argv[4] if len(sys.argv) > 4 else None
    if loop_name == "uvloop":
        import uvloop

        result = uvloop.run(measure_scale(count, per_session, on_ray))
    else:
        result = asyncio.run(measure_scale(count, per_session, on_ray))
    sys.stdout.buffer.write(orjson.dumps(attrs.asdict(result)))
