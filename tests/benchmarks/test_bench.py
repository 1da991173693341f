"""The benchmark's phases at small sizes: what must hold whatever the machine.

Speed figures are reported (printed, and by `corral bench`), never asserted:
a timed assertion fails on a busy machine and passes on a fast one without
saying anything about corral. What is asserted here does not depend on
speed: nothing is lost, order holds, a stalled sink pauses the agent,
memory for a thousand sessions stays far under its budget.
"""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest
from corral.actors.bench import BenchOptions, run_bench
from corral.actors.bench._backpressure import measure_backpressure
from corral.actors.bench._corpus import mock_corpus, real_corpus, real_corpus_names
from corral.actors.bench._run import write_json
from corral.actors.bench._scale import measure_scale_apart
from corral.actors.bench._throughput import measure_throughput
from corral.sinks.metrics import Metrics
from corral.sinks.transcript import find_transcripts


async def test_the_full_pipeline_delivers_every_event_of_the_corpus() -> None:
    corpus = mock_corpus(5_000)
    figures = await measure_throughput(corpus, repeat=1, sinks=[Metrics().sink])
    # Every frame becomes one event, minus the MessageEnded the engine already
    # synthesized, plus the turn's own events (start, status, end, status).
    assert figures.events >= len(corpus.lines) * 0.95
    print(f"\nfloor ratio {figures.floor_ratio:.1f}, naive ratio {figures.naive_ratio:.1f}")


@pytest.mark.parametrize("name", ["claude", "codex", "acp", "copilot"])
async def test_each_real_agents_recorded_wire_goes_through_the_full_pipeline(name: str) -> None:
    assert name in real_corpus_names(), f"the {name} recordings are missing from tests/fixtures"
    corpus = real_corpus(name, 600)
    figures = await measure_throughput(corpus, repeat=1, sinks=[Metrics().sink])
    assert len(corpus.lines) >= 600
    # The recordings hold a few lines that carry no event (handshake replies);
    # most carry at least one.
    assert figures.events >= len(corpus.lines) * 0.2, figures


async def test_a_stalled_sink_pauses_the_agent_and_loses_nothing() -> None:
    result = await measure_backpressure(3_000, 0.5)
    assert result.produced_while_stalled == 0
    assert result.lost == 0 and result.in_order


def test_a_thousand_sessions_fit_far_under_two_gibibytes() -> None:
    result = measure_scale_apart(1000, 20, "uvloop")
    assert result.rss_open_mib < 2048
    assert result.events >= 1000 * 20
    print(
        f"\n1000 sessions: {result.rss_open_mib:.0f} MiB, {result.rss_per_session_kib:.0f} KiB each"
    )


def test_corral_bench_quick_writes_every_figure_with_its_baseline(
    tmp_path: Path, corral_home: Path
) -> None:
    out = io.StringIO()
    report = run_bench(BenchOptions(quick=True, loops=("uvloop",), out=out))
    path = tmp_path / "bench.json"
    write_json(report, str(path))
    figures = json.loads(path.read_text())
    for name in ("floor_ratio", "events_per_s", "rss_mib_1000_sessions", "p99_ms_half_load"):
        assert "value" in figures[name] and figures[name]["baseline"], name
    assert "throughput" in out.getvalue() and "latency" in out.getvalue()
    assert set(figures["floor_ratio"]["baseline"]["by_corpus"]) >= {"mock", "claude", "acp"}
    # Where the time goes: each stage timed alone, per corpus, with the rest.
    stages = figures["floor_ratio"]["baseline"]["stages_us_per_event"]
    assert set(stages) >= {"mock", "claude", "acp", "all"}
    for corpus, costs in stages.items():
        assert set(costs) == {"source", "engine", "line", "transcript", "rest"}, corpus
        assert all(costs[stage] > 0 for stage in ("source", "engine", "line", "transcript")), corpus
    assert "where corral's time goes" in out.getvalue()
    # The ACP flood, corral serve against the ACP SDK's client (test_acp_flood.py).
    assert figures["acp_flood_ratio"]["baseline"]["updates"] == 10_000
    assert "acp-flood" in out.getvalue()
    # The bench's sessions (the latency phase's real `corral serve` too) keep
    # their transcripts in a scratch archive, never in the user's.
    assert list(find_transcripts(corral_home)) == []
