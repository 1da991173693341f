"""The app-server normalizer, one behaviour at a time (hand-made frames)."""

from __future__ import annotations

from typing import Any

from corral.pipeline.driver import (
    Emitted,
    InfoChanged,
    RequestAsked,
    RequestWithdrawn,
    TurnBegan,
    TurnFinished,
)
from corral.pipeline.events import (
    Cancelled,
    Completed,
    ContextCompacted,
    ContextUsage,
    Diagnostic,
    DiagnosticLevel,
    Failed,
    Mcp,
    MessageEnded,
    PlanStatus,
    PlanUpdated,
    PlanUsageUpdated,
    ReasoningDelta,
    TextDelta,
    ToolKind,
    ToolOutputDelta,
    ToolStatus,
    ToolUpdated,
    UserMessage,
)
from corral.sources.codex import AppServerNormalizer

from tests.unit.codex.golden import check_outputs

THREAD = "thread-1"


def _normalizer() -> AppServerNormalizer:
    normalizer = AppServerNormalizer(wall_clock_ns=lambda: 1_800_000_000_000_000_000)
    normalizer.thread_id = THREAD
    normalizer.model = "gpt-5.5"
    return normalizer


def _turn(status: str = "inProgress", **extra: Any) -> dict[str, Any]:
    return {"threadId": THREAD, "turn": {"id": "turn-1", "items": [], "status": status, **extra}}


def _item(kind: str, method: str = "item/started", **fields: Any) -> tuple[str, dict[str, Any]]:
    return method, {"threadId": THREAD, "turnId": "turn-1", "item": {"type": kind, **fields}}


def _command(status: str, **extra: Any) -> dict[str, Any]:
    return {
        "id": "call-1",
        "command": "/bin/bash -lc 'sleep 9'",
        "cwd": "/w",
        "status": status,
        "commandActions": [{"type": "unknown", "command": "sleep 9"}],
        **extra,
    }


def _kinds(events: list[Any]) -> list[object]:
    return [e.kind if isinstance(e, Emitted) else e for e in events]


def test_turn_started_is_turn_began_and_names_the_active_turn() -> None:
    normalizer = _normalizer()
    assert normalizer.notification("turn/started", _turn()) == [TurnBegan()]
    assert normalizer.active_turn == "turn-1"


def test_turn_completed_statuses_map_to_stop_reasons() -> None:
    for status, stop in [
        ("completed", Completed()),
        ("interrupted", Cancelled()),
        ("failed", Failed("boom (details)")),
    ]:
        normalizer = _normalizer()
        normalizer.notification("turn/started", _turn())
        error = {"message": "boom", "additionalDetails": "details"}
        (finished,) = normalizer.notification("turn/completed", _turn(status, error=error))
        assert isinstance(finished, TurnFinished) and finished.stop == stop
        assert normalizer.active_turn is None


def test_an_interrupt_ends_the_running_tools_cancelled_before_the_turn() -> None:
    normalizer = _normalizer()
    normalizer.notification("turn/started", _turn())
    normalizer.notification(*_item("commandExecution", **_command("inProgress")))
    normalizer.notification(
        "item/commandExecution/outputDelta",
        {"threadId": THREAD, "turnId": "turn-1", "itemId": "call-1", "delta": "partial"},
    )
    events = normalizer.notification("turn/completed", _turn("interrupted"))
    cancelled, finished = events
    assert isinstance(cancelled, Emitted) and isinstance(cancelled.kind, ToolUpdated)
    assert cancelled.kind.tool.status is ToolStatus.CANCELLED
    assert cancelled.kind.tool.output == "partial"
    assert isinstance(finished, TurnFinished) and finished.stop == Cancelled()


def test_a_completed_turn_leaves_running_tools_alone() -> None:
    normalizer = _normalizer()
    normalizer.notification("turn/started", _turn())
    normalizer.notification(*_item("commandExecution", **_command("inProgress")))
    (finished,) = normalizer.notification("turn/completed", _turn("completed"))
    assert isinstance(finished, TurnFinished)


def test_other_threads_turns_are_not_ours() -> None:
    normalizer = _normalizer()
    other = {"threadId": "sub", "turn": {"id": "t9", "items": [], "status": "inProgress"}}
    assert normalizer.notification("turn/started", other) == []


