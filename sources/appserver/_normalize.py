"""App-server notifications in, `DriverEvent`s out (sans-IO).

The wire (`app-server-notifications.schema.json`): a thread holds turns, a
turn holds items (`userMessage`, `agentMessage`, `toolCall`, `approval`,
`modelCall`, `error`, `reasoning`...), each announced by `item/started`,
grown by `item/agentMessage/delta` and `item/toolCall/delta`, and closed
by `item/completed`; `approval/requested` asks before a tool runs and
`approval/resolved` says it was settled; `turn/completed` ends a turn with
its status, usage, checkpoint and interruption.

Mapping: `turn/started` → `TurnBegan`; message deltas → `TextDelta` (the
item id is the message id) and a completed message → `MessageEnded` (with
the whole text when no delta came); tool items → one cumulative
`ToolUpdate` per call (Running at start, input from the argument deltas,
Completed / Failed / Cancelled with output at the end); model-call usage
and `turn/completed.tokenUsage` → `ContextUsage` with `corral/tokens`;
`approval/requested` → a Permission `RequestAsked`; `approval/resolved` →
`RequestWithdrawn` (a no-op for a request corral already answered);
`error/warning` and `error` items → `Diagnostic`; `turn/completed` →
`TurnFinished` (completed → Completed, interrupted / cancelled →
Cancelled, failed → Failed, anything else → Completed), carrying
`appserver/status`, `appserver/checkpoint` and `appserver/interruption`.

Threads: `thread/started` → `InfoChanged(resume_token)`;
`thread/status/changed` and `thread/archived` update the session: they are
applied options (`ConfigApplied` of `thread_status` and `archived`), which
the engine publishes as `SessionUpdated` (a driver sets no session status
itself: the line protocol's `SessionStatus` is the engine's, from turns and
requests, with no value for a thread not loaded or in error, and
`SessionInfo` has no archived field). `thread/closed` ends the session:
the turn in progress, if any, ends Failed, then `WireFailed(SessionClosed)`,
after which the engine reports the error and closes. The app-server wire has no "plain" close a
driver could report; a thread closed between turns is the same error.

Items mapped to no event: `approval` items (the approval notifications say
it all) and the `userMessage` echoing corral's own prompt. Everything else
unmapped becomes an Info `Diagnostic` with the raw notification under
`appserver/raw_frame` (`appserver/unmapped` for methods the schema names,
`corral/unknown_frame` for others). `expect_turn` marks a prompt corral
sent: the first of `turn/started`, an item, or `turn/completed`
acknowledges it, so a turn that fails at once still begins before it ends.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Mapping
from typing import Any

import attrs

from ...pipeline.driver import (
    ConfigApplied,
    DriverEvent,
    Emitted,
    InfoChanged,
    RequestAsked,
    RequestWithdrawn,
    TokenCount,
    TurnBegan,
    TurnFinished,
    WireFailed,
)
from ...pipeline.errors import ErrorKind
from ...pipeline.events import (
    Cancelled,
    Completed,
    ContextUsage,
    Diagnostic,
    DiagnosticLevel,
    EventKind,
    Failed,
    MessageEnded,
    PermissionChoice,
    PermissionRequest,
    ReasoningDelta,
    StopReason,
    TextDelta,
    ToolOutputDelta,
    ToolStatus,
    ToolUpdate,
    ToolUpdated,
    UserMessage,
)
from ._tools import tool_snapshot, usage_tokens

__all__ = ["IGNORED", "NOTIFICATIONS", "RAW_KEY", "AppServerNormalizer"]

RAW_KEY = "appserver/raw_frame"
NOTIFICATIONS = frozenset(
    {
        "thread/started",
        "thread/status/changed",
        "thread/archived",
        "thread/closed",
        "turn/started",
        "item/started",
        "item/agentMessage/delta",
        "item/toolCall/delta",
        "item/completed",
        "approval/requested",
        "approval/resolved",
        "error/warning",
        "turn/completed",
    }
)
# Notifications of the schema deliberately mapped to nothing, with the reason: none.
IGNORED: dict[str, str] = {}
_ACKS = frozenset({"turn/started", "turn/completed", "approval/requested"})
_OPTIONS = (PermissionChoice.ALLOW_ONCE, PermissionChoice.ALLOW_ALWAYS, PermissionChoice.DENY_ONCE)
_ITEM_STATUS = {
    "completed": ToolStatus.COMPLETED,
    "failed": ToolStatus.FAILED,
    "cancelled": ToolStatus.CANCELLED,
    "interrupted": ToolStatus.CANCELLED,
}

Json = Mapping[str, Any]


def _str(data: Json, key: str, default: str = "") -> str:
    value = data.get(key)
    return value if isinstance(value, str) else default


def _payload(params: Json) -> Json:
    payload = params.get("payload")
    return payload if isinstance(payload, Mapping) else {}


def _emit(kind: EventKind, **extensions: Any) -> Emitted:
    return Emitted(kind=kind, extensions=extensions)


@attrs.frozen(kw_only=True)
class AskedApproval:
    """Where an approval belongs, for the `approval/resolve` that answers it."""

    thread_id: str
    turn_id: str


class AppServerNormalizer:
    def __init__(self) -> None:
        self._tools: dict[str, ToolUpdate] = {}  # by tool call id
        self._item_tools: dict[str, str] = {}  # item id -> tool call id
        self._streamed: set[str] = set()
        self._echoes: deque[str] = deque()
        self._awaiting_ack = False
        self._in_turn = False  # a turn began and has not completed
        self.approvals: dict[str, AskedApproval] = {}
        self._handlers: dict[str, Callable[[Json], list[DriverEvent]]] = {
            "thread/started": self._thread_started,
            "thread/status/changed": self._thread_status,
            "thread/archived": self._thread_archived,
            "thread/closed": self._thread_closed,
            "turn/started": self._turn_started,
            "item/started": self._item_started,
            "item/agentMessage/delta": self._message_delta,
            "item/toolCall/delta": self._tool_delta,
            "item/completed": self._item_completed,
            "approval/requested": self._approval_requested,
            "approval/resolved": self._approval_resolved,
            "error/warning": self._warning,
            "turn/completed": self._turn_completed,
        }

    @staticmethod
    def mapped_methods() -> frozenset[str]:
        return frozenset(AppServerNormalizer()._handlers)

    def expect_turn(self, text: str) -> None:
        self._echoes.append(text)
        self._awaiting_ack = True

    def expect_echo(self, text: str) -> None:
        """A steer: its `userMessage` item, if the server sends one, is an echo."""
        self._echoes.append(text)

    def forget(self, text: str, *, steer: bool = False) -> None:
        """The agent refused `text`: no echo will come (and, for a prompt, no turn)."""
        if text in self._echoes:
            self._echoes.remove(text)
        if not steer:
            self._awaiting_ack = False

    def feed(self, method: str, params: object) -> list[DriverEvent]:
        handler = self._handlers.get(method)
        if handler is None or not isinstance(params, Mapping):
            return [_leftover(method, params)]
        out: list[DriverEvent] = []
        if self._awaiting_ack and (method in _ACKS or method.startswith("item/")):
            self._awaiting_ack = False
            self._in_turn = True
            out.append(TurnBegan())
        out.extend(handler(params))
        return out

    # ---- threads and turns -----------------------------------------------------

    def _thread_started(self, params: Json) -> list[DriverEvent]:
        return [InfoChanged(resume_token=_str(params, "threadId") or None)]

    def _thread_status(self, params: Json) -> list[DriverEvent]:
        return [ConfigApplied(option="thread_status", value=_str(params, "status"))]

    def _thread_archived(self, params: Json) -> list[DriverEvent]:
        return [ConfigApplied(option="archived", value=params.get("archived") is True)]

    def _thread_closed(self, params: Json) -> list[DriverEvent]:
        out: list[DriverEvent] = []
        if self._in_turn:
            self._in_turn = False
            self._streamed.clear()
            stop = Failed("the app-server closed the thread")
            out.append(TurnFinished(stop=stop, extensions={"appserver/status": "closed"}))
        message = f"the app-server closed thread {_str(params, 'threadId')}"
        return [*out, WireFailed(kind=ErrorKind.SESSION_CLOSED, message=message)]

    def _turn_started(self, params: Json) -> list[DriverEvent]:
        self._in_turn = True
        return [TurnBegan()]

    def _turn_completed(self, params: Json) -> list[DriverEvent]:
        self._in_turn = False
        out: list[DriverEvent] = []
        usage = params.get("tokenUsage")
        if isinstance(usage, Mapping):
            out.append(self._usage(usage))
        status = _str(params, "status")
        stop: StopReason = Completed()
        if status in ("interrupted", "cancelled"):
            stop = Cancelled()
        elif status == "failed":
            stop = Failed(_str(params, "error") or _str(params, "completionReason") or "failed")
        extensions: dict[str, Any] = {"appserver/status": status}
        for key, name in (
            ("checkpoint", "appserver/checkpoint"),
            ("interruption", "appserver/interruption"),
            ("completionReason", "appserver/completion_reason"),
        ):
            if key in params:
                extensions[name] = params[key]
        self._streamed.clear()
        return [*out, TurnFinished(stop=stop, extensions=extensions)]

    @staticmethod
    def _usage(usage: Json, model: str | None = None) -> Emitted:
        tokens = usage_tokens(usage)
        used = sum(tokens.get(k, 0) for k in ("input", "output"))
        usage_kind = ContextUsage(used_tokens=used)
        return Emitted(kind=usage_kind, tokens=TokenCount.from_counts(tokens), model=model or None)

    # ---- items -----------------------------------------------------------------

    def _item_started(self, params: Json) -> list[DriverEvent]:
        kind = _str(params, "type")
        if kind == "toolCall":
            return [self._tool_event(params, ToolStatus.RUNNING)]
        if kind in ("agentMessage", "reasoning", "approval", "modelCall"):
            return []  # content comes with deltas and completion; approvals by notification
        if kind == "userMessage":
            return self._user_message(params, ended=False)
        return [_leftover("item/started", params)]

    def _item_completed(self, params: Json) -> list[DriverEvent]:
        kind, payload, item_id = _str(params, "type"), _payload(params), _str(params, "itemId")
        match kind:
            case "toolCall":
                status = _ITEM_STATUS.get(_str(params, "status"), ToolStatus.COMPLETED)
                return [self._tool_event(params, status)]
            case "agentMessage" | "reasoning":
                return self._message_done(item_id, _str(payload, "text"), kind == "reasoning")
            case "userMessage":
                return self._user_message(params, ended=True)
            case "approval":
                return []
            case "modelCall":
                usage = payload.get("usage")
                if isinstance(usage, Mapping):
                    return [self._usage(usage, _str(payload, "model") or None)]
                return []
            case "error":
                message = _str(payload, "message", "the agent reported an error")
                return [_emit(Diagnostic(level=DiagnosticLevel.ERROR, message=message))]
        return [_leftover("item/completed", params)]

    def _message_delta(self, params: Json) -> list[DriverEvent]:
        item_id = _str(params, "itemId")
        self._streamed.add(item_id)
        return [_emit(TextDelta(message_id=item_id, text=_str(params, "delta")))]

    def _message_done(self, item_id: str, text: str, reasoning: bool) -> list[DriverEvent]:
        out: list[DriverEvent] = []
        streamed = item_id in self._streamed
        if text and not streamed:
            delta = (
                ReasoningDelta(message_id=item_id, text=text)
                if reasoning
                else TextDelta(message_id=item_id, text=text)
            )
            out.append(_emit(delta))
        if text or streamed:
            out.append(_emit(MessageEnded(item_id)))
        self._streamed.discard(item_id)
        return out

    def _user_message(self, params: Json, *, ended: bool) -> list[DriverEvent]:
        text = _str(_payload(params), "text")
        if self._echoes and self._echoes[0] == text:
            if ended:
                self._echoes.popleft()
            return []
        if not ended:
            return []  # shown once, when complete
        item_id = _str(params, "itemId")
        return [_emit(UserMessage(message_id=item_id, text=text)), _emit(MessageEnded(item_id))]

    # ---- tools -----------------------------------------------------------------

    def _tool_id(self, params: Json) -> str:
        item_id = _str(params, "itemId")
        call_id = _str(_payload(params), "toolCallId") or self._item_tools.get(item_id, item_id)
        self._item_tools[item_id] = call_id
        return call_id

    def _tool_event(self, params: Json, status: ToolStatus) -> Emitted:
        tool_id = self._tool_id(params)
        tool = tool_snapshot(self._tools.get(tool_id), tool_id, _payload(params), None, status)
        return self._keep(tool)

    def _keep(self, tool: ToolUpdate) -> Emitted:
        if tool.status.finished:
            self._tools.pop(tool.id, None)
        else:
            self._tools[tool.id] = tool
        return _emit(ToolUpdated(tool))

    def _tool_delta(self, params: Json) -> list[DriverEvent]:
        tool_id = self._tool_id(params)
        delta = params.get("delta")
        if isinstance(delta, str):
            return [_emit(ToolOutputDelta(tool_id=tool_id, text=delta))]
        known = self._tools.get(tool_id)
        status = known.status if known is not None else ToolStatus.RUNNING
        tool = tool_snapshot(known, tool_id, _payload(params), delta, status)
        return [self._keep(tool)]

    # ---- approvals and warnings ------------------------------------------------

    def _approval_requested(self, params: Json) -> list[DriverEvent]:
        request_id, tool_id = _str(params, "requestId"), _str(params, "toolCallId")
        payload = {"toolName": _str(params, "toolName"), "toolCallId": tool_id}
        arguments = params.get("arguments")
        known = self._tools.get(tool_id)
        tool = tool_snapshot(known, tool_id, payload, arguments, ToolStatus.PENDING)
        if known is not None:
            tool = attrs.evolve(tool, status=known.status)
        self._tools[tool_id] = tool
        self.approvals[request_id] = AskedApproval(
            thread_id=_str(params, "threadId"), turn_id=_str(params, "turnId")
        )
        preview = _str(params, "preview") or None
        request = PermissionRequest(id=request_id, tool=tool, options=_OPTIONS, detail=preview)
        return [RequestAsked(request=request)]

    def _approval_resolved(self, params: Json) -> list[DriverEvent]:
        request_id = _str(params, "requestId")
        self.approvals.pop(request_id, None)
        return [RequestWithdrawn(request_id)]

    def _warning(self, params: Json) -> list[DriverEvent]:
        note = Diagnostic(level=DiagnosticLevel.WARNING, message=_str(params, "message"))
        code = _str(params, "code")
        return [_emit(note, **({"appserver/code": code} if code else {}))]


def _leftover(method: str, params: object) -> Emitted:
    note = Diagnostic(level=DiagnosticLevel.INFO, message=f"app-server notification {method}")
    raw = {RAW_KEY: {"method": method, "params": params}}
    if method in NOTIFICATIONS:  # known, not mapped (yet)
        return Emitted(kind=note, extensions={**raw, "appserver/unmapped": method})
    return Emitted(kind=note, unknown_frame=method, extensions=raw)
