"""Copilot's settings, compaction and plan reads, as pure functions of what the SDK answers."""

from __future__ import annotations

import pytest
from corral.pipeline.events import PlanEntry, PlanStatus, PlanUpdated
from corral.sources.copilot._controls import (
    configure_call,
    mode_option,
    model_option,
    plan_call,
    plan_from,
)


def test_the_mode_option_is_the_sdks_session_modes() -> None:
    option = mode_option("plan")
    assert [c.value for c in option.choices] == ["interactive", "plan"]
    assert option.live and option.current == "plan"
    assert mode_option("nonsense").current is None
    assert mode_option("autopilot").current is None  # never offered: it acts without asking


def test_an_empty_model_list_leaves_the_current_model_alone() -> None:
    # Copilot 1.0.102 under a BYOK provider: `{"list": [], ...}`, the model "any"
    option = model_option({"list": [], "quotaSnapshots": {}}, "any")
    assert option is not None and [c.value for c in option.choices] == ["any"]
    assert model_option({"list": []}, None) is None


def test_listed_models_come_first_once_each() -> None:
    listed = {"list": [{"id": "m1", "name": "Model 1"}, "m2", {"id": "m1"}, {"name": "no id"}]}
    option = model_option(listed, "m2")
    assert option is not None
    assert [(c.value, c.label) for c in option.choices] == [("m1", "Model 1"), ("m2", "m2")]


def test_the_calls_of_configure() -> None:
    assert configure_call("model", "m") == ("session.model.switchTo", {"modelId": "m"})
    assert configure_call("mode", "plan") == ("session.mode.set", {"mode": "plan"})
    assert configure_call("effort", "high") is None


@pytest.mark.parametrize(
    ("event", "method"),
    [
        ({"type": "session.todos_changed", "data": {}}, "session.plan.readSqlTodos"),
        ({"type": "session.plan_changed", "data": {"operation": "update"}}, "session.plan.read"),
        ({"type": "session.plan_changed", "data": {"operation": "delete"}}, None),
        ({"type": "session.idle", "data": {}}, None),
        ("not an event", None),
    ],
)
def test_which_signal_reads_what(event: object, method: str | None) -> None:
    assert plan_call(event) == method


def test_todo_rows_are_plan_entries() -> None:
    rows = {
        "rows": [
            {"title": "a", "status": "done"},
            {"description": "b", "status": "in_progress"},
            {"id": "c", "status": "blocked"},
            {"status": "done"},
        ]
    }
    plan = plan_from("session.plan.readSqlTodos", rows)
    assert plan is not None
    assert plan.kind == PlanUpdated(
        (
            PlanEntry(text="a", status=PlanStatus.COMPLETED),
            PlanEntry(text="b", status=PlanStatus.IN_PROGRESS),
            PlanEntry(text="c", status=PlanStatus.PENDING),
        )
    )


def test_the_plan_files_list_items_are_its_entries() -> None:
    content = "# Plan\n1. [x] one\n2) two\n- [~] three\nprose\n* [ ] four\n"
    plan = plan_from("session.plan.read", {"exists": True, "content": content, "path": "p"})
    assert plan is not None and isinstance(plan.kind, PlanUpdated)
    assert [(e.text, e.status) for e in plan.kind.entries] == [
        ("one", PlanStatus.COMPLETED),
        ("two", PlanStatus.PENDING),
        ("three", PlanStatus.IN_PROGRESS),
        ("four", PlanStatus.PENDING),
    ]
    assert plan.extensions["copilot/plan"] == content


def test_a_missing_plan_file_is_an_empty_plan() -> None:
    plan = plan_from("session.plan.read", {"exists": False, "content": None, "path": "p"})
    assert plan is not None and plan.kind == PlanUpdated(())


def test_an_answer_of_an_unknown_shape_is_none() -> None:
    assert plan_from("session.plan.readSqlTodos", {"rows": "x"}) is None
    assert plan_from("session.plan.read", None) is None
