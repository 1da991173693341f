"""Running the benchmark phases and reporting them.

Phases, each under uvloop and under asyncio's own loop: throughput (full
pipeline vs the orjson floor and a naive relay, plus each stage timed
alone, once per corpus since it needs no loop), scale (1 to 1000
sessions), backpressure; then, once, latency through a real `corral serve`
at 10 %, 50 % and 90 % of its measured maximum rate; last, `acp-flood`:
one prompt's flood of ACP chunks through `corral serve` against the ACP
SDK's client (`_acp_flood.py`). `--quick` runs smaller corpora and a
smaller flood, and scale and backpressure under the first loop only.

A run takes minutes, so on a terminal one line on stderr says where it is:
the phase and its step (`uvloop scale 2/4: 10 sessions`), the steps done of
all, and a rough time left (`actors/_progress.py`). Off a terminal (a pipe,
CI's log) it says nothing: the table on stdout is the bench's output.
"""

from __future__ import annotations

import asyncio
import sys
import time
from collections.abc import Callable, Coroutine, Sequence
from functools import partial
from typing import Any, TextIO

import attrs
import orjson

from .._progress import Progress
from ..runtime import SinkFactory
from ._acp_flood import AcpFlood, flood_summary, flood_table, measure_acp_flood
from ._backpressure import Backpressure, measure_backpressure
from ._corpus import Corpus, mock_corpus, real_corpus, real_corpus_names
from ._latency import Latency, measure_latency, measure_max_rate
from ._scale import Scale, measure_scale_apart
from ._stages import StageCosts
from ._throughput import Throughput, measure_throughput

__all__ = ["BenchOptions", "run_bench"]


@attrs.frozen(kw_only=True)
class BenchOptions:
    quick: bool = False
    loops: tuple[str, ...] = ("uvloop", "asyncio")
    sinks: Callable[[], Sequence[SinkFactory]] = lambda: ()
    out: TextIO = sys.stdout
    progress: bool | None = None  # None: when stderr is a terminal

    @property
    def frames(self) -> int:
        return 10_000 if self.quick else 120_000

    @property
    def session_counts(self) -> tuple[int, ...]:
        return (1, 10, 100, 1000)

    @property
    def events_per_session(self) -> int:
        return 50 if self.quick else 400

    @property
    def latency_count(self) -> int:
        return 1_000 if self.quick else 5_000

    @property
    def flood_updates(self) -> int:
        return 10_000 if self.quick else 100_000


@attrs.define
class Figures:
    throughput: dict[str, list[Throughput]] = attrs.field(factory=dict)
    scale: dict[str, list[Scale]] = attrs.field(factory=dict)
    backpressure: dict[str, Backpressure] = attrs.field(factory=dict)
    latency: list[Latency] = attrs.field(factory=list)
    max_rate: float = 0.0
    acp_flood: AcpFlood | None = None


def _run_on(loop: str, main: Callable[[], Coroutine[Any, Any, Any]]) -> Any:
    if loop == "uvloop":
        import uvloop

        return uvloop.run(main())
    return asyncio.run(main())


class _Phases:
    """The bench's steps, phase by phase, on one progress line."""

    def __init__(self, options: BenchOptions) -> None:
        corpora = 1 + len(real_corpus_names())
        total = 1 + 3 + 1  # the maximum rate, latency at three loads, the ACP flood
        for index, _ in enumerate(options.loops):
            total += corpora
            if not (options.quick and index > 0):
                total += len(options.session_counts) + 1  # scale, backpressure
        shown = options.progress if options.progress is not None else sys.stderr.isatty()
        self.bar = Progress(total, enabled=shown)
        self._now = ""

    def start(self, phase: str, step: int, of: int, what: str) -> None:
        self._now = f"{phase} {step}/{of}: {what}"
        self.bar.show(self._now)

    def done(self) -> None:
        self.bar.step(self._now)


def run_bench(options: BenchOptions) -> dict[str, Any]:
    phases = _Phases(options)
    try:
        return _run(options, phases)
    finally:
        phases.bar.finish()


