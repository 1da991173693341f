"""The normalizer on the live wire: turns, echoes, attribution, leftovers."""

from __future__ import annotations

from typing import Any

from corral.pipeline.driver import (
    Emitted,
    InfoChanged,
    RequestAsked,
    TurnBegan,
    TurnFinished,
)
from corral.pipeline.events import (
    Cancelled,
    Completed,
    ContextUsage,
    Diagnostic,
    DiagnosticLevel,
    Failed,
    MessageEnded,
    PermissionChoice,
    PermissionRequest,
    TextDelta,
    ToolOutputDelta,
    ToolStatus,
    ToolUpdated,
    UserMessage,
)
from corral.sources.copilot import CopilotNormalizer

from tests.unit.copilot.golden import check_items


def event(type_: str, agent: str | None = None, **data: Any) -> dict[str, Any]:
    frame: dict[str, Any] = {
        "id": "e",
        "timestamp": "2026-11-29T12:00:00Z",
        "parentId": None,
        "type": type_,
        "data": data,
    }
    if agent is not None:
        frame["agentId"] = agent
    return frame


def feed(normalizer: CopilotNormalizer, *events: dict[str, Any]) -> list[object]:
    out: list[object] = []
    for frame in events:
        out.extend(normalizer.feed(frame))
    check_items(out)
    return out


def test_the_echo_of_our_prompt_acknowledges_the_turn_and_shows_nothing_else() -> None:
    normalizer = CopilotNormalizer()
    normalizer.expect_prompt("hello")
    assert feed(normalizer, event("user.message", content="hello")) == [TurnBegan()]


def test_a_user_message_we_did_not_send_is_agent_side_user_content() -> None:
    out = feed(CopilotNormalizer(), event("user.message", content="autopilot", messageId="u1"))
    assert [e.kind for e in out if isinstance(e, Emitted)] == [
        UserMessage(message_id="u1", text="autopilot"),
        MessageEnded("u1"),
    ]


def test_a_prompt_that_fails_at_once_still_begins_before_it_ends() -> None:
    normalizer = CopilotNormalizer()
    normalizer.expect_prompt("hi")
    out = feed(
        normalizer,
        event("session.title_changed", title="hi"),
        event("session.error", errorType="query", message="No token"),
        event("session.idle"),
    )
    assert out[0] == InfoChanged(title="hi")
    assert out[1] == TurnBegan()
    assert out[-1] == TurnFinished(stop=Failed("No token"))


def test_idle_ends_the_turn_completed_and_each_model_call_is_not_a_turn() -> None:
    normalizer = CopilotNormalizer()
    out = feed(
        normalizer,
        event("assistant.turn_start", turnId="0"),
        event("assistant.turn_end", turnId="0"),
        event("assistant.turn_start", turnId="1"),
        event("assistant.turn_end", turnId="1"),
        event("session.idle"),
    )
    assert out == [TurnBegan(), TurnBegan(), TurnFinished(stop=Completed())]


def test_an_aborted_idle_ends_the_turn_cancelled() -> None:
    out = feed(CopilotNormalizer(), event("session.idle", aborted=True))
    assert out == [TurnFinished(stop=Cancelled())]


def test_an_abort_alone_ends_the_turn_cancelled() -> None:
    # The idle that follows does not say `aborted`: the abort itself must count.
    out = feed(CopilotNormalizer(), event("abort", reason="user_initiated"), event("session.idle"))
    note, finished = out
    assert isinstance(note, Emitted) and note.extensions["copilot/abort_reason"] == "user_initiated"
    assert finished == TurnFinished(stop=Cancelled())


def test_the_outcome_of_one_prompt_does_not_leak_into_the_next() -> None:
    normalizer = CopilotNormalizer()
    feed(normalizer, event("abort", reason="user_initiated"), event("session.idle"))
    assert feed(normalizer, event("session.idle")) == [TurnFinished(stop=Completed())]


def test_a_final_message_after_deltas_only_ends_it() -> None:
    out = feed(
        CopilotNormalizer(),
        event("assistant.message_delta", messageId="m", deltaContent="Hel"),
        event("assistant.message_delta", messageId="m", deltaContent="lo"),
        event("assistant.message", messageId="m", content="Hello"),
    )
    kinds = [e.kind for e in out if isinstance(e, Emitted)]
    assert kinds == [
        TextDelta(message_id="m", text="Hel"),
        TextDelta(message_id="m", text="lo"),
        MessageEnded("m"),
    ]


