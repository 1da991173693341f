"""Copilot `SessionEvent`s in, `DriverEvent`s out (sans-IO).

One `CopilotNormalizer` per session reads the seed's envelope (`id`,
`timestamp`, `parentId`, `ephemeral`, `agentId`, `type`, `data`) and maps
by `type`; it serves the live wire (`session.event` notifications of
`copilot --headless`) and the replay of `events.jsonl` alike.

What it keeps: cumulative tool snapshots (a tool's start, partial output,
progress, permission prompt and completion all refine one `ToolUpdate`);
which sub-agent instance (`agentId`) runs under which parent tool call;
which messages were streamed (so a final `assistant.message` adds only what
the deltas did not); the latest context window; the tokens of the prompt in
progress; and the prompt's outcome (aborted, failed) until `session.idle`
ends it.

Turns: a Copilot prompt runs several model calls (`assistant.turn_start` /
`turn_end`, one per call) and ends with `session.idle`. So `turn_start`
becomes `TurnBegan` (a no-op for a turn already acknowledged, an agent turn
when corral started none) and `session.idle` becomes `TurnFinished`.
`expect_prompt` tells the normalizer that corral just sent a prompt: the
next `user.message` with that text is its echo (consumed, not a
`UserMessage`), and the first of `user.message`, `assistant.turn_start`,
`abort`, `session.error`, `session.idle` acknowledges the turn.

One type beyond the seed is mapped: `session.usage_record`, the persisted
form of `assistant.usage` in Copilot 1.0.102 transcripts. An
`assistant.usage` with `quotaSnapshots` also yields `PlanUsageUpdated`.

The handlers live by subject: tools, sub-agents and requests in
`_tool_events.py`; work that reads like a tool (hooks, slash commands,
skills, streamed tool-call arguments) in `_work_events.py`; configuration,
plan, context, quota and shutdown in `_session_events.py`; events an
operator reads (MCP servers, retries, limits...) as Diagnostics of their own
in `_session_notes.py`. One table (`_HANDLERS`, at the end, gathering each
module's own) maps every type to its handler; it is built once, at import.

Types mapped to no event of their own (`CONSUMED`): `assistant.message_start`
(a message opens with its first delta), `assistant.turn_end` (the end of one
model call, not of the turn; it ends messages left open), `assistant.idle`
and `model.call_start` (`session.idle` and `assistant.turn_start` say the
same), `assistant.streaming_delta` (a byte count of text the deltas carry),
`pending_messages.modified` and `session.tools_updated` (signals with no
content: corral keeps its own prompt queue, and the tools show as they run);
also the echo of our own prompt, and a `tool.execution_partial_result` with
empty output (a chunk of no text; `_tool_events.py`). The types with no place
in the model at all are listed with the reason in `_known.UNMAPPED` (and
README): each becomes an Info `Diagnostic` with the event under
`copilot/raw_frame` and `copilot/unmapped`; a type the seed does not name
becomes the same with `corral/unknown_frame`. Nothing is dropped silently.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Mapping
from typing import Any

from ...pipeline.driver import (
    DriverEvent,
    Emitted,
    InfoChanged,
    TurnBegan,
    TurnFinished,
)
from ...pipeline.events import (
    Cancelled,
    Completed,
    ContextCompacted,
    Diagnostic,
    DiagnosticLevel,
    Failed,
    MessageEnded,
    PlanUsageUpdated,
    ReasoningDelta,
    StopReason,
    TextDelta,
    UserMessage,
)
from ._base import RAW_KEY, Json, Prompt, as_int, as_str, bad_shape, is_map
from ._known import SCHEMA_EVENT_TYPES
from ._session_events import SESSION_HANDLERS, SessionEvents, quota_usage
from ._session_notes import NOTES, Note
from ._tool_events import ToolEvents
from ._work_events import WORK_HANDLERS, WorkEvents

__all__ = ["CONSUMED", "RAW_KEY", "CopilotNormalizer"]

CONSUMED = frozenset(
    {
        "assistant.message_start",
        "assistant.idle",
        "model.call_start",
        "assistant.streaming_delta",
        "pending_messages.modified",
        "session.tools_updated",
    }
)

_ACKS = frozenset(
    {"user.message", "assistant.turn_start", "abort", "session.error", "session.idle"}
)
_TOKEN_FIELDS = {
    "inputTokens": "input",
    "outputTokens": "output",
    "cacheReadTokens": "cache_read",
    "cacheWriteTokens": "cache_write",
    "reasoningTokens": "reasoning",
}

_Delta = type[TextDelta] | type[ReasoningDelta]
_Handler = Callable[["CopilotNormalizer", Json, Json], list[DriverEvent]]


class CopilotNormalizer(ToolEvents, WorkEvents, SessionEvents):
    def __init__(self) -> None:
        super().__init__()
        self._echoes: deque[str] = deque()  # texts of prompts we sent, not yet echoed
        self._awaiting_ack = False

    @staticmethod
    def mapped_types() -> frozenset[str]:
        return frozenset(_HANDLERS)

    # ---- inputs ----------------------------------------------------------------

    def expect_prompt(self, text: str, *, steer: bool = False) -> None:
        """Corral sent `text`: its `user.message` is an echo; a new prompt awaits its ack."""
        self._echoes.append(text)
        if not steer:
            self._awaiting_ack = True

    def forget_prompt(self, text: str, *, steer: bool = False) -> None:
        """Copilot refused `text`: no echo will come (and, for a prompt, no turn)."""
        if text in self._echoes:
            self._echoes.remove(text)
        if not steer:
            self._awaiting_ack = False

    def feed(self, event: object) -> list[DriverEvent]:
        # `type(...) is dict` first: what the decoder makes, and far cheaper than the ABC.
        if type(event) is not dict and not isinstance(event, Mapping):
            return [bad_shape(event, "a session event that is not an object")]
        kind, data = event.get("type"), event.get("data")
        if not isinstance(kind, str) or (type(data) is not dict and not isinstance(data, Mapping)):
            return [bad_shape(event, "a session event without a type or data")]
        handler = _HANDLERS.get(kind)
        if handler is None:
            return [_leftover(kind, event)]
        if self._awaiting_ack and kind in _ACKS:
            self._awaiting_ack = False
            self._prompt = Prompt()
            return [TurnBegan(), *handler(self, event, data)]
        return handler(self, event, data)

    def finish_turn(self) -> TurnFinished:
        """The end of the prompt in progress (`session.idle`, or a transcript's next prompt)."""
        prompt, self._prompt = self._prompt, Prompt()
        self._streamed.clear()
        stop: StopReason
        if prompt.cancelled:
            stop = Cancelled()
        elif prompt.failure is not None:
            stop = Failed(prompt.failure)
        else:
            stop = Completed()
        return TurnFinished(stop=stop)

    # ---- assistant -------------------------------------------------------------

    def _turn_start(self, event: Json, data: Json) -> list[DriverEvent]:
        return [TurnBegan()]

    def _turn_end(self, event: Json, data: Json) -> list[DriverEvent]:
        ended = [self._emit(event, MessageEnded(message)) for message in sorted(self._streamed)]
        self._streamed.clear()
        return list(ended)

    def _message_delta(self, event: Json, data: Json) -> list[DriverEvent]:
        message_id = as_str(data, "messageId")
        self._streamed.add(message_id)
        return [
            self._emit(event, TextDelta(message_id=message_id, text=as_str(data, "deltaContent")))
        ]

    def _message(self, event: Json, data: Json) -> list[DriverEvent]:
        message_id = as_str(data, "messageId")
        out = self._ended(event, message_id, as_str(data, "content"), TextDelta)
        requests = data.get("toolRequests")
        for request in requests if isinstance(requests, list) else ():
            if is_map(request) and as_str(request, "toolCallId") not in self._tools:
                out.append(self._requested_tool(event, request))
        return out

    def _reasoning_delta(self, event: Json, data: Json) -> list[DriverEvent]:
        reasoning_id = as_str(data, "reasoningId")
        self._streamed.add(reasoning_id)
        delta = ReasoningDelta(message_id=reasoning_id, text=as_str(data, "deltaContent"))
        return [self._emit(event, delta)]

    def _reasoning(self, event: Json, data: Json) -> list[DriverEvent]:
        reasoning_id = as_str(data, "reasoningId")
        return self._ended(event, reasoning_id, as_str(data, "content"), ReasoningDelta)

    def _ended(
        self, event: Json, message_id: str, content: str, delta: _Delta
    ) -> list[DriverEvent]:
        """A whole message or reasoning: its text unless it streamed, then its end."""
        out: list[DriverEvent] = []
        streamed = message_id in self._streamed
        if content and not streamed:
            out.append(self._emit(event, delta(message_id=message_id, text=content)))
        if content or streamed:
            out.append(self._emit(event, MessageEnded(message_id)))
        self._streamed.discard(message_id)
        return out

    def _assistant_usage(self, event: Json, data: Json) -> list[DriverEvent]:
        tokens = self._prompt.tokens
        for field, name in _TOKEN_FIELDS.items():
            count = as_int(data, field)
            if count is not None:
                tokens[name] = tokens.get(name, 0) + count
        extensions: dict[str, Any] = {}
        cost = data.get("cost")
        if isinstance(cost, int | float) and not isinstance(cost, bool):
            extensions["copilot/cost_multiplier"] = cost  # a billing multiplier, not USD
        copilot_usage = data.get("copilotUsage")
        if is_map(copilot_usage) and "totalNanoAiu" in copilot_usage:
            extensions["copilot/nano_aiu"] = copilot_usage["totalNanoAiu"]
        fallback = (as_int(data, "inputTokens") or 0) + (as_int(data, "outputTokens") or 0)
        usage = self._usage(event, fallback, extensions, model=as_str(data, "model"))
        out: list[DriverEvent] = [usage]
        quota = quota_usage(event, data.get("quotaSnapshots"))
        if quota is not None:
            out.append(self._emit(event, PlanUsageUpdated(quota)))
        return out

    def _usage_record(self, event: Json, data: Json) -> list[DriverEvent]:
        """`session.usage_record {usage}`: Copilot 1.0.102 persists each model call's
        usage this way (its `assistant.usage` is ephemeral), so transcripts keep
        their tokens. Not in the seed schema; its `usage` is an `assistant.usage`."""
        usage = data.get("usage")
        if not is_map(usage):
            return [bad_shape(event, "session.usage_record without usage")]
        return self._assistant_usage(event, usage)

    # ---- session ---------------------------------------------------------------

    def _usage_info(self, event: Json, data: Json) -> list[DriverEvent]:
        current, limit = as_int(data, "currentTokens"), as_int(data, "tokenLimit")
        if current is not None and limit is not None:
            self._window = (current, limit)
        return [self._usage(event, current or 0, {})]

    def _compaction_start(self, event: Json, data: Json) -> list[DriverEvent]:
        trigger = as_str(data, "trigger", "unknown")
        note = Diagnostic(level=DiagnosticLevel.INFO, message=f"compacting the context ({trigger})")
        return [self._emit(event, note)]

    def _compaction_complete(self, event: Json, data: Json) -> list[DriverEvent]:
        if data.get("success") is not True:
            message = f"context compaction failed: {as_str(data, 'error', 'no reason given')}"
            return [self._emit(event, Diagnostic(level=DiagnosticLevel.WARNING, message=message))]
        facts = ("preCompactionTokens", "postCompactionTokens", "messagesRemoved", "tokensRemoved")
        details = {key: data[key] for key in facts if key in data}
        post, limit = as_int(data, "postCompactionTokens"), as_int(data, "tokenLimit")
        if post is not None and self._window is not None:
            self._window = (post, limit or self._window[1])
        return [self._emit(event, ContextCompacted(), {"copilot/compaction": details})]

    def _diagnostic(self, event: Json, level: DiagnosticLevel, kind_key: str) -> Emitted:
        kind, message = as_str(event["data"], kind_key), as_str(event["data"], "message")
        text = f"{kind}: {message}" if kind else message
        return self._emit(event, Diagnostic(level=level, message=text), {"copilot/type": kind})

    def _session_error(self, event: Json, data: Json) -> list[DriverEvent]:
        self._prompt.failure = as_str(data, "message") or as_str(data, "errorType", "error")
        return [self._diagnostic(event, DiagnosticLevel.ERROR, "errorType")]

    def _session_warning(self, event: Json, data: Json) -> list[DriverEvent]:
        return [self._diagnostic(event, DiagnosticLevel.WARNING, "warningType")]

    def _session_info(self, event: Json, data: Json) -> list[DriverEvent]:
        if as_str(data, "infoType") == "cancellation":
            self._prompt.cancelled = True  # e.g. after a denied permission
        return [self._diagnostic(event, DiagnosticLevel.INFO, "infoType")]

    def _abort(self, event: Json, data: Json) -> list[DriverEvent]:
        self._prompt.cancelled = True
        reason = as_str(data, "reason", "unknown")
        note = Diagnostic(
            level=DiagnosticLevel.INFO, message=f"Copilot aborted the turn ({reason})"
        )
        return [self._emit(event, note, {"copilot/abort_reason": reason})]

    def _idle(self, event: Json, data: Json) -> list[DriverEvent]:
        if data.get("aborted") is True:
            self._prompt.cancelled = True
        return [self.finish_turn()]

    def _title_changed(self, event: Json, data: Json) -> list[DriverEvent]:
        return [InfoChanged(title=as_str(data, "title"))]

    def _session_start(self, event: Json, data: Json) -> list[DriverEvent]:
        return [InfoChanged(resume_token=as_str(data, "sessionId") or None)]

    def _user_message(self, event: Json, data: Json) -> list[DriverEvent]:
        content = as_str(data, "content")
        if self._echoes and self._echoes[0] == content:
            self._echoes.popleft()
            return []  # the echo of corral's own prompt
        message_id = as_str(data, "messageId") or as_str(event, "id")
        return [
            self._emit(event, UserMessage(message_id=message_id, text=content)),
            self._emit(event, MessageEnded(message_id)),
        ]


def _nothing(normalizer: CopilotNormalizer, event: Json, data: Json) -> list[DriverEvent]:
    return []


def _noted(note: Note) -> _Handler:
    def handle(normalizer: CopilotNormalizer, event: Json, data: Json) -> list[DriverEvent]:
        level, message = note(data)
        extensions = {"copilot/type": as_str(event, "type"), "copilot/note": dict(data)}
        return [normalizer._emit(event, Diagnostic(level=level, message=message), extensions)]

    return handle


def _leftover(kind: str, event: Json) -> Emitted:
    """A type we do not map: an Info Diagnostic with the whole event."""
    note = Diagnostic(level=DiagnosticLevel.INFO, message=f"Copilot event {kind}")
    if kind in SCHEMA_EVENT_TYPES:  # in the schema, not mapped (yet)
        return Emitted(kind=note, extensions={RAW_KEY: dict(event), "copilot/unmapped": kind})
    return Emitted(kind=note, unknown_frame=kind, extensions={RAW_KEY: dict(event)})


# The handler of each type, looked up once per event: `handler(normalizer, event, data)`.
_HANDLERS: dict[str, _Handler] = {
    "assistant.turn_start": CopilotNormalizer._turn_start,
    "assistant.turn_end": CopilotNormalizer._turn_end,
    "assistant.message_delta": CopilotNormalizer._message_delta,
    "assistant.message": CopilotNormalizer._message,
    "assistant.reasoning_delta": CopilotNormalizer._reasoning_delta,
    "assistant.reasoning": CopilotNormalizer._reasoning,
    "assistant.usage": CopilotNormalizer._assistant_usage,
    "session.usage_record": CopilotNormalizer._usage_record,  # newer than the seed; see it
    "tool.execution_start": CopilotNormalizer._tool_start,
    "tool.execution_partial_result": CopilotNormalizer._tool_partial,
    "tool.execution_progress": CopilotNormalizer._tool_progress,
    "tool.execution_complete": CopilotNormalizer._tool_complete,
    "subagent.started": CopilotNormalizer._subagent_started,
    "subagent.completed": CopilotNormalizer._subagent_done,
    "subagent.failed": CopilotNormalizer._subagent_done,
    "permission.requested": CopilotNormalizer._permission_requested,
    "permission.completed": CopilotNormalizer._withdrawn,
    "user_input.requested": CopilotNormalizer._user_input_requested,
    "user_input.completed": CopilotNormalizer._withdrawn,
    "session.usage_info": CopilotNormalizer._usage_info,
    "session.compaction_start": CopilotNormalizer._compaction_start,
    "session.compaction_complete": CopilotNormalizer._compaction_complete,
    "session.error": CopilotNormalizer._session_error,
    "session.warning": CopilotNormalizer._session_warning,
    "session.info": CopilotNormalizer._session_info,
    "abort": CopilotNormalizer._abort,
    "session.idle": CopilotNormalizer._idle,
    "session.title_changed": CopilotNormalizer._title_changed,
    "session.start": CopilotNormalizer._session_start,
    "user.message": CopilotNormalizer._user_message,
    **WORK_HANDLERS,
    **SESSION_HANDLERS,
    **{kind: _noted(note) for kind, note in NOTES.items()},
    **dict.fromkeys(CONSUMED, _nothing),
}
