"""`Metrics.zero`: every labelled series at zero, bounded, and harmless to repeat."""

from __future__ import annotations

from corral.sinks.metrics import Metrics
from corral.sinks.metrics._zeros import DECIDED_BY
from prometheus_client.parser import text_string_to_metric_families


def _samples(metrics: Metrics) -> dict[tuple[str, frozenset[tuple[str, str]]], float]:
    text = metrics.render()[0].decode()
    return {
        (sample.name, frozenset(sample.labels.items())): sample.value
        for family in text_string_to_metric_families(text)
        for sample in family.samples
    }


def test_every_family_has_a_series_for_every_known_value_at_zero() -> None:
    metrics = Metrics(version="test")
    metrics.zero(["claude", "codex"])
    found = _samples(metrics)
    names = {name for name, _ in found}
    for family in metrics.families.store.families:
        assert set(family.sample_names) & names, family.name
    deciders = {
        dict(labels)["decided_by"]
        for name, labels in found
        if name == "corral_decisions_total" and dict(labels)["agent"] == "codex"
    }
    assert deciders == set(DECIDED_BY)
    stops = {dict(labels)["stop"] for name, labels in found if name == "corral_turns_ended_total"}
    assert stops == {"Completed", "Failed", "Cancelled", "Refused"}
    zeros = [value for (name, _), value in found.items() if name != "corral_build_info"]
    assert zeros and not any(zeros)


def test_zero_keeps_what_was_counted_and_counts_no_overflow() -> None:
    metrics = Metrics(version="test", agent_limit=2)
    metrics.families.turns_ended.inc(("claude", "Failed"))
    metrics.zero(["claude", "codex", "gemini", "opencode"])  # two past the cap
    metrics.zero(["claude", "codex"])
    found = _samples(metrics)
    failed = frozenset({"agent": "claude", "stop": "Failed"}.items())
    assert found[("corral_turns_ended_total", failed)] == 1
    agents = {dict(labels).get("agent") for name, labels in found} - {None}
    assert agents == {"claude", "codex"}
    overflow = frozenset({"label": "agent"}.items())
    assert found[("corral_metrics_label_overflow_total", overflow)] == 0


def test_a_fresh_install_stays_small() -> None:
    metrics = Metrics(version="test")
    metrics.zero(["claude", "codex", "copilot", "gemini", "opencode", "cursor", "mock"])
    assert len(_samples(metrics)) < 4000