def test_events_of_a_sub_agent_name_the_tool_that_spawned_it() -> None:
    normalizer = CopilotNormalizer()
    out = feed(
        normalizer,
        event(
            "subagent.started",
            agent="a1",
            toolCallId="call_task",
            agentName="explore",
            agentDisplayName="Explore",
            agentDescription="reads",
        ),
        event("assistant.message_delta", agent="a1", messageId="m", deltaContent="hi"),
    )
    started, delta = out
    assert isinstance(started, Emitted) and started.parent_tool_id is None
    assert isinstance(delta, Emitted) and delta.parent_tool_id == "call_task"
    assert delta.extensions["copilot/agent_id"] == "a1"


def test_a_shell_permission_offers_session_approval_only_when_copilot_can() -> None:
    prompt = {
        "kind": "shell",
        "toolCallId": "c",
        "fullCommandText": "ls",
        "intention": "List",
        "commands": [{"identifier": "ls", "readOnly": True}],
        "possiblePaths": [],
        "possibleUrls": [],
        "hasWriteFileRedirection": False,
    }
    offered = feed(
        CopilotNormalizer(),
        event(
            "permission.requested",
            requestId="p",
            permissionRequest={**prompt, "canOfferSessionApproval": True},
        ),
    )
    refused = feed(
        CopilotNormalizer(),
        event(
            "permission.requested",
            requestId="p",
            permissionRequest={**prompt, "canOfferSessionApproval": False},
        ),
    )
    [asked], [plain] = offered, refused
    assert isinstance(asked, RequestAsked) and isinstance(asked.request, PermissionRequest)
    assert PermissionChoice.ALLOW_ALWAYS in asked.request.options
    assert asked.extensions["copilot/session_approval"] == {
        "kind": "commands",
        "commandIdentifiers": ["ls"],
    }
    assert isinstance(plain, RequestAsked) and isinstance(plain.request, PermissionRequest)
    assert plain.request.options == (PermissionChoice.ALLOW_ONCE, PermissionChoice.DENY_ONCE)


def test_a_tool_finished_without_a_start_is_still_one_snapshot() -> None:
    out = feed(CopilotNormalizer(), event("tool.execution_complete", toolCallId="t", success=False))
    [done] = out
    assert isinstance(done, Emitted) and isinstance(done.kind, ToolUpdated)
    assert done.kind.tool.status is ToolStatus.FAILED


def test_partial_output_streams_as_tool_output_deltas() -> None:
    out = feed(
        CopilotNormalizer(),
        event("tool.execution_partial_result", toolCallId="t", partialOutput="hi\n"),
    )
    assert [e.kind for e in out if isinstance(e, Emitted)] == [
        ToolOutputDelta(tool_id="t", text="hi\n")
    ]


def test_an_empty_partial_output_yields_nothing() -> None:
    # The documented exception to "nothing dropped": a chunk of no text.
    empty = event("tool.execution_partial_result", toolCallId="t", partialOutput="")
    assert feed(CopilotNormalizer(), empty) == []


def test_a_partial_result_without_output_is_a_bad_shape_warning() -> None:
    [out] = feed(CopilotNormalizer(), event("tool.execution_partial_result", toolCallId="t"))
    assert isinstance(out, Emitted) and out.problem == "bad_shape"
    assert out.kind.level is DiagnosticLevel.WARNING  # type: ignore[union-attr]


def test_usage_adds_the_tokens_of_every_model_call_of_the_prompt() -> None:
    normalizer = CopilotNormalizer()
    out = feed(
        normalizer,
        event("session.usage_info", tokenLimit=100, currentTokens=40, messagesLength=1),
        event("assistant.usage", model="m", inputTokens=30, outputTokens=2),
        event("assistant.usage", model="m", inputTokens=35, outputTokens=3),
    )
    last = out[-1]
    assert isinstance(last, Emitted) and last.kind == ContextUsage(
        used_tokens=40, window_tokens=100
    )
    assert last.tokens.counts() == {"input": 65, "output": 5}
    assert last.model == "m"


def test_an_unknown_type_is_an_info_diagnostic_with_the_raw_event() -> None:
    frame = event("copilot.brand_new", x=1)
    [out] = feed(CopilotNormalizer(), frame)
    assert isinstance(out, Emitted)
    assert out.kind == Diagnostic(
        level=DiagnosticLevel.INFO, message="Copilot event copilot.brand_new"
    )
    assert out.extensions == {"copilot/raw_frame": frame}
    assert out.unknown_frame == "copilot.brand_new"


def test_a_known_type_left_unmapped_is_marked_unmapped_not_unknown() -> None:
    [out] = feed(CopilotNormalizer(), event("session.canvas.closed"))
    assert isinstance(out, Emitted)
    assert out.extensions["copilot/unmapped"] == "session.canvas.closed"
    assert out.unknown_frame is None


def test_an_event_without_type_or_data_is_a_bad_shape_warning() -> None:
    [out] = feed(CopilotNormalizer(), {"type": "x"})
    assert isinstance(out, Emitted) and out.problem == "bad_shape"
