"""The protocol on frames the recordings do not hold.

The mock model cannot think, spawn subagents or call MCP tools, and the
CLI never misbehaves on cue, so these frames are written by hand in the
shapes the Claude Agent SDK documents and the CLI's own schema describes.
One behaviour per test; every produced event is checked against the
line-protocol schema.
"""

from __future__ import annotations

import json
from typing import Any

import orjson
from corral.pipeline.commands import RollbackScope
from corral.pipeline.driver import (
    ConfigRefused,
    Configure,
    DriverEvent,
    Emitted,
    InfoChanged,
    Interrupt,
    RequestAsked,
    RequestWithdrawn,
    Respond,
    Rollback,
    RollbackVerdict,
    StartTurn,
    SteerTurn,
    SteerVerdict,
    TurnBegan,
    TurnFinished,
    Withdraw,
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
    PermissionAnswer,
    PermissionChoice,
    PermissionRequest,
    PlanStatus,
    PlanUpdated,
    ReasoningDelta,
    Refused,
    TextDelta,
    ToolKind,
    ToolUpdated,
    UserMessage,
)
from corral.sources.claude import ClaudeProtocol

from tests.unit.claude.support import check_produced

TURN = "11111111-1111-4111-8111-111111111111"


def started() -> ClaudeProtocol:
    """A protocol past `initialize`, with one prompt sent and begun."""
    protocol = ClaudeProtocol(new_id=lambda: TURN)
    protocol.initialized = {}
    protocol.send(StartTurn(turn_id="t1", prompt_id="p1", text="hi"))
    got = take(protocol, {"type": "command_lifecycle", "command_uuid": TURN, "state": "started"})
    assert got == [TurnBegan()]
    return protocol


def take(protocol: ClaudeProtocol, *frames: dict[str, Any]) -> list[DriverEvent]:
    produced: list[DriverEvent] = []
    for frame in frames:
        produced.extend(protocol.feed(orjson.dumps(frame) + b"\n"))
    check_produced(produced)
    return produced


def stream(event: dict[str, Any], parent: str | None = None) -> dict[str, Any]:
    return {"type": "stream_event", "event": event, "parent_tool_use_id": parent}


def kinds(produced: list[DriverEvent]) -> list[object]:
    return [e.kind for e in produced if isinstance(e, Emitted)]


def result(**fields: Any) -> dict[str, Any]:
    return {"type": "result", "subtype": "success", "is_error": False, **fields}


def assistant(
    *blocks: dict[str, Any], parent: str | None = None, mid: str = "m1"
) -> dict[str, Any]:
    message = {"id": mid, "role": "assistant", "model": "claude-x", "content": list(blocks)}
    return {"type": "assistant", "message": message, "parent_tool_use_id": parent}


def test_thinking_deltas_become_reasoning_of_the_same_message() -> None:
    protocol = started()
    produced = take(
        protocol,
        stream({"type": "message_start", "message": {"id": "m1", "usage": {}}}),
        stream(
            {
                "type": "content_block_delta",
                "index": 0,
                "delta": {"type": "thinking_delta", "thinking": "hmm"},
            }
        ),
        stream(
            {
                "type": "content_block_delta",
                "index": 1,
                "delta": {"type": "text_delta", "text": "ok"},
            }
        ),
    )
    assert kinds(produced) == [
        ReasoningDelta(message_id="m1", text="hmm"),
        TextDelta(message_id="m1", text="ok"),
    ]


def test_subagent_content_carries_its_parent_tool_id() -> None:
    protocol = started()
    produced = take(
        protocol,
        assistant(
            {"type": "tool_use", "id": "task1", "name": "Task", "input": {"description": "look"}}
        ),
        assistant({"type": "text", "text": "inner"}, parent="task1", mid="m2"),
    )
    task, inner, ended = [e for e in produced if isinstance(e, Emitted)]
    assert isinstance(task.kind, ToolUpdated) and task.kind.tool.kind is ToolKind.SUBAGENT
    assert inner.parent_tool_id == "task1" and inner.kind == TextDelta(
        message_id="m2", text="inner"
    )
    assert ended.parent_tool_id == "task1"


def test_streamed_text_is_not_repeated_from_the_whole_message() -> None:
    protocol = started()
    produced = take(
        protocol,
        stream({"type": "message_start", "message": {"id": "m1"}}),
        stream(
            {
                "type": "content_block_delta",
                "index": 0,
                "delta": {"type": "text_delta", "text": "a"},
            }
        ),
        assistant({"type": "text", "text": "a"}),
        stream({"type": "message_stop"}),
    )
    assert [type(k).__name__ for k in kinds(produced)] == ["TextDelta", "MessageEnded"]


