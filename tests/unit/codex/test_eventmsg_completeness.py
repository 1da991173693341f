"""Codex EventMsg types once dropped silently: mapped, or ignored for a stated reason."""

from __future__ import annotations

from corral.pipeline.driver import DriverEvent, Emitted, TurnFinished
from corral.pipeline.events import Diagnostic, DiagnosticLevel
from corral.sources.codex._eventmsg import IGNORED, EventMsgNormalizer

DIFF = "diff --git a/a b/a\n"


def feed(*frames: dict[str, object]) -> list[DriverEvent]:
    normalizer, out = EventMsgNormalizer(), []
    for frame in frames:
        out.extend(normalizer.feed(frame))
    return out


def test_the_latest_turn_diff_rides_on_the_end_of_its_turn_only() -> None:
    out = feed(
        {"type": "task_started", "turn_id": "t1"},
        {"type": "turn_diff", "unified_diff": "diff --git a/old b/old\n"},
        {"type": "turn_diff", "unified_diff": DIFF},
        {"type": "task_complete", "turn_id": "t1"},
        {"type": "task_started", "turn_id": "t2"},
        {"type": "task_complete", "turn_id": "t2"},
    )
    first, second = [e for e in out if isinstance(e, TurnFinished)]
    assert first.extensions == {"codex/turn_diff": DIFF}
    assert second.extensions == {}


def test_an_aborted_turn_keeps_its_diff_and_its_reason() -> None:
    out = feed(
        {"type": "task_started", "turn_id": "t1"},
        {"type": "turn_diff", "unified_diff": DIFF},
        {"type": "turn_aborted", "reason": "interrupted"},
    )
    [end] = [e for e in out if isinstance(e, TurnFinished)]
    assert end.extensions == {"codex/turn_diff": DIFF, "codex/abort_reason": "interrupted"}


def test_a_failed_mcp_server_start_is_a_warning() -> None:
    [out] = feed({"type": "mcp_startup_update", "server": "jira", "status": {"state": "failed"}})
    assert isinstance(out, Emitted) and isinstance(out.kind, Diagnostic)
    assert out.kind.level is DiagnosticLevel.WARNING


def test_every_ignored_type_has_a_reason_and_yields_nothing() -> None:
    assert all(reason.strip() for reason in IGNORED.values())
    assert feed({"type": "shutdown_complete"}, {"type": "list_skills_response", "skills": []}) == []
