"""`corral bench --plot DIR`: the figures of a run as SVG charts.

The charts are drawn from a small synthetic report (the shape `run_bench`
returns, built by the bench's own `_summary`), so no test measures
anything. What is asserted: one SVG per chart, each well-formed XML whose
text holds its title and axis labels; `--from-json` re-plots a saved run
through a real `corral` subprocess; without matplotlib, `--plot` says in
one line how to install the extra, before measuring anything; and the
committed charts are exactly the ones the committed run's JSON gives.
"""

from __future__ import annotations

import subprocess
import sys
import xml.etree.ElementTree as ET
from importlib.util import find_spec
from pathlib import Path
from typing import Any

import pytest
from corral.actors.bench._backpressure import Backpressure
from corral.actors.bench._latency import Latency
from corral.actors.bench._plots import INSTALL_HINT, charts, write_charts
from corral.actors.bench._run import Figures, _summary, read_json, write_json
from corral.actors.bench._scale import Scale
from corral.actors.bench._stages import StageCosts
from corral.actors.bench._throughput import Throughput
from corral.actors.cli import main

COMMITTED = Path(__file__).parent / "plots"
# The dev extra installs matplotlib (bench-plots); a packager's test run
# without it still checks what does not draw.
drawing = pytest.mark.skipif(
    find_spec("matplotlib") is None, reason="needs the bench-plots extra (matplotlib)"
)
SVG = "{http://www.w3.org/2000/svg}"


def _throughput(corpus: str, slower: float) -> Throughput:
    return Throughput(
        corpus=corpus,
        lines=1_000,
        events=900,
        floor_s=0.004,
        naive_s=0.03 * slower,
        corral_s=0.07 * slower,
        stages=StageCosts(source_s=0.02, engine_s=0.01, line_s=0.005, transcript_s=0.01),
    )


def _scale(sessions: int) -> Scale:
    return Scale(
        sessions=sessions,
        events=sessions * 50,
        seconds=0.01 * sessions,
        rss_before_mib=40.0,
        rss_open_mib=40.0 + sessions * 0.05,
        max_lag_ms=1.0 + sessions,
    )


def synthetic_report() -> dict[str, Any]:
    """A two-loop run's report, as `run_bench` returns it, with made-up figures."""
    figures = Figures(
        throughput={
            loop: [_throughput("mock", slower), _throughput("claude", slower * 2)]
            for loop, slower in (("uvloop", 1.0), ("asyncio", 1.2))
        },
        scale={loop: [_scale(n) for n in (1, 10, 100, 1000)] for loop in ("uvloop", "asyncio")},
        backpressure={
            "uvloop": Backpressure(
                events=10,
                produced_while_stalled=0,
                stalled_seconds=1.0,
                rss_growth_mib=0.0,
                delivered=10,
                in_order=True,
            )
        },
        latency=[
            Latency(load=load, rate=load * 1e4, p50_ms=1, p99_ms=3, p999_ms=5, relay_p99_ms=2)
            for load in (0.1, 0.5, 0.9)
        ],
        max_rate=10_000.0,
    )
    return _summary(figures, 1.0)


def _texts(svg: Path) -> str:
    root = ET.parse(svg).getroot()
    assert root.tag == f"{SVG}svg"
    return "\n".join("".join(text.itertext()) for text in root.iter(f"{SVG}text"))


@drawing
def test_the_plot_writer_writes_one_svg_per_chart_with_its_title_and_axis_labels(
    tmp_path: Path,
) -> None:
    report = synthetic_report()
    wanted = charts(report)
    assert {chart.name for chart in wanted} == {
        "cost-per-event",
        "latency",
        "events-per-s",
        "loop-lag",
    }
    assert write_charts(report, str(tmp_path / "plots")) == 0
    assert sorted(p.name for p in (tmp_path / "plots").iterdir()) == sorted(
        f"{chart.name}.svg" for chart in wanted
    )
    for chart in wanted:
        text = _texts(tmp_path / "plots" / f"{chart.name}.svg")
        for words in (chart.title, chart.x_label, chart.y_label):
            assert words in text, (chart.name, words)
        for series in chart.series:  # the legend
            assert series.label in text, (chart.name, series.label)


def test_units_are_on_every_axis_that_has_them() -> None:
    by_name = {chart.name: chart for chart in charts(synthetic_report())}
    assert "µs per event" in by_name["cost-per-event"].y_label
    assert "(ms)" in by_name["latency"].y_label and "events/s" in by_name["latency"].x_label
    assert by_name["events-per-s"].y_label == "events/s"
    assert "(ms)" in by_name["loop-lag"].y_label
    # The cost chart has the table's `all` row, and both loops' series.
    cost = by_name["cost-per-event"]
    assert cost.categories == ("mock", "claude", "all")
    assert any("asyncio" in series.label for series in cost.series)


@drawing
def test_from_json_replots_a_saved_run_through_a_real_subprocess(tmp_path: Path) -> None:
    saved = tmp_path / "run.json"
    write_json(synthetic_report(), str(saved))
    out = tmp_path / "charts"
    corral = [sys.executable, "-m", "corral.actors.cli"]
    done = subprocess.run(
        [*corral, "bench", "--plot", str(out), "--from-json", str(saved)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout == ""  # nothing measured: no table
    assert "4 charts written" in done.stderr
    assert sorted(p.name for p in out.iterdir()) == [
        "cost-per-event.svg",
        "events-per-s.svg",
        "latency.svg",
        "loop-lag.svg",
    ]
    assert "Cost per event against the orjson floor" in _texts(out / "cost-per-event.svg")


def test_from_json_without_plot_is_a_usage_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    saved = tmp_path / "run.json"
    write_json(synthetic_report(), str(saved))
    assert main(["bench", "--from-json", str(saved)]) == 2
    assert "--plot" in capsys.readouterr().err


def test_without_matplotlib_plot_says_how_to_install_the_extra_in_one_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setitem(sys.modules, "matplotlib", None)  # `import matplotlib` now fails
    monkeypatch.delitem(sys.modules, "corral.actors.bench._draw", raising=False)
    out = tmp_path / "charts"
    # Without --from-json this would measure for minutes first: it must not.
    assert main(["bench", "--quick", "--plot", str(out)]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""  # no table: nothing was measured
    assert captured.err.count("\n") == 1
    assert "pip install 'corral[bench-plots]'" in captured.err
    assert INSTALL_HINT in captured.err
    assert not out.exists()


def test_the_committed_charts_are_the_committed_runs() -> None:
    """tests/benchmarks/plots holds the JSON of a run and exactly its charts."""
    report = read_json(str(COMMITTED / "bench.json"))
    names = {f"{chart.name}.svg" for chart in charts(report)}
    assert {p.name for p in COMMITTED.glob("*.svg")} == names
    for chart in charts(report):
        assert chart.title in _texts(COMMITTED / f"{chart.name}.svg")