def test_other_threads_items_are_marked() -> None:
    normalizer = _normalizer()
    delta = {"threadId": "sub", "turnId": "t9", "itemId": "m", "delta": "hi"}
    (event,) = normalizer.notification("item/agentMessage/delta", delta)
    assert isinstance(event, Emitted) and event.extensions == {"codex/thread_id": "sub"}


def test_agent_message_streams_then_ends() -> None:
    normalizer = _normalizer()
    delta = {"threadId": THREAD, "turnId": "turn-1", "itemId": "m1", "delta": "Hel"}
    assert _kinds(normalizer.notification("item/agentMessage/delta", delta)) == [
        TextDelta(message_id="m1", text="Hel")
    ]
    done = normalizer.notification(*_item("agentMessage", "item/completed", id="m1", text="Hel"))
    assert _kinds(done) == [MessageEnded("m1")]


def test_agent_message_that_never_streamed_is_sent_whole() -> None:
    normalizer = _normalizer()
    done = normalizer.notification(*_item("agentMessage", "item/completed", id="m1", text="All"))
    assert _kinds(done) == [TextDelta(message_id="m1", text="All"), MessageEnded("m1")]


def test_reasoning_summary_and_raw_text_are_separate_messages() -> None:
    normalizer = _normalizer()
    base = {"threadId": THREAD, "turnId": "turn-1", "itemId": "r1"}
    normalizer.notification(
        "item/reasoning/summaryTextDelta", {**base, "delta": "a", "summaryIndex": 0}
    )
    part = normalizer.notification("item/reasoning/summaryPartAdded", {**base, "summaryIndex": 1})
    raw = normalizer.notification(
        "item/reasoning/textDelta", {**base, "delta": "r", "contentIndex": 0}
    )
    assert _kinds(part) == [ReasoningDelta(message_id="r1", text="\n\n")]
    assert _kinds(raw) == [ReasoningDelta(message_id="r1:raw", text="r")]
    done = normalizer.notification(*_item("reasoning", "item/completed", id="r1", summary=["a"]))
    assert _kinds(done) == [MessageEnded("r1"), MessageEnded("r1:raw")]


def test_our_prompt_is_not_echoed_but_other_user_messages_are() -> None:
    normalizer = _normalizer()
    normalizer.expect_prompt("client-1", "mine")
    content = [{"type": "text", "text": "mine"}]
    ours = _item("userMessage", "item/completed", id="u1", clientId="client-1", content=content)
    assert normalizer.notification(*ours) == []
    theirs = _item("userMessage", "item/completed", id="u2", clientId=None, content=content)
    assert _kinds(normalizer.notification(*theirs)) == [UserMessage(message_id="u2", text="mine")]


def test_a_prompt_without_client_id_is_matched_by_text_once() -> None:
    normalizer = _normalizer()
    normalizer.expect_prompt("client-1", "hello")
    content = [{"type": "text", "text": "hello"}]
    first = _item("userMessage", "item/completed", id="u1", content=content)
    assert normalizer.notification(*first) == []
    assert len(normalizer.notification(*first)) == 1


def test_command_item_becomes_an_execute_tool_titled_by_its_parsed_command() -> None:
    normalizer = _normalizer()
    (started,) = normalizer.notification(*_item("commandExecution", **_command("inProgress")))
    assert isinstance(started, Emitted) and isinstance(started.kind, ToolUpdated)
    tool = started.kind.tool
    assert (tool.kind, tool.title, tool.status) == (ToolKind.EXECUTE, "sleep 9", ToolStatus.RUNNING)
    done = _command("completed", aggregatedOutput="ok\n", exitCode=0)
    (ended,) = normalizer.notification(*_item("commandExecution", "item/completed", **done))
    assert isinstance(ended, Emitted) and isinstance(ended.kind, ToolUpdated)
    assert (ended.kind.tool.status, ended.kind.tool.output) == (ToolStatus.COMPLETED, "ok\n")


def test_declined_command_fails() -> None:
    normalizer = _normalizer()
    (ended,) = normalizer.notification(
        *_item("commandExecution", "item/completed", **_command("declined"))
    )
    assert isinstance(ended, Emitted) and isinstance(ended.kind, ToolUpdated)
    assert ended.kind.tool.status is ToolStatus.FAILED


