"""Golden exposition: a fixed record stream renders exactly the committed text.

The golden files pin every metric's name, help, type, unit, labels and
buckets, in both formats Prometheus reads (the classic text format, and
OpenMetrics with exemplars). After an intended change, regenerate them with
`CORRAL_UPDATE_GOLDEN=1 .venv/bin/python -m pytest tests/unit/metrics/test_golden.py`
and review the diff.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from corral.pipeline.errors import ErrorKind
from corral.pipeline.events import (
    Cancelled,
    ContextCompacted,
    Diagnostic,
    DiagnosticLevel,
    TextDelta,
    ToolKind,
    ToolStatus,
)
from corral.sinks.metrics import Metrics

from tests.unit.metrics.conftest import feed
from tests.unit.metrics.records import Stream

GOLDEN = Path(__file__).parent / "golden"
OPENMETRICS = "application/openmetrics-text; version=1.0.0; charset=utf-8"


def busy_session() -> Stream:
    """Two turns: text, a permission the app allowed, one a guard denied, usage; a death."""
    stream = Stream("s1", "claude").opened().at(1).turn_started().at(1.5)
    stream.event(TextDelta(message_id="m1", text="hello")).at(2)
    stream.tool("toolu_1", ToolStatus.RUNNING, ToolKind.EDIT).permission(
        "req_1", "toolu_1", ToolKind.EDIT
    )
    stream.at(6).decided("req_1", "allow_once", "app", 4.0, tool_kind="Edit")
    stream.at(7).tool("toolu_1", ToolStatus.COMPLETED, ToolKind.EDIT)
    stream.usage(cost=0.75, model="claude-sonnet", input=1200, output=300, cache_read=800)
    stream.at(8).turn_ended()
    stream.at(10).turn_started().at(11).tool("toolu_2", ToolStatus.RUNNING, ToolKind.READ)
    stream.decided("req_2", "allow_once", "mode:AcceptEdits", 0, tool_kind="Read", shown=False)
    stream.decided("req_3", "deny_once", "guard:rm-root", 0, shown=False)
    stream.event(ContextCompacted())
    stream.event(Diagnostic(level=DiagnosticLevel.WARNING, message="stall")).at(40)
    stream.turn_ended(Cancelled()).at(41).failed(ErrorKind.PROCESS_EXITED)
    return stream.closed("failed")


def quiet_session() -> Stream:
    return Stream("s2", "codex").opened().at(3).closed()


@pytest.fixture
def played(metrics: Metrics) -> Metrics:
    feed(metrics, busy_session(), quiet_session())
    metrics.observer.process_started("claude")
    metrics.observer.process_exited("claude", "signal 9 (SIGKILL)")
    metrics.observer.decode_error("claude", "not_json")
    return metrics


def compare(name: str, text: str) -> None:
    path = GOLDEN / name
    if os.environ.get("CORRAL_UPDATE_GOLDEN") == "1":
        path.write_text(text, encoding="utf-8")
    expected = path.read_text(encoding="utf-8")
    assert text == expected, f"{name} changed; see the module docstring to regenerate"


def test_the_text_exposition_matches_the_golden_file(played: Metrics) -> None:
    body, content_type = played.render()
    assert content_type.startswith("text/plain; version=0.0.4")
    compare("sessions.prom", body.decode())


def test_the_openmetrics_exposition_with_exemplars_matches_the_golden_file(
    played: Metrics,
) -> None:
    body, content_type = played.render(OPENMETRICS)
    assert content_type.startswith("application/openmetrics-text")
    compare("sessions.openmetrics", body.decode())
