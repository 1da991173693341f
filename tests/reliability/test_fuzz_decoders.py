"""Fuzzing every source's sans-IO decoder: whatever an agent writes, the decoder
returns driver events (never raises), and every event it builds is valid
against the line-protocol schema. Bounded: a fixed number of examples each.

Frames are random JSON shaped like each wire (a known or unknown `type`,
random fields), so the fuzz reaches the handlers, not only the front door.
"""

from __future__ import annotations

import contextlib
from typing import Any

from corral.pipeline.decoding import JsonLinesDecoder
from corral.pipeline.driver import DriverEvent, Emitted, PromptSent, RequestAsked
from corral.pipeline.events import ShapeError
from corral.sources.acp._translate import Translator
from corral.sources.appserver._normalize import AppServerNormalizer
from corral.sources.claude._protocol import ClaudeProtocol
from corral.sources.codex import AppServerNormalizer as CodexNormalizer
from corral.sources.codex import EventMsgNormalizer, RolloutReader
from corral.sources.copilot._normalize import CopilotNormalizer
from corral.sources.mock._wire import decode_event
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.support.schema import check

FUZZ = settings(max_examples=250, deadline=None, suppress_health_check=[HealthCheck.too_slow])

scalars = (
    st.none()
    | st.booleans()
    | st.integers(-(2**40), 2**40)
    | st.floats(allow_nan=False)
    | st.text(max_size=20)
)
json_values = st.recursive(
    scalars,
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=12), inner, max_size=5)
    ),
    max_leaves=20,
)
KEYS = st.sampled_from(
    [
        "id",
        "type",
        "subtype",
        "message",
        "content",
        "text",
        "delta",
        "data",
        "event",
        "index",
        "messageId",
        "toolCallId",
        "status",
        "usage",
        "request",
        "request_id",
        "response",
        "item",
        "title",
        "kind",
        "rawInput",
        "session_id",
        "uuid",
        "name",
        "input",
        "result",
        "is_error",
    ]
)


def shaped(types: list[str], type_key: str = "type") -> st.SearchStrategy[dict[str, Any]]:
    fields = st.dictionaries(KEYS | st.text(max_size=8), json_values, max_size=6)
    return st.builds(
        lambda kind, rest, nested: {**rest, type_key: kind, **nested},
        st.sampled_from(types) | st.text(max_size=10),
        fields,
        st.dictionaries(
            st.sampled_from(["data", "event", "message", "request", "update"]), fields, max_size=2
        ),
    )


def valid(events: list[DriverEvent]) -> None:
    assert isinstance(events, list)
    for event in events:
        match event:
            case Emitted(kind=kind):
                check("line-protocol.schema.json", "EventKind", kind.to_wire())
            case RequestAsked(request=request):
                check("line-protocol.schema.json", "Request", request.to_wire())


@FUZZ
@given(st.binary(max_size=400))
def test_json_lines_decoding_never_raises(data: bytes) -> None:
    decoder = JsonLinesDecoder(max_line=64)
    decoder.feed(data)
    decoder.end()


CLAUDE_TYPES = [
    "stream_event",
    "assistant",
    "user",
    "result",
    "system",
    "command_lifecycle",
    "control_request",
    "control_cancel_request",
    "control_response",
]


@FUZZ
@given(st.lists(shaped(CLAUDE_TYPES), max_size=6))
def test_claude_frames(frames: list[dict[str, Any]]) -> None:
    protocol = ClaudeProtocol()
    for frame in frames:
        valid(protocol.receive(frame))


@FUZZ
@given(st.binary(max_size=300))
def test_claude_bytes(data: bytes) -> None:
    protocol = ClaudeProtocol()
    valid(protocol.feed(data) + protocol.end())


ACP_UPDATES = [
    "agent_message_chunk",
    "agent_thought_chunk",
    "user_message_chunk",
    "tool_call",
    "tool_call_update",
    "plan",
    "available_commands_update",
    "current_mode_update",
    "config_option_update",
    "session_info_update",
    "usage_update",
]