def test_output_deltas_are_tool_output_and_fill_a_missing_aggregate() -> None:
    normalizer = _normalizer()
    delta = {"threadId": THREAD, "turnId": "turn-1", "itemId": "call-1", "delta": "x\n"}
    assert _kinds(normalizer.notification("item/commandExecution/outputDelta", delta)) == [
        ToolOutputDelta(tool_id="call-1", text="x\n")
    ]
    (ended,) = normalizer.notification(
        *_item("commandExecution", "item/completed", **_command("completed"))
    )
    assert isinstance(ended, Emitted) and isinstance(ended.kind, ToolUpdated)
    assert ended.kind.tool.output == "x\n"


def test_file_change_item_is_an_edit_with_diffs() -> None:
    normalizer = _normalizer()
    changes = [
        {"path": "/w/new.txt", "kind": {"type": "add"}, "diff": "hello\n"},
        {
            "path": "/w/a.py",
            "kind": {"type": "update", "move_path": None},
            "diff": "@@ -1 +1 @@\n-a\n+b\n",
        },
    ]
    (event,) = normalizer.notification(
        *_item("fileChange", id="p1", status="inProgress", changes=changes)
    )
    assert isinstance(event, Emitted) and isinstance(event.kind, ToolUpdated)
    tool = event.kind.tool
    assert tool.kind is ToolKind.EDIT
    assert [(d.path, d.old_text, d.new_text) for d in tool.diffs] == [
        ("/w/new.txt", None, "hello\n"),
        ("/w/a.py", "a", "b"),
    ]


def test_deleting_and_moving_files_are_their_own_kinds() -> None:
    normalizer = _normalizer()
    delete = [{"path": "/w/x", "kind": {"type": "delete"}, "diff": "old\n"}]
    move = [{"path": "/w/x", "kind": {"type": "update", "move_path": "/w/y"}, "diff": ""}]
    (deleted,) = normalizer.notification(
        *_item("fileChange", id="d", status="inProgress", changes=delete)
    )
    (moved,) = normalizer.notification(
        *_item("fileChange", id="m", status="inProgress", changes=move)
    )
    assert isinstance(deleted, Emitted) and isinstance(deleted.kind, ToolUpdated)
    assert isinstance(moved, Emitted) and isinstance(moved.kind, ToolUpdated)
    assert deleted.kind.tool.kind is ToolKind.DELETE
    assert (moved.kind.tool.kind, moved.kind.tool.locations) == (ToolKind.MOVE, ("/w/x", "/w/y"))


def test_mcp_and_web_search_items() -> None:
    normalizer = _normalizer()
    mcp = {
        "id": "t1",
        "server": "docs",
        "tool": "find",
        "status": "completed",
        "arguments": {"q": 1},
        "result": {"content": [{"type": "text", "text": "found"}]},
    }
    (called,) = normalizer.notification(*_item("mcpToolCall", "item/completed", **mcp))
    search = {"id": "s1", "query": "attrs", "action": {"type": "search", "query": "attrs"}}
    (searched,) = normalizer.notification(*_item("webSearch", "item/completed", **search))
    assert isinstance(called, Emitted) and isinstance(called.kind, ToolUpdated)
    assert isinstance(searched, Emitted) and isinstance(searched.kind, ToolUpdated)
    assert called.kind.tool.output == "found" and called.kind.tool.title == "docs.find"
    assert called.kind.tool.kind == Mcp(server="docs", tool="find")
    assert (searched.kind.tool.kind, searched.kind.tool.status) == (
        ToolKind.SEARCH,
        ToolStatus.COMPLETED,
    )


def test_file_change_output_is_tool_output_of_the_edit() -> None:
    normalizer = _normalizer()
    add = [{"path": "/w/new.txt", "kind": {"type": "add"}, "diff": "hello\n"}]
    normalizer.notification(*_item("fileChange", id="f1", status="inProgress", changes=add))
    delta = {"threadId": THREAD, "turnId": "turn-1", "itemId": "f1", "delta": "Success.\n"}
    assert _kinds(normalizer.notification("item/fileChange/outputDelta", delta)) == [
        ToolOutputDelta(tool_id="f1", text="Success.\n")
    ]
    (ended,) = normalizer.notification(
        *_item("fileChange", "item/completed", id="f1", status="completed", changes=add)
    )
    assert isinstance(ended, Emitted) and isinstance(ended.kind, ToolUpdated)
    assert ended.kind.tool.kind is ToolKind.EDIT
    assert ended.kind.tool.output == "Success.\n"


