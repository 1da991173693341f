"""Codex `EventMsg` → driver events (sans-IO), for rollouts and any EventMsg wire.

In: one `EventMsg` object at a time (seed `codex-eventmsg.schema.json`,
`definitions.EventMsg`: `{"type": "<snake_case>", ...}`). Out:
`DriverEvent`s. The clock is injected (rate-limit snapshots are stamped
with it).

Turns: task_started → TurnBegan; task_complete → TurnFinished(Completed);
turn_aborted → the still-running tools end Cancelled, then
TurnFinished(Cancelled) with `codex/abort_reason`.

Messages come in two generations. The legacy events (agent_message(_delta),
agent_reasoning(_delta), agent_reasoning_raw_content(_delta), user_message)
carry no message id: corral numbers them (`msg-N`, `reasoning-N`). The item
events (item_started / item_completed with a TurnItem,
agent_message_content_delta, reasoning_content_delta, plan_delta) carry
the item id. Codex emits both for the same content, items first, so once an
item event is seen the legacy message events are dropped (`items_mode`).
Rollouts of newer versions keep only item_completed: a message that
streamed nothing is sent whole, then ended.

Tools and requests: see `_eventmsg_tools`. Bookkeeping: token_count →
ContextUsage (+ PlanUsageUpdated from its rate limits), plan_update →
PlanUpdated, context_compacted → ContextCompacted, session_configured /
thread_name_updated → InfoChanged, error / warning / stream_error /
deprecation_notice / background_event / review and undo events / MCP
startup / skill updates → Diagnostic. turn_diff is the turn's diff: the
latest one rides on the turn's end (`TurnFinished` extension
`codex/turn_diff`, a unified diff). Responses to client queries and the
other types that carry nothing for corral are listed with the reason in
`IGNORED`; any other type is an unknown frame.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable

from ...pipeline.driver import DriverEvent, Emitted, TurnBegan, TurnFinished
from ...pipeline.events import (
    Cancelled,
    Completed,
    ContextCompacted,
    DiagnosticLevel,
    Failed,
    Fields,
    MessageEnded,
    ReasoningDelta,
    ShapeError,
    TextDelta,
    ToolStatus,
    UserMessage,
)
from ._common import (
    bad_shape,
    diagnostic,
    message_end,
    unknown_frame,
    user_text,
)
from ._eventmsg_notes import (
    INFO_EVENTS,
    Accounting,
    deprecation,
    mcp_startup,
    mcp_startup_update,
    note,
    plan,
    rolled_back,
    skill_downloaded,
    skills_update,
    thread_name,
)
from ._eventmsg_requests import elicitation, exec_approval, patch_approval, user_input
from ._eventmsg_tools import ToolBook

__all__ = ["IGNORED", "IGNORED_EVENTS", "EventMsgNormalizer"]

_RESPONSE = "the answer to a query corral never sends (Codex's own TUI asks it)"

# The EventMsg types deliberately mapped to nothing, each with the reason.
IGNORED: dict[str, str] = {
    "get_history_entry_response": _RESPONSE,
    "mcp_list_tools_response": _RESPONSE,
    "list_custom_prompts_response": _RESPONSE,
    "list_skills_response": _RESPONSE,
    "list_remote_skills_response": _RESPONSE,
    "raw_response_item": "the model's raw output item; the item and legacy events carry it",
    "terminal_interaction": "stdin Codex typed into a running command; its output shows the effect",
    "shutdown_complete": "the end of the process, which ends the session (AgentExited) itself",
    "thread_settings_applied": "newer than the seed: the echo of settings corral itself sent",
}
IGNORED_EVENTS = frozenset(IGNORED)


class _Stream:
    """One legacy (id-less) message being streamed."""

    def __init__(self, prefix: str) -> None:
        self._prefix = prefix
        self._numbers = itertools.count(1)
        self.current: str | None = None
        self.streamed = False

    def delta(self, text: str) -> str:
        if self.current is None:
            self.current = f"{self._prefix}-{next(self._numbers)}"
            self.streamed = False
        self.streamed = True
        return self.current

    def finish(self) -> tuple[str, bool]:
        """The id of the message the full text ends, and whether it streamed."""
        if self.current is None:
            return f"{self._prefix}-{next(self._numbers)}", False
        message_id, streamed = self.current, self.streamed
        self.current, self.streamed = None, False
        return message_id, streamed


class EventMsgNormalizer:
    def __init__(self, *, wall_clock_ns: Callable[[], int] = lambda: 0) -> None:
        self.items_mode = False
        self.in_turn = False
        self._tools = ToolBook()
        self._accounts = Accounting(wall_clock_ns=wall_clock_ns)
        self._messages = _Stream("msg")
        self._reasoning = _Stream("reasoning")
        self._raw_reasoning = _Stream("reasoning-raw")
        self._users = _Stream("user")
        self._diff: str | None = None  # the turn's latest turn_diff
        self._streamed_items: set[str] = set()
        tools = self._tools
        self._handlers: dict[str, Callable[[Fields], list[DriverEvent]]] = {
            "task_started": self._task_started,
            "task_complete": self._task_complete,
            "turn_aborted": self._turn_aborted,
            "agent_message_delta": lambda p: self._legacy_delta(p, self._messages, TextDelta),
            "agent_message": lambda p: self._legacy_end(p, "message", self._messages, TextDelta),
            "agent_reasoning_delta": lambda p: self._legacy_delta(
                p, self._reasoning, ReasoningDelta
            ),
            "agent_reasoning": lambda p: self._legacy_end(
                p, "text", self._reasoning, ReasoningDelta
            ),
            "agent_reasoning_raw_content_delta": lambda p: self._legacy_delta(
                p, self._raw_reasoning, ReasoningDelta
            ),
            "agent_reasoning_raw_content": lambda p: self._legacy_end(
                p, "text", self._raw_reasoning, ReasoningDelta
            ),
            "agent_reasoning_section_break": self._section_break,
            "user_message": self._legacy_user,
            "agent_message_content_delta": lambda p: self._item_delta(p, TextDelta, ""),
            "plan_delta": lambda p: self._item_delta(p, TextDelta, ""),
            "reasoning_content_delta": lambda p: self._item_delta(p, ReasoningDelta, ""),
            "reasoning_raw_content_delta": lambda p: self._item_delta(p, ReasoningDelta, ":raw"),
            "item_started": self._item_started,
            "item_completed": self._item_completed,
            "exec_command_begin": tools.exec_begin,
            "exec_command_output_delta": tools.exec_output,
            "exec_command_end": tools.exec_end,
            "patch_apply_begin": tools.patch_begin,
            "patch_apply_end": tools.patch_end,
            "mcp_tool_call_begin": lambda p: tools.mcp(p, finished=False),
            "mcp_tool_call_end": lambda p: tools.mcp(p, finished=True),
            "web_search_begin": lambda p: self._legacy_tool(p, finished=False),
            "web_search_end": lambda p: self._legacy_tool(p, finished=True),
            "view_image_tool_call": tools.view_image,
            "dynamic_tool_call_request": tools.dynamic,
            "exec_approval_request": lambda p: exec_approval(tools, p),
            "apply_patch_approval_request": patch_approval,
            "request_user_input": user_input,
            "elicitation_request": elicitation,
            "plan_update": plan,
            "token_count": lambda p: self._accounts.token_count(p, in_turn=self.in_turn),
            "context_compacted": lambda p: [Emitted(kind=ContextCompacted())],
            "thread_rolled_back": rolled_back,
            "deprecation_notice": deprecation,
            "thread_name_updated": thread_name,
            "session_configured": self._accounts.session_configured,
            "entered_review_mode": lambda p: [diagnostic(DiagnosticLevel.INFO, "review started")],
            "exited_review_mode": lambda p: [diagnostic(DiagnosticLevel.INFO, "review ended")],
            "mcp_startup_complete": mcp_startup,
            "mcp_startup_update": mcp_startup_update,
            "remote_skill_downloaded": skill_downloaded,
            "skills_update_available": skills_update,
            "turn_diff": self._turn_diff,
        }

    @property
    def handled_types(self) -> frozenset[str]:
        """The EventMsg types with a translation (collab_* ones aside)."""
        return frozenset(self._handlers) | frozenset(INFO_EVENTS)

    def feed(self, payload: object) -> list[DriverEvent]:
        """One EventMsg in; what it means out."""
        if not isinstance(payload, dict) or not isinstance(payload.get("type"), str):
            return [unknown_frame("(untyped)", payload)]
        event_type = payload["type"]
        try:
            fields = Fields(payload, event_type)
            if event_type in INFO_EVENTS:
                return note(event_type, fields)
            if event_type.startswith("collab_"):
                return self._tools.collab(event_type, fields)
            handler = self._handlers.get(event_type)
            if handler is None:
                return [] if event_type in IGNORED_EVENTS else [unknown_frame(event_type, payload)]
            return handler(fields)
        except ShapeError as error:
            return [bad_shape(event_type, payload, error)]

    def user_prompt(self, payload: object) -> str | None:
        """The text when `payload` is the user's message (once, whichever generation)."""
        if not isinstance(payload, dict):
            return None
        event_type = payload.get("type")
        try:
            if event_type == "user_message" and not self.items_mode:
                return Fields(payload, "user_message").string("message")
            if event_type == "item_completed":
                self.items_mode = True
                item = Fields(payload, "item_completed").obj("item")
                if item.string("type") == "UserMessage":
                    return user_text(item)
        except ShapeError:
            return None  # `feed` reports it
        return None

    # ---- turns -----------------------------------------------------------------

    def _task_started(self, payload: Fields) -> list[DriverEvent]:
        self.in_turn = True
        window = payload.opt_integer("model_context_window")
        if window is not None:
            self._accounts.window = window
        return [TurnBegan()]

    def _turn_diff(self, payload: Fields) -> list[DriverEvent]:
        self._diff = payload.string("unified_diff")
        return []  # rides on the turn's end

    def _turn_end(self) -> dict[str, object]:
        """Close the turn; the extensions its `TurnFinished` carries."""
        diff, self._diff = self._diff, None
        self.in_turn = False
        self._accounts.usage.turn_ended()
        self._streamed_items.clear()
        return {} if diff is None else {"codex/turn_diff": diff}

    def _task_complete(self, payload: Fields) -> list[DriverEvent]:
        # The seed's task_complete has no `error`, but real rollouts (0.171) end a
        # failed turn with one and send no separate `error` event.
        error = payload.opt_obj("error")
        if error is None:
            return [TurnFinished(stop=Completed(), extensions=self._turn_end())]
        ended = self._tools.end_all(ToolStatus.FAILED)
        extensions = self._turn_end()
        message = error.opt_string("message") or "the turn failed"
        return [*ended, TurnFinished(stop=Failed(message), extensions=extensions)]

    def _turn_aborted(self, payload: Fields) -> list[DriverEvent]:
        ended = self._tools.end_all(ToolStatus.CANCELLED)
        extensions = {**self._turn_end(), "codex/abort_reason": payload.opt_string("reason")}
        return [*ended, TurnFinished(stop=Cancelled(), extensions=extensions)]

    # ---- legacy messages ---------------------------------------------------------

    def _legacy_delta(
        self, payload: Fields, stream: _Stream, kind: type[TextDelta] | type[ReasoningDelta]
    ) -> list[DriverEvent]:
        if self.items_mode:
            return []
        text = payload.string("delta")
        return [Emitted(kind=kind(message_id=stream.delta(text), text=text))]

    def _legacy_end(
        self,
        payload: Fields,
        field: str,
        stream: _Stream,
        kind: type[TextDelta] | type[ReasoningDelta],
    ) -> list[DriverEvent]:
        if self.items_mode:
            return []
        text = payload.string(field)
        message_id, streamed = stream.finish()
        events: list[DriverEvent] = []
        if not streamed and text:
            events.append(Emitted(kind=kind(message_id=message_id, text=text)))
        if streamed or text:
            events.append(Emitted(kind=MessageEnded(message_id)))
        return events

    def _section_break(self, payload: Fields) -> list[DriverEvent]:
        if self.items_mode or self._reasoning.current is None:
            return []
        message_id = self._reasoning.delta("\n\n")
        return [Emitted(kind=ReasoningDelta(message_id=message_id, text="\n\n"))]

    def _legacy_user(self, payload: Fields) -> list[DriverEvent]:
        if self.items_mode:
            return []
        message_id, _ = self._users.finish()
        return [Emitted(kind=UserMessage(message_id=message_id, text=payload.string("message")))]

    def _legacy_tool(self, payload: Fields, *, finished: bool) -> list[DriverEvent]:
        return self._tools.web_search(payload, finished=finished)

    # ---- items ---------------------------------------------------------------------

    def _item_delta(
        self, payload: Fields, kind: type[TextDelta] | type[ReasoningDelta], suffix: str
    ) -> list[DriverEvent]:
        self.items_mode = True
        message_id = payload.string("item_id") + suffix
        self._streamed_items.add(message_id)
        return [Emitted(kind=kind(message_id=message_id, text=payload.string("delta")))]

    def _item_started(self, payload: Fields) -> list[DriverEvent]:
        self.items_mode = True
        item = payload.obj("item")
        if item.string("type") == "WebSearch":
            return self._tools.web_search(item, finished=False)
        return []

    def _item_completed(self, payload: Fields) -> list[DriverEvent]:
        self.items_mode = True
        item = payload.obj("item")
        item_id = item.string("id")
        match item.string("type"):
            case "AgentMessage":
                texts = [Fields(c, p).opt_string("text") or "" for p, c in item.array("content")]
                return [*message_end(self._streamed_items, item_id, "".join(texts), TextDelta)]
            case "Plan":
                return [*message_end(self._streamed_items, item_id, item.string("text"), TextDelta)]
            case "Reasoning":
                text = "\n\n".join(item.strings("summary_text", True))
                ended = message_end(self._streamed_items, item_id, text, ReasoningDelta)
                if f"{item_id}:raw" in self._streamed_items:
                    ended.append(Emitted(kind=MessageEnded(f"{item_id}:raw")))
                return [*ended]
            case "UserMessage":
                return [Emitted(kind=UserMessage(message_id=item_id, text=user_text(item)))]
            case "WebSearch":
                return self._tools.web_search(item, finished=True)
            case "ContextCompaction":
                return [Emitted(kind=ContextCompacted())]
            case "CommandExecution":
                return self._tools.command_item(item)
            case "FileChange":
                renamed = {**item.raw, "call_id": item_id}
                return self._tools.patch_end(Fields(renamed, item.path), status_field="status")
            case other:
                return [unknown_frame(f"item_completed/{other}", payload.raw)]