@FUZZ
@given(st.lists(shaped(ACP_UPDATES, "sessionUpdate"), max_size=6), json_values)
def test_acp_session_updates(updates: list[dict[str, Any]], result: Any) -> None:
    translator = Translator()
    valid(translator.turn_began())
    for update in updates:
        valid(translator.update(update))
        valid(translator.notification("session/update", {"sessionId": "x", "update": update}))
    valid(translator.prompt_done(result))


COPILOT_TYPES = [
    "assistant.turn_start",
    "assistant.turn_end",
    "assistant.message_start",
    "assistant.message_delta",
    "assistant.message",
    "assistant.reasoning_delta",
    "assistant.reasoning",
    "assistant.usage",
    "tool.execution_start",
    "tool.execution_partial_result",
    "tool.execution_progress",
    "tool.execution_complete",
    "subagent.started",
    "subagent.completed",
    "subagent.failed",
    "permission.requested",
    "permission.completed",
    "user_input.requested",
    "session.usage_info",
    "session.compaction_start",
    "session.compaction_complete",
    "session.error",
    "session.idle",
    "session.title_changed",
    "abort",
    "user.message",
]


@FUZZ
@given(st.lists(shaped(COPILOT_TYPES) | json_values, max_size=6))
def test_copilot_session_events(events: list[Any]) -> None:
    normalizer = CopilotNormalizer()
    for event in events:
        valid(normalizer.feed(event))


APPSERVER_METHODS = [
    "thread/started",
    "turn/started",
    "turn/completed",
    "item/started",
    "item/completed",
    "item/agentMessage/delta",
    "item/toolCall/delta",
    "approval/requested",
    "approval/resolved",
    "error",
    "warning",
]


@FUZZ
@given(
    st.lists(
        st.tuples(st.sampled_from(APPSERVER_METHODS) | st.text(max_size=12), json_values),
        max_size=6,
    )
)
def test_appserver_notifications(messages: list[tuple[str, Any]]) -> None:
    normalizer = AppServerNormalizer()
    for method, params in messages:
        valid(normalizer.feed(method, params))


@FUZZ
@given(json_values)
def test_mock_wire_events_decode_or_refuse_with_a_shape_error(frame: Any) -> None:
    with contextlib.suppress(ShapeError):
        valid([decode_event(frame)])


CODEX_METHODS = [
    "thread/started",
    "turn/started",
    "turn/completed",
    "turn/plan/updated",
    "item/started",
    "item/completed",
    "item/agentMessage/delta",
    "item/reasoning/textDelta",
    "item/reasoning/summaryTextDelta",
    "item/commandExecution/outputDelta",
    "item/fileChange/outputDelta",
    "thread/tokenUsage/updated",
    "account/rateLimits/updated",
    "serverRequest/resolved",
    "error",
    "warning",
]
CODEX_REQUESTS = [
    "item/commandExecution/requestApproval",
    "item/fileChange/requestApproval",
    "item/tool/requestUserInput",
    "mcpServer/elicitation/request",
]


@FUZZ
@given(
    st.lists(
        st.tuples(st.booleans(), st.sampled_from(CODEX_METHODS + CODEX_REQUESTS), json_values),
        max_size=6,
    )
)
def test_codex_appserver_messages(messages: list[tuple[bool, str, Any]]) -> None:
    normalizer = CodexNormalizer(wall_clock_ns=lambda: 0)
    for n, (as_request, method, params) in enumerate(messages):
        if as_request:
            events, _reply = normalizer.server_request(n, method, params)
            valid(events)
        else:
            valid(normalizer.notification(method, params))


@FUZZ
@given(st.lists(shaped(sorted(EventMsgNormalizer().handled_types)) | json_values, max_size=6))
def test_codex_eventmsgs(payloads: list[Any]) -> None:
    normalizer = EventMsgNormalizer()
    for payload in payloads:
        valid(normalizer.feed(payload))


@FUZZ
@given(st.binary(max_size=400))
def test_codex_rollout_bytes(data: bytes) -> None:
    reader = RolloutReader()
    items = reader.feed(data) + reader.end()
    valid([item for item in items if not isinstance(item, PromptSent)])