def test_compaction_item_and_the_legacy_notification_give_one_event() -> None:
    normalizer = _normalizer()
    normalizer.notification("turn/started", _turn())
    first = normalizer.notification(*_item("contextCompaction", "item/completed", id="c"))
    again = normalizer.notification("thread/compacted", {"threadId": THREAD, "turnId": "turn-1"})
    assert _kinds(first) == [ContextCompacted()] and again == []


def test_plan_updates() -> None:
    normalizer = _normalizer()
    plan = [{"step": "a", "status": "completed"}, {"step": "b", "status": "inProgress"}]
    (event,) = normalizer.notification(
        "turn/plan/updated", {"threadId": THREAD, "turnId": "turn-1", "plan": plan}
    )
    assert isinstance(event, Emitted) and isinstance(event.kind, PlanUpdated)
    assert [e.status for e in event.kind.entries] == [PlanStatus.COMPLETED, PlanStatus.IN_PROGRESS]


def _usage(total: int, last: int) -> dict[str, Any]:
    def breakdown(n: int) -> dict[str, int]:
        return {
            "totalTokens": n + n // 10,
            "inputTokens": n,
            "cachedInputTokens": n // 2,
            "outputTokens": n // 10,
            "reasoningOutputTokens": n // 100,
        }

    return {
        "threadId": THREAD,
        "turnId": "turn-1",
        "tokenUsage": {
            "total": breakdown(total),
            "last": breakdown(last),
            "modelContextWindow": 1000,
        },
    }


def test_token_usage_adds_up_within_a_turn() -> None:
    normalizer = _normalizer()
    normalizer.notification("turn/started", _turn())
    normalizer.notification("thread/tokenUsage/updated", _usage(100, 100))
    (event,) = normalizer.notification("thread/tokenUsage/updated", _usage(300, 200))
    assert isinstance(event, Emitted) and isinstance(event.kind, ContextUsage)
    assert (event.kind.used_tokens, event.kind.window_tokens) == (220, 1000)
    assert event.tokens.counts() == {
        "input": 150,
        "output": 30,
        "cache_read": 150,
        "cache_write": 0,
        "reasoning": 3,
    }
    assert event.model == "gpt-5.5"


def test_token_usage_restarts_with_each_turn() -> None:
    normalizer = _normalizer()
    normalizer.notification("turn/started", _turn())
    normalizer.notification("thread/tokenUsage/updated", _usage(100, 100))
    normalizer.notification("turn/completed", _turn("completed"))
    normalizer.notification("turn/started", _turn())
    (event,) = normalizer.notification("thread/tokenUsage/updated", _usage(160, 60))
    assert isinstance(event, Emitted)
    assert event.tokens.counts()["input"] == 30  # 60 more, half of it cached


def test_a_resumed_threads_first_usage_outside_a_turn_counts_nothing() -> None:
    normalizer = _normalizer()
    (event,) = normalizer.notification("thread/tokenUsage/updated", _usage(5000, 100))
    assert isinstance(event, Emitted)
    assert set(event.tokens.counts().values()) == {0}


def test_rate_limits_become_plan_usage_only_when_codex_reports_a_window() -> None:
    normalizer = _normalizer()
    empty = {"rateLimits": {"limitId": "codex", "primary": None, "secondary": None}}
    assert normalizer.notification("account/rateLimits/updated", empty) == []
    limits = {
        "rateLimits": {
            "primary": {"usedPercent": 42, "windowDurationMins": 300, "resetsAt": 1800000000},
            "secondary": {"usedPercent": 7, "windowDurationMins": 10080},
            "planType": "pro",
        }
    }
    (event,) = normalizer.notification("account/rateLimits/updated", limits)
    assert isinstance(event, Emitted) and isinstance(event.kind, PlanUsageUpdated)
    usage = event.kind.usage
    assert usage.plan == "pro"
    assert [(w.label, w.used_percent) for w in usage.windows] == [("Session", 42), ("Week", 7)]


