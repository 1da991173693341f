"""Label values stay in closed sets."""

from __future__ import annotations

import pickle

import pytest
from corral.pipeline.records import Decider, PolicyDecider, PolicyPart, decided_by_from
from corral.pipeline.rules import GUARD_IDS
from corral.sinks.metrics import LabelCap
from corral.sinks.metrics._labels import (
    decided_by_label,
    exemplar_labels,
    exit_kind,
    queue_label,
)


def test_a_cap_admits_its_first_values_and_folds_later_ones_into_other() -> None:
    overflows: list[None] = []
    cap = LabelCap(2, on_overflow=lambda: overflows.append(None))
    assert [cap(v) for v in ("a", "b", "c", "a", "d")] == ["a", "b", "other", "a", "other"]
    assert len(overflows) == 2


def test_a_cap_below_one_is_refused() -> None:
    with pytest.raises(ValueError):
        LabelCap(0)


@pytest.mark.parametrize(
    ("status", "kind"),
    [
        ("0", "clean"),
        ("1", "error"),
        ("9", "error"),
        ("signal 9 (SIGKILL)", "signal"),
        ("unknown", "unknown"),
        ("", "unknown"),
    ],
)
def test_exit_statuses_map_to_kinds(status: str, kind: str) -> None:
    assert exit_kind(status) == kind


@pytest.mark.parametrize(
    ("decided_by", "label"),
    [
        ("app", "app"),
        ("rule:no-rm", "rule"),
        ("mode:AutoApprove", "mode:AutoApprove"),
        ("mode:Yolo", "mode:other"),
        ("guard:rm-root", "guard:rm-root"),
        ("guard:unparsed-command", "guard:unparsed-command"),
        ("guard:future-guard", "guard:other"),
        ("timeout", "timeout"),
    ],
)
def test_deciders_map_to_a_closed_set(decided_by: str, label: str) -> None:
    assert decided_by_label(decided_by_from(decided_by)) == label


@pytest.mark.parametrize("guard", GUARD_IDS)
def test_every_built_in_guard_keeps_its_id_as_decider(guard: str) -> None:
    assert decided_by_label(PolicyDecider(PolicyPart.GUARD, guard)) == f"guard:{guard}"


@pytest.mark.parametrize("word", ["someone", "rule:", "policy:x", ""])
def test_a_word_that_names_no_decider_is_refused_where_it_is_read(word: str) -> None:
    with pytest.raises(ValueError):
        decided_by_from(word)


def test_a_policy_decider_is_its_word_and_comes_apart_again() -> None:
    rule = PolicyDecider(PolicyPart.RULE, "ci:tests")  # a rule id may hold a colon
    assert rule == "rule:ci:tests" and (rule.part, rule.name) == (PolicyPart.RULE, "ci:tests")
    again = pickle.loads(pickle.dumps(rule))  # crosses processes (a Ray host) intact
    assert type(again) is PolicyDecider and again.name == "ci:tests"
    assert decided_by_from(str(rule)) == rule and decided_by_from("app") is Decider.APP


@pytest.mark.parametrize(
    ("name", "queue"),
    [
        ("s1/driver", "driver"),
        ("s1234/lines", "lines"),
        ("lines/replies", "lines/replies"),
        ("s7/app-stream", "app-stream"),
        ("session/x", "session/x"),
    ],
)
def test_a_channel_name_loses_its_session_id(name: str, queue: str) -> None:
    assert queue_label(name) == queue


def test_exemplar_labels_fit_the_openmetrics_budget() -> None:
    labels = exemplar_labels(session_id="s1", tool_id="x" * 500, turn_id=None)
    assert labels["session_id"] == "s1"
    assert "turn_id" not in labels
    assert sum(len(k) + len(v) for k, v in labels.items()) == 128
