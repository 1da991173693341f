"""Many random sessions: the number of series stays bounded, and no id is a label."""

from __future__ import annotations

import asyncio
import random
import re
from collections import Counter

from corral.actors.runtime import Runtime
from corral.sinks.metrics import Metrics
from corral.sinks.metrics._store import Family, Histogram
from corral.sources.mock import parse_script
from prometheus_client.parser import text_string_to_metric_families

from tests.unit.metrics.agents import catalog
from tests.unit.metrics.load import SCRIPT, drive

AGENTS = [f"agent-{index}" for index in range(48)]  # more than the cap of 32
MODELS = [f"model-{index}" for index in range(40)]  # more than the cap of 16
ID_LIKE = re.compile(r"^(s\d+|t\d+|p\d+|x\d+|r\d+|q\d+|m\d+)$")

# Every label and the most values it may take, whatever the sessions do.
CLOSED = {
    "agent": 33,
    "model": 18,
    "queue": 65,
    "node": 65,
    "version": 1,
    "le": 20,
    "outcome": 5,
    "stop": 4,
    "origin": 2,
    "status": 7,  # 3 session statuses; 4 tool call ends (the zero series have them all)
    "kind": 46,  # error kinds, event kinds, tool kinds, decode error kinds
    "request_kind": 2,
    "tool_kind": 12,
    "decision": 7,
    "decided_by": 18,  # 6 deciders, 3 modes, 5 guards; rule, mode:other, guard:other, other
    "type": 11,  # 5 token types; 6 line types
    "level": 3,
    "exit": 4,
    "direction": 3,
    "sink": 8,
    "label": 4,
}


def runtime_for(metrics: Metrics) -> Runtime:
    catalog_ = catalog(parse_script(SCRIPT), AGENTS, MODELS)
    return Runtime(catalog=catalog_, metrics=metrics, transcripts=False)


async def play(runtime: Runtime, rng: random.Random, sessions: int) -> None:
    assert runtime.metrics is not None
    for start in range(0, sessions, 20):
        async with asyncio.timeout(120), asyncio.TaskGroup() as batch:
            for _ in range(min(20, sessions - start)):
                batch.create_task(drive(runtime, rng, AGENTS))
        runtime.metrics.render()  # scrape now and then, as Prometheus would


def series(metrics: Metrics) -> list[tuple[str, dict[str, str]]]:
    text = metrics.render()[0].decode()
    return [
        (sample.name, sample.labels)
        for family in text_string_to_metric_families(text)
        for sample in family.samples
    ]


def most_series(family: Family) -> int:
    """The most series `family` can have, whatever the sessions do."""
    most = 1
    for label in family.labelnames:
        most *= CLOSED[label]
    if isinstance(family, Histogram):
        most *= len(family.bounds) + 3  # the buckets, +Inf, _sum and _count
    return most


def per_family(samples: list[tuple[str, dict[str, str]]]) -> Counter[str]:
    return Counter(re.sub(r"_(bucket|sum|count)$", "", name) for name, _ in samples)


async def test_series_stay_bounded_and_free_of_ids_across_many_random_sessions() -> None:
    metrics = Metrics(version="test")
    rng = random.Random(8)
    async with runtime_for(metrics) as runtime:
        await play(runtime, rng, 120)
        first = series(metrics)
        await play(runtime, rng, 120)
        second = series(metrics)
    values: dict[str, set[str]] = {}
    for _, labels in second:
        for name, value in labels.items():
            if name != "le":
                values.setdefault(name, set()).add(value)
    for name, seen in values.items():
        assert len(seen) <= CLOSED[name], (name, sorted(seen))
        assert not [v for v in seen if ID_LIKE.match(v)], (name, sorted(seen))
    assert len(values["agent"]) == 33  # the cap was reached: 32 agents and other
    counts = per_family(second)
    for family in metrics.families.store.families:
        assert counts[family.name] <= most_series(family), family.name
    # Twice the sessions, (almost) no new series: they do not grow with sessions.
    assert len(second) - len(first) < len(first) // 10, (len(first), len(second))


async def test_the_random_sessions_fill_the_core_metrics() -> None:
    metrics = Metrics(version="test")
    async with runtime_for(metrics) as runtime:
        await play(runtime, random.Random(3), 40)
    names = {name for name, _ in series(metrics)}
    for name in (
        "corral_tokens_total",
        "corral_cost_usd_total",
        "corral_decisions_total",
        "corral_tool_calls_total",
        "corral_agent_errors_total",
        "corral_agent_process_starts_total",
        "corral_context_compactions_total",
        "corral_channel_items_sent_total",
        "corral_turn_first_output_seconds_bucket",
    ):
        assert name in names, name
    active = metrics.registry.get_sample_value("corral_sessions_active", {"agent": "agent-0"})
    assert active in (0.0, None)
