"""`codex app-server` notifications and server requests → driver events (sans-IO).

In: each notification (`method`, `params`) and each server→client request
(`id`, `method`, `params`) in wire order. Out: `DriverEvent`s, plus the
JSON-RPC `Reply` for requests corral answers at once (unsupported ones).
No I/O, no clock but the injected one.

Turns: `turn/started` → `TurnBegan`; `turn/completed` → `TurnFinished`
(completed → Completed, interrupted → Cancelled, failed → Failed with the
turn's error). Codex never completes tool items cut off by an interrupt,
so the tools still running then end Cancelled (Failed on a failed turn),
just before the turn's end. Only our thread's turns count; items of other
threads (subagents) pass through marked with `codex/thread_id`.

Items (`item/started`, `item/completed`) by type: agentMessage and plan →
TextDelta (streamed by `item/agentMessage/delta`, `item/plan/delta`; the
completed text when nothing streamed) then MessageEnded; reasoning →
ReasoningDelta likewise (raw reasoning text under `<item id>:raw`);
userMessage → UserMessage unless it is one of our prompts (matched by the
`clientUserMessageId` we sent, or by text); tool items → ToolUpdated
snapshots (see `_items`), with their output deltas as ToolOutputDelta;
contextCompaction → ContextCompacted.

Bookkeeping: `thread/tokenUsage/updated` → ContextUsage (see `UsageMeter`),
`account/rateLimits/updated` → PlanUsageUpdated (when Codex reports a
window), `error` / `warning` / `configWarning` / `deprecationNotice` →
Diagnostic, `thread/name/updated` → InfoChanged(title),
`serverRequest/resolved` for a request we did not answer →
RequestWithdrawn. Notifications known to carry nothing for corral are
dropped by name (`IGNORED`); anything else is an unknown frame.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import attrs

from ...pipeline.driver import (
    DriverEvent,
    Emitted,
    InfoChanged,
    RequestWithdrawn,
    TurnBegan,
    TurnFinished,
)
from ...pipeline.events import (
    Cancelled,
    Completed,
    ContextCompacted,
    DiagnosticLevel,
    Failed,
    Fields,
    PlanUsageUpdated,
    ShapeError,
    StopReason,
    ToolStatus,
)
from ...pipeline.fidelity import DECLINED
from ._approvals import Reply, ServerRequests, unsupported_reply
from ._appserver_items import ItemTracker
from ._common import (
    CAMEL,
    UsageMeter,
    bad_shape,
    context_usage,
    diagnostic,
    limit_windows,
    plan_updated,
    plan_usage,
    tokens_of,
    unknown_frame,
)

__all__ = ["IGNORED", "AppServerNormalizer"]

IGNORED = frozenset(
    {
        "thread/started",
        "thread/status/changed",
        "thread/readState/changed",
        "thread/settings/updated",
        "thread/reverted",
        "thread/archived",
        "thread/unarchived",
        "thread/closed",
        "thread/deleted",
        "thread/queue/changed",
        "thread/goal/updated",
        "thread/goal/cleared",
        "thread/prediction/updated",
        "thread/environment/connected",
        "thread/environment/disconnected",
        "turn/diff/updated",
        "turn/moderationMetadata",
        "remoteControl/status/changed",
        "hook/started",
        "hook/completed",
        "skills/changed",
        "app/list/updated",
        "account/updated",
        "fs/changed",
        "command/exec/outputDelta",
        "item/commandExecution/terminalInteraction",
        "item/autoApprovalReview/started",
        "item/autoApprovalReview/completed",
        "mcpServer/startupStatus/updated",
        "model/safetyBuffering/updated",
    }
)


def _error_text(error: Fields) -> str:
    message = error.string("message")
    details = error.opt_string("additionalDetails")
    return f"{message} ({details})" if details else message


class AppServerNormalizer:
    def __init__(self, *, wall_clock_ns: Callable[[], int]) -> None:
        self.thread_id: str | None = None
        self.model: str | None = None
        self.requests = ServerRequests()
        self.active_turn: str | None = None  # Codex's id of the running turn
        self.begun_turns: set[str] = set()
        self._now = wall_clock_ns
        self.items = ItemTracker(is_ours=self._ours)
        self._usage = UsageMeter()
        self._handlers: dict[str, Callable[[Fields], list[DriverEvent]]] = {
            "turn/started": self._turn_started,
            "turn/completed": self._turn_completed,
            "item/started": self.items.item_started,
            "item/completed": self.items.item_completed,
            "item/agentMessage/delta": self.items.text_delta,
            "item/plan/delta": self.items.text_delta,
            "item/reasoning/summaryTextDelta": self.items.reasoning_delta,
            "item/reasoning/summaryPartAdded": self.items.reasoning_part,
            "item/reasoning/textDelta": self.items.raw_reasoning_delta,
            "item/commandExecution/outputDelta": self.items.output_delta,
            "item/fileChange/outputDelta": self.items.output_delta,
            "item/mcpToolCall/progress": self.items.mcp_progress,
            "item/fileChange/patchUpdated": self.items.patch_updated,
            "turn/plan/updated": self._plan,
            "thread/tokenUsage/updated": self._token_usage,
            "account/rateLimits/updated": self._rate_limits,
            "error": self._error,
            "warning": self._warning,
            "configWarning": self._warning,
            "deprecationNotice": self._warning,
            "guardianWarning": self._warning,
            "thread/name/updated": self._name,
            "thread/compacted": self._thread_compacted,
            "serverRequest/resolved": self._resolved,
            "model/rerouted": self._rerouted,
        }

    # ---- inputs from the driver ----------------------------------------------

    def expect_prompt(self, client_id: str, text: str) -> None:
        """A prompt we sent: its userMessage item is not news to the app."""
        self.items.expect_prompt(client_id, text)

    def end_tools(self, status: ToolStatus) -> list[DriverEvent]:
        """End every tool still running (Codex will never complete them)."""
        return self.items.end_tools(status)

    def notification(self, method: str, params: object) -> list[DriverEvent]:
        handler = self._handlers.get(method)
        if handler is None:
            if method in IGNORED:
                return []
            return [unknown_frame(method, {"method": method, "params": params})]
        try:
            return handler(Fields(params, method))
        except ShapeError as error:
            return [bad_shape(method, {"method": method, "params": params}, error)]

    def server_request(
        self, rpc_id: int | str, method: str, params: object
    ) -> tuple[list[DriverEvent], Reply | None]:
        frame = {"id": rpc_id, "method": method, "params": params}
        try:
            fields = Fields(params, method)
            tool_id = fields.opt_string("itemId") or fields.opt_string("callId")
            tool = None if tool_id is None else self.items.tool(tool_id)
            asked = self.requests.open(rpc_id, method, fields, tool)
        except ShapeError as error:
            return [bad_shape(method, frame, error)], Reply(rpc_id, error=(-32602, str(error)))
        if asked is not None:
            return [asked], None
        if method == "mcpServer/elicitation/request":
            note = diagnostic(
                DiagnosticLevel.WARNING,
                "an MCP server asked for input corral cannot show (elicitation); declined",
                **{"codex/raw_frame": frame, DECLINED: method},
            )
            return [note], Reply(rpc_id, {"action": "decline", "content": None})
        unknown = unknown_frame(method, frame)
        unknown = attrs.evolve(unknown, extensions={**unknown.extensions, DECLINED: method})
        return [unknown], unsupported_reply(rpc_id, method)

    # ---- turns -----------------------------------------------------------------

    def _ours(self, params: Fields) -> bool:
        thread = params.opt_string("threadId")
        return self.thread_id is None or thread is None or thread == self.thread_id

    def _turn_started(self, params: Fields) -> list[DriverEvent]:
        if not self._ours(params):
            return []
        turn_id = params.obj("turn").string("id")
        self.active_turn = turn_id
        self.begun_turns.add(turn_id)
        self.items.turn_over()
        return [TurnBegan()]

    def _turn_completed(self, params: Fields) -> list[DriverEvent]:
        if not self._ours(params):
            return []
        turn = params.obj("turn")
        status = turn.string("status")
        stop: StopReason
        ended: list[DriverEvent] = []
        if status == "interrupted":
            stop = Cancelled()
            ended = self.end_tools(ToolStatus.CANCELLED)
        elif status == "failed":
            error = turn.opt_obj("error")
            stop = Failed(_error_text(error) if error is not None else "the turn failed")
            ended = self.end_tools(ToolStatus.FAILED)
        else:
            stop = Completed()
        self.active_turn = None
        self._usage.turn_ended()
        self.items.turn_over()
        extensions: dict[str, Any] = {"codex/turn_id": turn.string("id")}
        return [*ended, TurnFinished(stop=stop, extensions=extensions)]

    # ---- items -------------------------------------------------------------------

    # ---- bookkeeping ---------------------------------------------------------------

    def _plan(self, params: Fields) -> list[DriverEvent]:
        steps = []
        for path, raw in params.array("plan"):
            step = Fields(raw, path)
            steps.append((step.string("step"), step.string("status")))
        return [self.items.marked(params, Emitted(kind=plan_updated(steps)))]

    def _token_usage(self, params: Fields) -> list[DriverEvent]:
        usage = params.obj("tokenUsage")
        last = usage.obj("last")
        tokens = self._usage.update(
            total=tokens_of(usage.obj("total"), CAMEL),
            last=tokens_of(last, CAMEL),
            in_turn=self.active_turn is not None,
        )
        return [
            context_usage(
                used=last.opt_integer("totalTokens") or 0,
                window=usage.opt_integer("modelContextWindow"),
                tokens=tokens,
                model=self.model,
            )
        ]

    def _rate_limits(self, params: Fields) -> list[DriverEvent]:
        limits = params.obj("rateLimits")
        primary, secondary = limit_windows(limits, CAMEL)
        usage = plan_usage(
            primary=primary,
            secondary=secondary,
            plan=limits.opt_string("planType"),
            now_ns=self._now(),
        )
        return [] if usage is None else [Emitted(kind=PlanUsageUpdated(usage))]

    def _error(self, params: Fields) -> list[DriverEvent]:
        error = params.obj("error")
        retrying = params.flag("willRetry", False)
        level = DiagnosticLevel.WARNING if retrying else DiagnosticLevel.ERROR
        extensions: dict[str, Any] = {"codex/will_retry": retrying}
        if error.has("codexErrorInfo"):
            extensions["codex/error_info"] = error.raw["codexErrorInfo"]
        return [diagnostic(level, _error_text(error), **extensions)]

    def _warning(self, params: Fields) -> list[DriverEvent]:
        message = params.opt_string("message") or params.string("summary")
        details = params.opt_string("details")
        text = f"{message} ({details})" if details else message
        return [diagnostic(DiagnosticLevel.WARNING, text)]

    def _name(self, params: Fields) -> list[DriverEvent]:
        name = params.opt_string("threadName")
        if not self._ours(params) or not name:
            return []
        return [InfoChanged(title=name)]

    def _thread_compacted(self, params: Fields) -> list[DriverEvent]:
        if self.items.compacted or not self._ours(params):
            return []
        self.items.compacted = True
        return [Emitted(kind=ContextCompacted())]

    def _resolved(self, params: Fields) -> list[DriverEvent]:
        request_id = self.requests.resolved(params.value("requestId"))
        return [] if request_id is None else [RequestWithdrawn(request_id)]

    def _rerouted(self, params: Fields) -> list[DriverEvent]:
        self.model = params.string("toModel")
        message = f"Codex rerouted the turn from {params.string('fromModel')} to {self.model}"
        reason = params.raw.get("reason")
        return [diagnostic(DiagnosticLevel.INFO, message, **{"codex/reason": reason})]