def test_errors_and_warnings_are_diagnostics() -> None:
    normalizer = _normalizer()
    error = {"error": {"message": "lost", "codexErrorInfo": "other"}, "willRetry": True}
    (retrying,) = normalizer.notification("error", {**error, "threadId": THREAD, "turnId": "t"})
    (warning,) = normalizer.notification("configWarning", {"summary": "odd", "details": "why"})
    assert isinstance(retrying, Emitted) and isinstance(warning, Emitted)
    assert retrying.kind == Diagnostic(level=DiagnosticLevel.WARNING, message="lost")
    assert retrying.extensions["codex/error_info"] == "other"
    assert warning.kind == Diagnostic(level=DiagnosticLevel.WARNING, message="odd (why)")


def test_thread_name_is_the_title() -> None:
    normalizer = _normalizer()
    named = normalizer.notification(
        "thread/name/updated", {"threadId": THREAD, "threadName": "Fix"}
    )
    assert named == [InfoChanged(title="Fix")]


def test_unknown_notification_is_an_info_diagnostic_with_the_raw_frame() -> None:
    (event,) = _normalizer().notification("brand/new", {"x": 1})
    assert isinstance(event, Emitted) and isinstance(event.kind, Diagnostic)
    assert event.kind.level is DiagnosticLevel.INFO
    assert event.unknown_frame == "brand/new"
    assert event.extensions["codex/raw_frame"] == {"method": "brand/new", "params": {"x": 1}}
    check_outputs([event])


def test_unknown_item_type_is_an_info_diagnostic() -> None:
    (event,) = _normalizer().notification(*_item("hologram", "item/completed", id="h"))
    assert isinstance(event, Emitted) and event.unknown_frame == "item/hologram"


def test_known_noise_is_dropped() -> None:
    normalizer = _normalizer()
    status = {"threadId": THREAD, "status": {"type": "idle"}}
    assert normalizer.notification("thread/status/changed", status) == []


def test_a_frame_of_the_wrong_shape_is_a_warning_not_a_crash() -> None:
    (event,) = _normalizer().notification("turn/started", {"threadId": THREAD, "turn": "?"})
    assert isinstance(event, Emitted) and isinstance(event.kind, Diagnostic)
    assert event.kind.level is DiagnosticLevel.WARNING
    assert event.problem == "bad_shape"


def test_approval_request_uses_the_tool_the_app_already_saw() -> None:
    normalizer = _normalizer()
    normalizer.notification(*_item("commandExecution", **_command("inProgress")))
    params = {"threadId": THREAD, "turnId": "turn-1", "itemId": "call-1", "startedAtMs": 1}
    events, reply = normalizer.server_request(5, "item/commandExecution/requestApproval", params)
    (asked,) = events
    assert reply is None
    assert isinstance(asked, RequestAsked)
    assert asked.request.id == "codex-5"
    assert asked.request.tool.title == "sleep 9"  # type: ignore[union-attr]


def test_a_request_codex_resolved_itself_is_withdrawn() -> None:
    normalizer = _normalizer()
    params = {"threadId": THREAD, "turnId": "turn-1", "itemId": "x", "startedAtMs": 1}
    normalizer.server_request(0, "item/fileChange/requestApproval", params)
    resolved = {"threadId": THREAD, "requestId": 0}
    assert normalizer.notification("serverRequest/resolved", resolved) == [
        RequestWithdrawn("codex-0")
    ]
    assert normalizer.notification("serverRequest/resolved", resolved) == []


def test_an_unsupported_server_request_gets_an_error_reply_at_once() -> None:
    events, reply = _normalizer().server_request(3, "item/tool/call", {"tool": "x"})
    (event,) = events
    assert isinstance(event, Emitted) and event.unknown_frame == "item/tool/call"
    assert reply is not None and reply.rpc_id == 3 and reply.error is not None


def test_an_mcp_elicitation_is_declined_with_a_warning() -> None:
    params = {"message": "Pick", "mode": "form", "requestedSchema": {}}
    events, reply = _normalizer().server_request(4, "mcpServer/elicitation/request", params)
    (event,) = events
    assert isinstance(event, Emitted) and isinstance(event.kind, Diagnostic)
    assert reply is not None and reply.result == {"action": "decline", "content": None}
