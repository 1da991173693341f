"""Dashboards that show zeros, not "No data", and units that match their metrics.

A fresh `corral serve --metrics` (a real subprocess, no session ever opened) is
scraped once; every series each dashboard panel queries must be there already, with
the labels its selector and its `by (...)` ask for. Each panel's unit is checked
against the unit its metric's name carries (`_seconds`, `_bytes`, `_ratio`, `_usd`)
and what the query does to it (a rate, an increase over the range, a quotient).
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import AsyncIterator
from typing import Any

import pytest
import pytest_asyncio

from tests.integration.test_metrics_wiring import Samples, metrics_url, scrape
from tests.support.serve import ServeProcess
from tests.unit.metrics.promtools import dashboard_queries, dashboards

_SELECTOR = re.compile(r"\b(corral_[a-z_]+)\{([^}]*)\}")
_MATCHER = re.compile(r'(\w+)\s*(=~|!~|!=|=)\s*"((?:[^"\\]|\\.)*)"')
_BY = re.compile(r"\bby \(([^)]*)\)")


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def fresh() -> AsyncIterator[Samples]:
    """One scrape of a `corral serve --metrics` that has opened no session."""
    serve = await ServeProcess.start("--metrics", "127.0.0.1:0", "--no-transcripts")
    try:
        assert serve.process.stderr is not None
        url = await metrics_url(serve.process.stderr)
        yield await asyncio.to_thread(scrape, url)
    finally:
        await serve.close_stdin()
        assert await serve.finish() == 0


def _selectors(expr: str) -> list[tuple[str, list[tuple[str, str, str]], set[str]]]:
    """(metric, matchers, labels grouped by) of each selector in a PromQL expression."""
    grouped = {
        label.strip() for group in _BY.findall(expr) for label in group.split(",") if label.strip()
    }
    found = []
    for metric, body in _SELECTOR.findall(expr):
        found.append((metric, _MATCHER.findall(body), grouped - {"le", "job", "instance"}))
    return found


def _satisfies(labels: dict[str, str], matchers: list[tuple[str, str, str]]) -> bool:
    for name, op, wanted in matchers:
        if name in ("job", "instance"):
            continue  # Prometheus adds them to every series it scrapes
        if wanted.startswith("$"):  # a dashboard variable: All matches any value it has
            if name not in labels:
                return False
            continue
        have = labels.get(name, "")
        if op == "=" and have != wanted:
            return False
        if op == "=~" and not re.fullmatch(wanted, have):
            return False
        if op == "!=" and have == wanted:
            return False
        if op == "!~" and re.fullmatch(wanted, have):
            return False
    return True


QUERIES = dashboard_queries()


@pytest.mark.asyncio(loop_scope="module")
@pytest.mark.parametrize("query", QUERIES, ids=[f"{q[0]}:{q[1]}" for q in QUERIES])
async def test_every_series_a_dashboard_queries_exists_before_any_session(
    fresh: Samples, query: tuple[str, str, str]
) -> None:
    _, _, expr = query
    for metric, matchers, by in _selectors(expr):
        candidates = [dict(labels) for name, labels in fresh if name == metric]
        assert candidates, f"no {metric} series at all on a fresh start"
        fitting = [c for c in candidates if _satisfies(c, matchers)]
        assert fitting, f"no {metric} series matches {matchers}"
        assert any(by <= set(c) for c in fitting), f"no {metric} series has labels {by}"


async def test_the_new_deciders_are_there_at_zero_for_every_agent(fresh: Samples) -> None:
    decisions = [dict(labels) for name, labels in fresh if name == "corral_decisions_total"]
    agents = {d["agent"] for d in decisions}
    assert {"claude", "codex"} <= agents
    for agent in agents:
        deciders = {d["decided_by"] for d in decisions if d["agent"] == agent}
        assert {"app", "rule", "timeout", "generate", "limit", "mode:Ask"} <= deciders
    assert all(fresh[("corral_decisions_total", frozenset(d.items()))] == 0 for d in decisions)


# ---- units ----------------------------------------------------------------------------

_COUNTS = {"short", "none", "locale"}
_PER_SECOND = {"ops", "reqps", "rps", "wps", "cps"}


def _units_of(expr: str) -> set[str]:
    """The units a panel showing `expr` may have, from its metric's name and the query."""
    metric = _SELECTOR.findall(expr)[0][0]
    base = metric.removesuffix("_bucket").removesuffix("_total")
    if "histogram_quantile" in expr:
        return {"s"} if base.endswith("_seconds") else {"percentunit"}
    if re.search(r"\)\s*/\s*sum", expr):
        return {"percentunit"}  # a share: one count over another
    rated = "rate(" in expr
    if base.endswith("_seconds"):
        return {"percentunit"} if rated else {"s"}  # seconds per second is a share of time
    if base.endswith("_bytes"):
        return {"Bps", "binBps"} if rated else {"bytes", "decbytes"}
    if base.endswith("_usd"):
        return {"currencyUSD"}
    if base.endswith("_ratio") or base.endswith("_ratio_max"):
        return {"percentunit"}
    if rated:
        return _PER_SECOND | {"per-second suffix"}
    return _COUNTS


def _unit(panel: dict[str, Any]) -> str:
    unit = str(panel["fieldConfig"]["defaults"]["unit"])
    return "per-second suffix" if unit.startswith("suffix:") and unit.endswith("/s") else unit


PANELS = [
    (name, panel)
    for name, board in dashboards().items()
    for panel in board["panels"]
    if panel["type"] != "row"
]


@pytest.mark.parametrize("case", PANELS, ids=[f"{n}:{p['title']}" for n, p in PANELS])
def test_each_panel_s_unit_matches_its_metric(case: tuple[str, dict[str, Any]]) -> None:
    _, panel = case
    for target in panel["targets"]:
        allowed = _units_of(target["expr"])
        assert _unit(panel) in allowed, f"{target['expr']}: unit {_unit(panel)}, not {allowed}"