def test_todo_write_is_a_plan_and_its_result_is_silent() -> None:
    protocol = started()
    todos = [
        {"content": "read", "status": "completed", "activeForm": "Reading"},
        {"content": "write", "status": "in_progress", "activeForm": "Writing"},
    ]
    produced = take(
        protocol,
        assistant(
            {"type": "tool_use", "id": "todo1", "name": "TodoWrite", "input": {"todos": todos}}
        ),
        {
            "type": "user",
            "message": {
                "role": "user",
                "content": [{"type": "tool_result", "tool_use_id": "todo1", "content": "ok"}],
            },
        },
    )
    (plan,) = kinds(produced)
    assert isinstance(plan, PlanUpdated)
    assert [(e.text, e.status) for e in plan.entries] == [
        ("read", PlanStatus.COMPLETED),
        ("write", PlanStatus.IN_PROGRESS),
    ]


def test_mcp_tool_names_its_server_and_keeps_the_raw_call() -> None:
    protocol = started()
    produced = take(
        protocol,
        assistant(
            {
                "type": "tool_use",
                "id": "x1",
                "name": "mcp__github__create_issue",
                "input": {"title": "t"},
            }
        ),
    )
    (update,) = kinds(produced)
    assert isinstance(update, ToolUpdated)
    assert update.tool.kind == Mcp(server="github", tool="create_issue")
    assert update.tool.raw is not None and update.tool.raw.input == {"title": "t"}


def test_unknown_frame_is_an_info_diagnostic_with_the_raw_frame() -> None:
    protocol = started()
    frame = {"type": "brand_new_thing", "x": 1}
    (event,) = take(protocol, frame)
    assert isinstance(event, Emitted) and isinstance(event.kind, Diagnostic)
    assert event.kind.level is DiagnosticLevel.INFO
    assert event.extensions["claude/raw_frame"] == frame
    assert event.unknown_frame == "brand_new_thing"


def test_unknown_system_subtype_is_reported_with_its_subtype() -> None:
    protocol = started()
    (event,) = take(protocol, {"type": "system", "subtype": "brand_new"})
    assert isinstance(event, Emitted)
    assert event.unknown_frame == "system/brand_new"


def test_a_line_that_is_not_json_is_a_warning() -> None:
    protocol = started()
    (event,) = protocol.feed(b"Debugger attached.\n")
    assert isinstance(event, Emitted) and isinstance(event.kind, Diagnostic)
    assert event.kind.level is DiagnosticLevel.WARNING
    assert event.problem == "not_json"


def test_json_that_is_not_an_object_is_a_bad_shape() -> None:
    protocol = started()
    (event,) = protocol.feed(b"[1, 2]\n")
    assert isinstance(event, Emitted)
    assert event.problem == "bad_shape"


def test_control_request_corral_cannot_serve_gets_an_error_reply() -> None:
    protocol = started()
    (event,) = take(
        protocol,
        {"type": "control_request", "request_id": "r9", "request": {"subtype": "hook_callback"}},
    )
    assert isinstance(event, Emitted) and event.unknown_frame is not None
    reply = json.loads(protocol.data_to_send())
    assert reply["response"]["subtype"] == "error" and reply["response"]["request_id"] == "r9"
    assert protocol.data_to_send() == b""


def can_use_tool(request_id: str = "r1") -> dict[str, Any]:
    return {
        "type": "control_request",
        "request_id": request_id,
        "request": {
            "subtype": "can_use_tool",
            "tool_name": "Bash",
            "input": {"command": "rm -rf build"},
            "tool_use_id": "toolu_1",
            "permission_suggestions": [
                {"type": "setMode", "mode": "acceptEdits", "destination": "session"}
            ],
        },
    }


def test_permission_without_rule_suggestions_offers_no_allow_always() -> None:
    protocol = started()
    (asked,) = take(protocol, can_use_tool())
    assert isinstance(asked, RequestAsked) and isinstance(asked.request, PermissionRequest)
    assert asked.request.options == (PermissionChoice.ALLOW_ONCE, PermissionChoice.DENY_ONCE)
    assert asked.request.tool.id == "toolu_1"


def test_cli_withdrawing_a_permission_is_request_withdrawn() -> None:
    protocol = started()
    take(protocol, can_use_tool())
    produced = take(protocol, {"type": "control_cancel_request", "request_id": "r1"})
    assert produced == [RequestWithdrawn("r1")]
    data, _ = protocol.send(
        Respond(request_id="r1", answer=PermissionAnswer(PermissionChoice.ALLOW_ONCE))
    )
    assert data == b""  # nothing to answer any more


def test_withdraw_denies_so_the_cli_never_waits() -> None:
    protocol = started()
    take(protocol, can_use_tool())
    data, _ = protocol.send(Withdraw("r1"))
    reply = json.loads(data)
    assert reply["response"]["response"]["behavior"] == "deny"


