"""Throughput: the full pipeline against two baselines, in the same run.

- floor: `orjson.loads` of every line, nothing else — what no pipeline can beat;
- naive: `json.loads`, an unbounded queue, `print(json.dumps(...))` — what a
  quick hand-written relay costs;
- corral: replay through a real session (decode → normalize → engine and
  policy → fan-out → line writer and transcript, plus any extra sinks:
  metrics).

Then the stages are timed alone (`_stages.py`), to show where corral's
cost goes.

Each is run `repeat` times, the three in turn (floor, naive, corral, then
again), so that a slower spell of a shared machine falls on all three
alike; of each, the fastest run counts (the least disturbed). Costs are per
event the pipeline emitted.
"""

from __future__ import annotations

import asyncio
import json
import os
import time
from collections import deque
from collections.abc import Sequence
from typing import Any, TextIO

import attrs
import orjson

from ...pipeline.events import AgentDetails
from ...sinks.lines import LineSink, LineWriter
from ...sources.catalog import Catalog, CatalogEntry
from ..runtime import Runtime, SinkFactory
from ._corpus import Corpus
from ._replay import ReplayDriver
from ._scratch import scratch_transcripts
from ._stages import StageCosts, measure_stages

__all__ = ["Throughput", "measure_throughput"]


@attrs.frozen(kw_only=True)
class Throughput:
    corpus: str
    lines: int
    events: int
    floor_s: float
    naive_s: float
    corral_s: float
    stages: StageCosts | None = None  # where corral_s goes (`_stages.py`)

    @property
    def floor_ratio(self) -> float:
        return self.corral_s / self.floor_s

    @property
    def naive_ratio(self) -> float:
        return self.naive_s / self.floor_s

    @property
    def events_per_s(self) -> float:
        return self.events / self.corral_s

    @property
    def naive_events_per_s(self) -> float:
        return self.events / self.naive_s


def _floor(lines: Sequence[bytes]) -> float:
    started = time.perf_counter()
    for line in lines:
        orjson.loads(line)
    return time.perf_counter() - started


async def _naive(lines: Sequence[bytes], sink: TextIO) -> float:
    """json.loads, an unbounded queue, print(json.dumps(...)) to `sink`."""
    backlog: deque[Any] = deque()  # unbounded on purpose: this is the naive baseline
    ready = asyncio.Event()
    done = object()
    if True:

        async def produce() -> None:
            for line in lines:
                backlog.append(json.loads(line))
                ready.set()
                await asyncio.sleep(0)
            backlog.append(done)
            ready.set()

        async def consume() -> None:
            while True:
                while not backlog:
                    ready.clear()
                    await ready.wait()
                item = backlog.popleft()
                if item is done:
                    return
                print(json.dumps({"event": item}), file=sink)

        started = time.perf_counter()
        async with asyncio.TaskGroup() as tasks:
            tasks.create_task(produce())
            tasks.create_task(consume())
        return time.perf_counter() - started


class _NullStream:
    async def write(self, data: bytes) -> None:
        return None


async def _corral(corpus: Corpus, sinks: Sequence[SinkFactory]) -> tuple[float, int]:
    def replay_driver(*_: object) -> ReplayDriver:
        return ReplayDriver(corpus.segments, corpus.wire)

    entry = CatalogEntry(
        id="replay",
        name=f"replay of {corpus.name}",
        executable="",
        install_hint="",
        make_driver=replay_driver,
        details=AgentDetails(),
        builtin=True,
    )
    writer = LineWriter(_NullStream())
    release = asyncio.Event()
    release.set()
    with scratch_transcripts() as transcripts:
        async with asyncio.TaskGroup() as tasks:
            tasks.create_task(writer.run())
            runtime = Runtime(catalog=Catalog([entry]), sinks=sinks, transcripts=transcripts)
            async with runtime as rt:
                session = await rt.open("replay", dir=".", app_sink=LineSink(writer, release))
                started = time.perf_counter()
                await session.prompt("replay")
                await session.wait_idle()
                await session.close()
                await session.wait_closed()
                elapsed = time.perf_counter() - started
                events = session.events_made
            writer.close()
    return elapsed, events


async def measure_throughput(
    corpus: Corpus,
    *,
    repeat: int = 3,
    sinks: Sequence[SinkFactory] = (),
    stages: StageCosts | None = None,
) -> Throughput:
    """`stages`: the corpus's stage costs if already measured (they need no event loop)."""
    lines = corpus.lines
    floors: list[float] = []
    naives: list[float] = []
    runs: list[tuple[float, int]] = []
    with open(os.devnull, "w") as devnull:  # noqa: ASYNC230 (opening /dev/null never blocks)
        for _ in range(repeat):  # in turn, so a slower spell of the machine hits all three
            floors.append(_floor(lines))
            naives.append(await _naive(lines, devnull))
            runs.append(await _corral(corpus, sinks))
    floor, naive = min(floors), min(naives)
    corral_s = min(elapsed for elapsed, _ in runs)
    if stages is None:
        stages = measure_stages(corpus, repeat=repeat)
    return Throughput(
        corpus=corpus.name,
        lines=len(lines),
        events=runs[0][1],
        floor_s=floor,
        naive_s=naive,
        corral_s=corral_s,
        stages=stages,
    )
