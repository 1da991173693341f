"""`corral bench --plot DIR`: the figures of a run as SVG charts.

Two halves, so the second can be swapped or skipped. `charts(report)` reads
the report `run_bench` returns (the same dict `--json` writes, so a saved
run re-plots with `--from-json`) and says what to draw: a `Chart` is a
title, axis labels with their units and named series of points, nothing
about pixels. It needs nothing beyond corral. `write_charts` draws those
charts with matplotlib's SVG backend (`_draw.py`), one file per chart.

matplotlib is a bench-only extra (`corral[bench-plots]`): nothing else in
corral draws, and the committed SVGs under tests/benchmarks/plots/ read
without it. Without it `write_charts` raises `PlotsUnavailable`, whose text
is the one line that says how to install it.

The charts, from one run:
- cost per event: corral's full pipeline against the orjson floor and a
  naive relay, per corpus (bars; the ratio to the floor written on top);
- latency: p50, p99 and p99.9 against load, with the plain relay's p99;
- events/s, and event-loop lag, against the number of sessions, one
  series per event loop. `_against` draws a figure against any count of
  things, so a figure against the number of Ray nodes (`--ray`, later)
  is one more `_against` call on the rows that run adds;
- the ACP flood: corral's CPU and wall time per update against the ACP
  SDK client's (bars; corral's ratio to the SDK on top), when the run has
  both sides (a report from before the phase, or without the SDK, has none).

The SVGs are reproducible: text stays text (`svg.fonttype: none`, so a
test and a reader can find the titles), with a fixed id salt and no date.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any, Literal

import attrs

from .._cli_errors import UsageError

__all__ = ["INSTALL_HINT", "Chart", "PlotsUnavailable", "Series", "charts", "write_charts"]

INSTALL_HINT = "--plot needs matplotlib, the bench-plots extra: pip install 'corral[bench-plots]'"


class PlotsUnavailable(UsageError):
    """matplotlib is not installed; the message says how to install it, in one line."""


@attrs.frozen
class Series:
    label: str
    points: tuple[tuple[float, float], ...]


@attrs.frozen(kw_only=True)
class Chart:
    name: str  # the file's stem
    title: str
    x_label: str
    y_label: str
    series: tuple[Series, ...]
    kind: Literal["bars", "lines"] = "lines"
    categories: tuple[str, ...] = ()  # bars: the x axis's names, points' x is the index
    log_x: bool = False
    log_y: bool = False
    notes: tuple[str, ...] = ()  # bars: a label over each bar of the series `noted`
    noted: str = ""
    legend_title: str = ""


def charts(report: Mapping[str, Any]) -> list[Chart]:
    """What to draw from a run's report (`run_bench`'s, or its `--json`)."""
    details = report["details"]
    scale = details["scale"]
    flood = report.get("acp_flood_ratio")
    return [
        _cost_per_event(details["throughput"]),
        _latency(details["latency"], details["max_rate"]),
        _against(
            "events-per-s",
            "Events/s against concurrent sessions",
            scale,
            "sessions",
            "concurrent mock sessions in one process",
            "events/s",
            lambda row: row["events"] / row["seconds"],
        ),
        _against(
            "loop-lag",
            "Event-loop lag against concurrent sessions",
            scale,
            "sessions",
            "concurrent mock sessions in one process",
            "max event-loop lag (ms)",
            lambda row: row["max_lag_ms"],
            log_y=True,
        ),
        *([_acp_flood(flood)] if flood and flood["value"] is not None else []),
    ]


def _acp_flood(flood: Mapping[str, Any]) -> Chart:
    """corral and the ACP SDK's client on the same flood: CPU, then wall time, per update."""
    figures = flood["baseline"]
    measures = (("CPU", "cpu"), ("wall time", "wall"))

    def side(name: str) -> tuple[tuple[float, float], ...]:
        return tuple(
            (float(index), figures[f"{name}_{key}_us_per_update"])
            for index, (_, key) in enumerate(measures)
        )

    ratios = (flood["value"], figures["wall_ratio"])
    return Chart(
        name="acp-flood",
        title=f"A flood of {figures['updates']:,} ACP updates: corral against the ACP SDK's client",
        x_label="measure (CPU: the peer's processes, the agent's excluded)",
        y_label="µs per update",
        series=(
            Series("corral serve + app", side("corral")),
            Series("ACP SDK client", side("sdk")),
        ),
        kind="bars",
        categories=tuple(label for label, _ in measures),
        notes=tuple(f"×{ratio:.2f}" for ratio in ratios),
        noted="corral serve + app",
    )


