"""Session-level Copilot events reach the model as meaning: config, context, quota, the end.

The golden scenarios (`session_config`, `session_work`, `session_notes`)
show every newly mapped type; these tests pin the behaviours a golden file
would let slip: the order and kind of what one event becomes.
"""

from __future__ import annotations

from corral.pipeline.driver import ConfigApplied, Emitted, InfoChanged, WireFailed
from corral.pipeline.events import (
    ContextCompacted,
    ContextUsage,
    Diagnostic,
    DiagnosticLevel,
    PlanUpdated,
    PlanUsageUpdated,
    SlashCommand,
    ToolStatus,
    ToolUpdated,
)
from corral.sources.copilot import CopilotNormalizer

from tests.unit.copilot.test_normalizer import event, feed


def test_a_model_change_is_the_model_and_effort_options_applied() -> None:
    out = feed(
        CopilotNormalizer(),
        event("session.model_change", newModel="gpt-5", reasoningEffort="low"),
        event("session.mode_changed", previousMode="interactive", newMode="autopilot"),
    )
    assert out == [
        ConfigApplied(option="model", value="gpt-5"),
        ConfigApplied(option="effort", value="low"),
        ConfigApplied(option="mode", value="autopilot"),
    ]


def test_commands_changed_is_the_slash_command_list() -> None:
    commands = [{"name": "plan", "description": "Make a plan"}, {"name": "clear"}]
    [out] = feed(CopilotNormalizer(), event("commands.changed", commands=commands))
    assert out == InfoChanged(
        commands=(
            SlashCommand(name="plan", description="Make a plan"),
            SlashCommand(name="clear", description=""),
        )
    )


def test_a_truncation_compacts_and_reports_the_new_context_size() -> None:
    out = feed(
        CopilotNormalizer(),
        event(
            "session.truncation",
            tokenLimit=1000,
            postTruncationTokensInMessages=400,
            performedBy="BasicTruncator",
        ),
    )
    assert [item.kind for item in out if isinstance(item, Emitted)] == [
        ContextCompacted(),
        ContextUsage(used_tokens=400, window_tokens=1000),
    ]


def test_quota_snapshots_are_plan_usage_windows() -> None:
    snapshot = {"remainingPercentage": 25.0, "resetDate": "2026-12-01T00:00:00Z"}
    out = feed(
        CopilotNormalizer(),
        event("assistant.usage", model="m", inputTokens=1, quotaSnapshots={"chat": snapshot}),
    )
    [usage] = [
        i.kind for i in out if isinstance(i, Emitted) and isinstance(i.kind, PlanUsageUpdated)
    ]
    [window] = usage.usage.windows
    assert (window.label, window.used_percent) == ("chat", 75)
    assert window.resets_at is not None and window.resets_at.secs == 1796083200


def test_a_deleted_plan_empties_the_plan_and_a_changed_one_is_a_signal() -> None:
    deleted, changed = feed(
        CopilotNormalizer(),
        event("session.plan_changed", operation="delete"),
        event("session.plan_changed", operation="update"),
    )
    assert isinstance(deleted, Emitted) and deleted.kind == PlanUpdated(entries=())
    assert isinstance(changed, Emitted) and isinstance(changed.kind, Diagnostic)
    assert changed.extensions["copilot/signal"] == "session.plan_changed"


def test_an_error_shutdown_ends_the_session_with_the_reason() -> None:
    [out] = feed(
        CopilotNormalizer(),
        event("session.shutdown", shutdownType="error", errorReason="out of memory"),
    )
    assert isinstance(out, WireFailed)
    assert out.kind == "ProtocolFailed" and "out of memory" in out.message


def test_hook_progress_refines_the_running_hook_and_its_end_fails_it() -> None:
    out = feed(
        CopilotNormalizer(),
        event("hook.start", hookInvocationId="h", hookType="preToolUse"),
        event("hook.progress", message="checking"),
        event("hook.end", hookInvocationId="h", hookType="preToolUse", success=False),
        event("hook.progress", message="stray"),
    )
    tools = [i for i in out if isinstance(i, Emitted) and isinstance(i.kind, ToolUpdated)]
    assert [t.kind.tool.status for t in tools if isinstance(t.kind, ToolUpdated)] == [
        ToolStatus.RUNNING,
        ToolStatus.RUNNING,
        ToolStatus.FAILED,
    ]
    assert tools[1].extensions["copilot/progress"] == "checking"
    stray = out[-1]
    assert isinstance(stray, Emitted) and stray.kind == Diagnostic(
        level=DiagnosticLevel.INFO, message="stray"
    )


def test_limits_and_failures_are_warnings_other_notes_info() -> None:
    failure, loaded = feed(
        CopilotNormalizer(),
        event("model.call_failure", source="top_level", statusCode=500),
        event("session.mcp_servers_loaded", servers=[{"name": "a", "status": "connected"}]),
    )
    assert isinstance(failure, Emitted) and isinstance(failure.kind, Diagnostic)
    assert failure.kind.level is DiagnosticLevel.WARNING
    assert isinstance(loaded, Emitted) and isinstance(loaded.kind, Diagnostic)
    assert loaded.kind.level is DiagnosticLevel.INFO


def test_consumed_signals_yield_nothing() -> None:
    out = feed(
        CopilotNormalizer(),
        event("pending_messages.modified"),
        event("assistant.streaming_delta", totalResponseSizeBytes=10),
        event("model.call_start", turnId="0"),
    )
    assert out == []