def test_result_error_without_interrupt_fails_with_the_cli_errors() -> None:
    protocol = started()
    produced = take(protocol, result(is_error=True, subtype="success", errors=["overloaded"]))
    (end,) = [e for e in produced if isinstance(e, TurnFinished)]
    assert end.stop == Failed("overloaded")


def test_result_error_after_interrupt_is_cancelled() -> None:
    protocol = started()
    protocol.send(Interrupt("t1"))
    produced = take(protocol, result(is_error=True, subtype="error_during_execution"))
    (end,) = [e for e in produced if isinstance(e, TurnFinished)]
    assert end.stop == Cancelled()


def test_refusal_stop_reason_is_refused() -> None:
    protocol = started()
    (end,) = take(protocol, result(stop_reason="refusal"))
    assert isinstance(end, TurnFinished) and end.stop == Refused()


def test_usage_is_the_last_message_context_and_rides_before_the_end() -> None:
    protocol = started()
    usage = {
        "input_tokens": 10,
        "cache_read_input_tokens": 100,
        "cache_creation_input_tokens": 5,
        "output_tokens": 1,
    }
    produced = take(
        protocol,
        stream(
            {"type": "message_start", "message": {"id": "m1", "model": "claude-x", "usage": usage}}
        ),
        stream({"type": "message_delta", "delta": {}, "usage": {"output_tokens": 7}}),
        result(
            usage={
                "input_tokens": 30,
                "output_tokens": 9,
                "output_tokens_details": {"thinking_tokens": 2},
            },
            modelUsage={"claude-x": {"contextWindow": 200000}},
            total_cost_usd=0.5,
        ),
    )
    usage_event, end = produced
    assert isinstance(usage_event, Emitted)
    assert usage_event.kind == ContextUsage(used_tokens=122, window_tokens=200000, cost_usd=0.5)
    assert usage_event.tokens.counts() == {"input": 30, "output": 9, "reasoning": 2}
    assert usage_event.model == "claude-x"
    assert end == TurnFinished(
        stop=Completed(), extensions={"claude/result": {"subtype": "success"}}
    )


def test_compact_boundary_is_context_compacted_and_drops_the_usage() -> None:
    protocol = started()
    produced = take(
        protocol,
        {"type": "system", "subtype": "status", "status": "compacting"},
        {
            "type": "system",
            "subtype": "compact_boundary",
            "compact_metadata": {"trigger": "auto", "pre_tokens": 9000, "post_tokens": 900},
        },
        result(),
    )
    assert isinstance(kinds(produced)[0], ContextCompacted)
    (usage,) = [k for k in kinds(produced) if isinstance(k, ContextUsage)]
    assert usage.used_tokens == 900


def test_interrupt_that_leaves_the_prompt_queued_withdraws_it() -> None:
    protocol = ClaudeProtocol(new_id=lambda: TURN)
    protocol.initialized = {}
    protocol.send(StartTurn(turn_id="t1", prompt_id="p1", text="hi"))
    interrupt, _ = protocol.send(Interrupt("t1"))
    request_id = json.loads(interrupt)["request_id"]
    take(
        protocol,
        {
            "type": "control_response",
            "response": {
                "subtype": "success",
                "request_id": request_id,
                "response": {"still_queued": [TURN]},
            },
        },
    )
    follow_up = json.loads(protocol.data_to_send())
    assert follow_up["request"] == {"subtype": "cancel_async_message", "message_uuid": TURN}
    produced = take(
        protocol,
        {
            "type": "control_response",
            "response": {
                "subtype": "success",
                "request_id": follow_up["request_id"],
                "response": {"cancelled": True},
            },
        },
    )
    assert produced == [TurnBegan(), TurnFinished(stop=Cancelled())]


def test_interrupt_listing_the_prompt_as_cancelled_ends_its_turn() -> None:
    # No command_lifecycle frame ends this turn: the interrupt's answer alone does.
    protocol = ClaudeProtocol(new_id=lambda: TURN)
    protocol.initialized = {}
    protocol.send(StartTurn(turn_id="t1", prompt_id="p1", text="hi"))
    interrupt, _ = protocol.send(Interrupt("t1"))
    request_id = json.loads(interrupt)["request_id"]
    produced = take(
        protocol,
        {
            "type": "control_response",
            "response": {
                "subtype": "success",
                "request_id": request_id,
                "response": {"cancelled": [TURN]},
            },
        },
    )
    assert produced == [TurnBegan(), TurnFinished(stop=Cancelled())]
    assert protocol.data_to_send() == b""


def test_a_second_interrupt_of_the_same_turn_writes_nothing() -> None:
    protocol = started()
    first, _ = protocol.send(Interrupt("t1"))
    second, _ = protocol.send(Interrupt("t1"))
    assert first and second == b""


