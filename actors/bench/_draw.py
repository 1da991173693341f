"""Drawing a bench `Chart` as SVG with matplotlib (the bench-plots extra).

Only `_plots` imports this module, and only when asked to plot: importing
it fails without matplotlib, which `_plots` turns into the install hint.
matplotlib is used object-first (a `Figure`, no pyplot): no global state,
no GUI backend, nothing left open after a chart is written.
"""

from __future__ import annotations

from pathlib import Path

import matplotlib
from matplotlib.axes import Axes
from matplotlib.figure import Figure
from matplotlib.ticker import FuncFormatter

from ._plots import Chart

__all__ = ["draw"]


def draw(chart: Chart, path: Path) -> Path:
    """Write `chart` to `path` as SVG; `path`."""
    with matplotlib.rc_context(
        {
            "svg.fonttype": "none",  # text stays <text>: searchable, and smaller
            "svg.hashsalt": "corral-bench",  # the same ids on every run
            "font.size": 10,
            "axes.grid": True,
            "grid.alpha": 0.3,
        }
    ):
        figure = Figure(figsize=(8, 4.5), layout="constrained")
        axes = figure.add_subplot()
        if chart.kind == "bars":
            _bars(axes, chart)
        else:
            _lines(axes, chart)
        axes.set_title(chart.title)
        axes.set_xlabel(chart.x_label)
        axes.set_ylabel(chart.y_label)
        axes.legend(title=chart.legend_title or None)
        figure.savefig(path, format="svg", metadata={"Date": None})
    return path


def _bars(axes: Axes, chart: Chart) -> None:
    width = 0.8 / len(chart.series)
    for index, series in enumerate(chart.series):
        offset = (index - (len(chart.series) - 1) / 2) * width
        xs = [x + offset for x, _ in series.points]
        bars = axes.bar(xs, [y for _, y in series.points], width, label=series.label)
        if series.label == chart.noted and chart.notes:
            axes.bar_label(bars, labels=list(chart.notes), fontsize=8, padding=2)
    axes.set_xticks(range(len(chart.categories)), chart.categories)
    axes.grid(axis="x", visible=False)


def _lines(axes: Axes, chart: Chart) -> None:
    for series in chart.series:
        axes.plot(
            [x for x, _ in series.points],
            [y for _, y in series.points],
            marker="o",
            label=series.label,
        )
    if chart.log_x:
        axes.set_xscale("log")
    ticks = sorted({x for series in chart.series for x, _ in series.points})
    axes.set_xticks(ticks, [f"{x:g}" for x in ticks])  # the measured points, as plain numbers
    if chart.log_y:
        axes.set_yscale("log")
        axes.yaxis.set_major_formatter(FuncFormatter(lambda value, _: f"{value:g}"))
    else:
        axes.set_ylim(bottom=0)  # a linear axis from zero: differences read at their size