def _us_per_event(seconds: float, events: int) -> float:
    return seconds / events * 1e6


def _cost_per_event(throughput: Mapping[str, Sequence[Mapping[str, Any]]]) -> Chart:
    """Per corpus and all together: the floor, the naive relay, corral under each loop."""
    runs = {loop: [*rows, _all(rows)] for loop, rows in throughput.items()}
    first_loop, first = next(iter(runs.items()))
    series = [
        Series("orjson floor", _bars(first, "floor_s")),
        Series(f"naive relay ({first_loop})", _bars(first, "naive_s")),
    ]
    series += [Series(f"corral ({loop})", _bars(rows, "corral_s")) for loop, rows in runs.items()]
    noted = f"corral ({first_loop}); ×N over it: N times the floor"
    series[2] = attrs.evolve(series[2], label=noted)
    return Chart(
        name="cost-per-event",
        title="Cost per event against the orjson floor, per corpus",
        x_label="corpus (a recorded wire; all: every corpus together)",
        y_label="µs per event",
        series=tuple(series),
        kind="bars",
        categories=tuple(run["corpus"] for run in first),
        notes=tuple(f"×{run['corral_s'] / run['floor_s']:.0f}" for run in first),
        noted=noted,
    )


def _all(rows: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """Every corpus as one, as the table's `all` row: total time over total events."""
    fields = ("events", "floor_s", "naive_s", "corral_s")
    return {"corpus": "all", **{field: sum(row[field] for row in rows) for field in fields}}


def _bars(runs: Sequence[Mapping[str, Any]], field: str) -> tuple[tuple[float, float], ...]:
    return tuple(
        (float(index), _us_per_event(run[field], run["events"])) for index, run in enumerate(runs)
    )


def _latency(rows: Sequence[Mapping[str, Any]], max_rate: float) -> Chart:
    def at(field: str) -> tuple[tuple[float, float], ...]:
        return tuple((row["load"] * 100, row[field]) for row in rows)

    return Chart(
        name="latency",
        title="Latency against load: agent writes a line → app reads the event",
        x_label=f"load (% of corral serve's maximum rate, {max_rate:,.0f} events/s)",
        y_label="latency (ms)",
        series=(
            Series("p50", at("p50_ms")),
            Series("p99", at("p99_ms")),
            Series("p99.9", at("p999_ms")),
            Series("plain relay p99", at("relay_p99_ms")),
        ),
        log_y=True,
    )


def _against(
    name: str,
    title: str,
    by_loop: Mapping[str, Sequence[Mapping[str, Any]]],
    count: str,
    x_label: str,
    y_label: str,
    value: Callable[[Mapping[str, Any]], float],
    *,
    log_y: bool = False,
) -> Chart:
    """A figure against a count (`count`: the rows' key, e.g. sessions), a series per loop."""
    series = tuple(
        Series(loop, tuple((float(row[count]), float(value(row))) for row in rows))
        for loop, rows in by_loop.items()
    )
    return Chart(
        name=name,
        title=title,
        x_label=x_label,
        y_label=y_label,
        series=series,
        log_x=True,
        log_y=log_y,
        legend_title="event loop",
    )


def write_charts(report: Mapping[str, Any], directory: str) -> int:
    """`--plot DIR`: one SVG per chart in `directory` (made if missing), said on stderr."""
    draw = _drawer()
    folder = Path(directory)
    folder.mkdir(parents=True, exist_ok=True)
    written = [draw(chart, folder / f"{chart.name}.svg") for chart in charts(report)]
    print(f"corral: {len(written)} charts written to {directory}", file=sys.stderr)
    return 0


def require_plotting() -> None:
    """Raise `PlotsUnavailable` now rather than after a run of minutes."""
    _drawer()


def _drawer() -> Callable[[Chart, Path], Path]:
    try:
        from ._draw import draw
    except ImportError as missing:
        raise PlotsUnavailable(INSTALL_HINT) from missing
    return draw