def test_late_result_of_a_turn_already_cancelled_is_dropped() -> None:
    protocol = ClaudeProtocol(new_id=lambda: TURN)
    protocol.initialized = {}
    protocol.send(StartTurn(turn_id="t1", prompt_id="p1", text="hi"))
    ended = take(
        protocol, {"type": "command_lifecycle", "command_uuid": TURN, "state": "cancelled"}
    )
    assert ended == [TurnBegan(), TurnFinished(stop=Cancelled())]
    assert take(protocol, result(is_error=True, user_message_uuids=[TURN])) == []


def test_process_lost_mid_interrupt_cancels_and_withdraws() -> None:
    protocol = started()
    take(protocol, can_use_tool())
    protocol.send(Interrupt("t1"))
    produced = protocol.process_lost()
    assert produced == [TurnFinished(stop=Cancelled()), RequestWithdrawn("r1")]
    assert protocol.interrupted is False and protocol.initialized is None


def test_process_lost_without_interrupt_fails_the_turn() -> None:
    protocol = started()
    (end,) = protocol.process_lost()
    assert isinstance(end, TurnFinished) and isinstance(end.stop, Failed)


def test_steer_and_rollback_are_refused_at_once() -> None:
    protocol = started()
    data, events = protocol.send(SteerTurn(turn_id="t1", prompt_id="p2", text="also"))
    assert data == b"" and isinstance(events[0], SteerVerdict) and not events[0].accepted
    data, events = protocol.send(Rollback(turns=1, scope=RollbackScope.CONVERSATION))
    assert data == b"" and isinstance(events[0], RollbackVerdict) and not events[0].accepted


def test_configure_of_an_unknown_option_is_refused_without_writing() -> None:
    protocol = started()
    data, events = protocol.send(Configure(option="speed", value="high"))
    assert data == b"" and isinstance(events[0], ConfigRefused)
    data, events = protocol.send(Configure(option="effort", value="huge"))
    assert data == b"" and isinstance(events[0], ConfigRefused)


def test_cli_starting_a_turn_by_itself_begins_an_agent_turn() -> None:
    protocol = ClaudeProtocol()
    protocol.initialized = {}
    produced = take(
        protocol,
        {"type": "command_lifecycle", "command_uuid": "wake-1", "state": "started"},
        result(user_message_uuids=["wake-1"]),
    )
    assert [type(e).__name__ for e in produced] == ["TurnBegan", "TurnFinished"]


def test_new_session_id_in_init_changes_the_resume_token() -> None:
    protocol = ClaudeProtocol(resume_token="old")
    produced = take(
        protocol, {"type": "system", "subtype": "init", "session_id": "new", "model": "m"}
    )
    assert produced == [InfoChanged(resume_token="new")]
    assert take(protocol, {"type": "system", "subtype": "init", "session_id": "new"}) == []


def test_other_user_text_is_a_user_message_and_local_output_a_note() -> None:
    protocol = started()
    produced = take(
        protocol,
        {"type": "user", "uuid": "u1", "message": {"role": "user", "content": "from a hook"}},
        {
            "type": "user",
            "uuid": "u2",
            "message": {
                "role": "user",
                "content": "<local-command-stdout>Done</local-command-stdout>",
            },
        },
        {
            "type": "user",
            "uuid": "u3",
            "message": {
                "role": "user",
                "content": [{"type": "text", "text": "[Request interrupted by user]"}],
            },
        },
    )
    assert kinds(produced) == [
        UserMessage(message_id="u1", text="from a hook"),
        Diagnostic(level=DiagnosticLevel.INFO, message="Done"),
    ]


def test_permission_denied_by_a_rule_is_a_warning() -> None:
    protocol = started()
    (event,) = take(
        protocol,
        {"type": "system", "subtype": "permission_denied", "tool_name": "Bash", "tool_use_id": "t"},
    )
    assert isinstance(event, Emitted) and isinstance(event.kind, Diagnostic)
    assert event.kind.level is DiagnosticLevel.WARNING and "Bash" in event.kind.message


def test_permission_for_a_subagent_tool_carries_the_subagent_as_parent() -> None:
    protocol = started()
    take(
        protocol,
        assistant(
            {"type": "tool_use", "id": "task1", "name": "Task", "input": {"description": "d"}}
        ),
        assistant(
            {
                "type": "tool_use",
                "id": "toolu_1",
                "name": "Bash",
                "input": {"command": "rm -rf build"},
            },
            parent="task1",
            mid="m2",
        ),
    )
    (asked,) = take(protocol, can_use_tool())
    assert isinstance(asked, RequestAsked) and asked.parent_tool_id == "task1"