def _run(options: BenchOptions, phases: _Phases) -> dict[str, Any]:
    figures = Figures()
    started = time.perf_counter()
    stages: dict[str, StageCosts] = {}  # the same under every loop: measured once
    for loop in options.loops:
        figures.throughput[loop] = []
        corpora = _corpora(options)
        for step, corpus in enumerate(corpora, 1):
            what = f"{corpus.name} ({len(corpus.lines)} lines)"
            phases.start(f"{loop} throughput", step, len(corpora), what)
            throughput = partial(
                measure_throughput,
                corpus,
                repeat=2 if options.quick else 3,
                sinks=options.sinks(),
                stages=stages.get(corpus.name),
            )
            measured: Throughput = _run_on(loop, throughput)
            if measured.stages is not None:
                stages[corpus.name] = measured.stages
            figures.throughput[loop].append(measured)
            phases.done()
        if options.quick and loop != options.loops[0]:
            continue  # --quick: scale and backpressure under the first loop only
        _scale_and_backpressure(options, loop, figures, phases)
    _latency(options, figures, phases)
    phases.start("acp-flood", 1, 1, f"{options.flood_updates} updates, corral serve vs the ACP SDK")
    figures.acp_flood = measure_acp_flood(options.flood_updates, repeats=3)
    phases.done()
    report = _summary(figures, time.perf_counter() - started)
    _table(figures, options.out)
    return report


def _scale_and_backpressure(
    options: BenchOptions, loop: str, figures: Figures, phases: _Phases
) -> None:
    figures.scale[loop] = []
    counts = options.session_counts
    for step, count in enumerate(counts, 1):
        phases.start(f"{loop} scale", step, len(counts), f"{count} sessions")
        figures.scale[loop].append(measure_scale_apart(count, options.events_per_session, loop))
        phases.done()
    phases.start(f"{loop} backpressure", 1, 1, "a stalled sink")
    stall = partial(measure_backpressure, 5_000, 1.0 if options.quick else 3.0)
    figures.backpressure[loop] = _run_on(loop, stall)
    phases.done()


def _latency(options: BenchOptions, figures: Figures, phases: _Phases) -> None:
    phases.start("latency", 1, 4, "the maximum rate of corral serve")
    figures.max_rate = _run_on("uvloop", partial(measure_max_rate, options.latency_count * 4))
    phases.done()
    for step, load in enumerate((0.1, 0.5, 0.9), 2):
        phases.start("latency", step, 4, f"{load:.0%} of the maximum rate")
        latency = partial(measure_latency, figures.max_rate, load, options.latency_count)
        figures.latency.append(_run_on("uvloop", latency))
        phases.done()


def _corpora(options: BenchOptions) -> list[Corpus]:
    """The mock's wire, then each real agent's recorded wire (in a source checkout)."""
    real = [real_corpus(name, options.frames // 2) for name in real_corpus_names()]
    return [mock_corpus(options.frames), *real]


def _overall(runs: list[Throughput]) -> Throughput:
    """All corpora as one: total time against total time, per event emitted."""
    return Throughput(
        corpus="all",
        lines=sum(t.lines for t in runs),
        events=sum(t.events for t in runs),
        floor_s=sum(t.floor_s for t in runs),
        naive_s=sum(t.naive_s for t in runs),
        corral_s=sum(t.corral_s for t in runs),
        stages=StageCosts(
            source_s=sum(t.stages.source_s for t in runs if t.stages),
            engine_s=sum(t.stages.engine_s for t in runs if t.stages),
            line_s=sum(t.stages.line_s for t in runs if t.stages),
            transcript_s=sum(t.stages.transcript_s for t in runs if t.stages),
        ),
    )


def _stage_us(t: Throughput) -> dict[str, float]:
    """Microseconds per event: each stage alone, and the rest of the full pipeline."""
    stages = t.stages or StageCosts(source_s=0, engine_s=0, line_s=0, transcript_s=0)
    alone = {
        "source": stages.source_s,
        "engine": stages.engine_s,
        "line": stages.line_s,
        "transcript": stages.transcript_s,
    }
    alone["rest"] = max(0.0, t.corral_s - sum(alone.values()))
    return {name: round(seconds / t.events * 1e6, 2) for name, seconds in alone.items()}


def _summary(figures: Figures, seconds: float) -> dict[str, Any]:
    runs = figures.throughput.get("uvloop") or next(iter(figures.throughput.values()))
    main = _overall(runs)
    scale_main = figures.scale.get("uvloop") or next(iter(figures.scale.values()))
    thousand = next(s for s in scale_main if s.sessions == 1000)
    half = next(lat for lat in figures.latency if lat.load == 0.5)
    flood = figures.acp_flood
    return {
        "floor_ratio": {
            "value": round(main.floor_ratio, 2),
            "target": 8.0,  # issue 21: all corpora; the real wires (Claude, Codex) ≤ 4×
            "target_real_wires": 4.0,
            "baseline": {
                "floor_us_per_event": round(main.floor_s / main.events * 1e6, 3),
                "corral_us_per_event": round(main.corral_s / main.events * 1e6, 3),
                "naive_ratio": round(main.naive_ratio, 2),
                "by_corpus": {t.corpus: round(t.floor_ratio, 2) for t in runs},
                "stages_us_per_event": {t.corpus: _stage_us(t) for t in [*runs, main]},
            },
        },
        "events_per_s": {
            "value": round(main.events_per_s),
            "baseline": {"naive_events_per_s": round(main.naive_events_per_s)},
        },
        "rss_mib_1000_sessions": {
            "value": round(thousand.rss_open_mib, 1),
            "target": 2048,
            "baseline": {"rss_mib_before_sessions": round(thousand.rss_before_mib, 1)},
        },
        "p99_ms_half_load": {
            "value": round(half.p99_ms, 3),
            "target_added": 2.0,
            "baseline": {"relay_p99_ms": round(half.relay_p99_ms, 3), "rate": round(half.rate)},
        },
        "loop_lag_ms_1000_sessions": {"value": round(thousand.max_lag_ms, 1), "target": 250},
        "acp_flood_ratio": flood_summary(flood) if flood is not None else None,
        "details": attrs.asdict(figures),
        "seconds": round(seconds, 1),
    }


THROUGHPUT_HEAD = "  loop     corpus      events      ev/s  floor µs  corral µs  ×floor  naive ×"
STAGES_HEAD = "  loop     corpus     floor   source   engine    line  transcript    rest    total"
SCALE_HEAD = "  loop     sessions      ev/s  KiB/session  RSS MiB  max lag ms"


def _table(figures: Figures, out: TextIO) -> None:
    def line(text: str = "") -> None:
        print(text, file=out)

    line("throughput (full pipeline; cost per event against the orjson floor)")
    line(THROUGHPUT_HEAD)
    for loop, runs in figures.throughput.items():
        for t in [*runs, _overall(runs)]:
            line(
                f"  {loop:<9}{t.corpus:<9}{t.events:>9}{t.events_per_s:>10.0f}"
                f"{t.floor_s / t.events * 1e6:>10.2f}{t.corral_s / t.events * 1e6:>11.2f}"
                f"{t.floor_ratio:>8.1f}{t.naive_ratio:>9.1f}"
            )
    line()
    line("where corral's time goes (µs per event; each stage timed alone, same run)")
    line(STAGES_HEAD)
    for loop, runs in figures.throughput.items():
        for t in [*runs, _overall(runs)]:
            us = _stage_us(t)
            line(
                f"  {loop:<9}{t.corpus:<9}{t.floor_s / t.events * 1e6:>8.2f}{us['source']:>9.2f}"
                f"{us['engine']:>9.2f}{us['line']:>8.2f}{us['transcript']:>12.2f}{us['rest']:>8.2f}"
                f"{t.corral_s / t.events * 1e6:>9.2f}"
            )
    line()
    line("scale (concurrent mock sessions in one process)")
    line(SCALE_HEAD)
    for loop, rows in figures.scale.items():
        for s in rows:
            line(
                f"  {loop:<9}{s.sessions:>9}{s.events_per_s:>10.0f}{s.rss_per_session_kib:>13.0f}"
                f"{s.rss_open_mib:>9.0f}{s.max_lag_ms:>12.1f}"
            )
    line()
    line("backpressure (a stalled sink)")
    for loop, b in figures.backpressure.items():
        line(
            f"  {loop:<9} produced while stalled {b.produced_while_stalled},"
            f" RSS +{b.rss_growth_mib:.1f} MiB over {b.stalled_seconds:.0f} s;"
            f" delivered {b.delivered}/{b.events}, lost {b.lost}, in order: {b.in_order}"
        )
    line()
    line(f"latency: agent writes a line → app reads the event (max rate {figures.max_rate:.0f}/s)")
    line(f"  {'load':>6}{'rate/s':>9}{'p50 ms':>9}{'p99 ms':>9}{'p99.9 ms':>10}{'relay p99':>11}")
    for lat in figures.latency:
        line(
            f"  {lat.load:>6.0%}{lat.rate:>9.0f}{lat.p50_ms:>9.2f}{lat.p99_ms:>9.2f}"
            f"{lat.p999_ms:>10.2f}{lat.relay_p99_ms:>11.2f}"
        )
    if figures.acp_flood is not None:
        line()
        for text in flood_table(figures.acp_flood):
            line(text)


def write_json(report: dict[str, Any], path: str) -> None:
    with open(path, "wb") as out:
        out.write(orjson.dumps(report, option=orjson.OPT_INDENT_2))


def read_json(path: str) -> dict[str, Any]:
    """A report `write_json` saved (`corral bench --plot DIR --from-json FILE`)."""
    with open(path, "rb") as saved:
        report: dict[str, Any] = orjson.loads(saved.read())
    return report
