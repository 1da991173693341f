"""Session-level events: configuration, plan, context, quota, shutdown and operator notes.

What Copilot says about the session rather than the turn maps to the
normalized model where the model has a place for it:

- configuration the agent changed itself (`session.model_change`,
  `session.mode_changed`, `session.resume`'s model, `subagent.selected` /
  `deselected`) becomes `ConfigApplied` for the `model`, `effort`, `mode`
  and `agent` options, which the engine turns into `SessionUpdated`;
- `commands.changed` is the slash-command list (`InfoChanged(commands=)`);
- `session.truncation` and `session.context_cleared` shrink the context
  (`ContextCompacted`, then `ContextUsage` with the new size);
  `session.usage_checkpoint` is a `ContextUsage` carrying the billing total;
- an `assistant.usage`'s `quotaSnapshots` are the plan's quota
  (`PlanUsageUpdated`, one window per quota, used = 100 - remaining);
- `session.plan_changed` with `delete` empties the plan (`PlanUpdated(())`).
  Its `create` / `update`, `session.todos_changed` and
  `session.background_tasks_changed` carry no content (the plan, todos and
  tasks are read by RPC), so here they are Info notes naming the change;
  the live driver reads the plan and todos instead (`_controls.py`) and
  emits `PlanUpdated`, so only replays see those notes;
- `session.shutdown` ends the session: `error` is a `WireFailed` with the
  reason; `routine` reports the final context size, with the session's
  totals (premium requests, code changes, model metrics) whole under
  `copilot/shutdown`. The process's exit then ends the session as usual.

Operator notes: what has no place in the model but matters to whoever runs
the agent (MCP servers and their auth, retries and failed model calls,
limits, managed settings, custom agents) is a `Diagnostic` with its own
message and a fitting level: Warning for limits and failures, Info for the
rest, with the facts under `copilot/...` extensions.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from ...pipeline.driver import ConfigApplied, DriverEvent, InfoChanged, WireFailed
from ...pipeline.errors import ErrorKind
from ...pipeline.events import (
    ContextCompacted,
    Diagnostic,
    DiagnosticLevel,
    PlanUpdated,
    PlanUsage,
    SlashCommand,
    SystemTime,
    UsageWindow,
)
from .._timestamps import iso_ns
from ._base import Json, NormalizerState, as_int, as_str, is_map

__all__ = ["SESSION_HANDLERS", "SessionEvents", "quota_usage"]

Handler = Callable[["SessionEvents", Json, Json], list[DriverEvent]]  # (state, event, data)


def _stamp(raw: object) -> SystemTime | None:
    ns = iso_ns(raw)
    return None if ns is None else SystemTime.from_ns(ns)


def quota_usage(event: Json, snapshots: object) -> PlanUsage | None:
    """`quotaSnapshots` (quota id -> snapshot) as the plan's usage windows."""
    if not is_map(snapshots):
        return None
    windows = []
    for label, snapshot in sorted(snapshots.items()):
        remaining = snapshot.get("remainingPercentage") if is_map(snapshot) else None
        if not isinstance(remaining, int | float) or isinstance(remaining, bool):
            continue
        used = max(0, min(100, round(100 - remaining)))
        resets = _stamp(snapshot.get("resetDate"))
        windows.append(UsageWindow(label=str(label), used_percent=used, resets_at=resets))
    if not windows:
        return None
    fetched = _stamp(event.get("timestamp")) or SystemTime(secs=0)
    return PlanUsage(windows=tuple(windows), fetched_at=fetched)


class SessionEvents(NormalizerState):
    # ---- configuration -----------------------------------------------------------

    def _model_change(self, event: Json, data: Json) -> list[DriverEvent]:
        out: list[DriverEvent] = [ConfigApplied(option="model", value=as_str(data, "newModel"))]
        effort = data.get("reasoningEffort")
        if isinstance(effort, str) and effort:
            out.append(ConfigApplied(option="effort", value=effort))
        return out

    def _mode_changed(self, event: Json, data: Json) -> list[DriverEvent]:
        return [ConfigApplied(option="mode", value=as_str(data, "newMode"))]

    def _resume(self, event: Json, data: Json) -> list[DriverEvent]:
        model = as_str(data, "selectedModel")
        return [ConfigApplied(option="model", value=model)] if model else []

    def _agent_selected(self, event: Json, data: Json) -> list[DriverEvent]:
        return [ConfigApplied(option="agent", value=as_str(data, "agentName"))]

    def _commands_changed(self, event: Json, data: Json) -> list[DriverEvent]:
        listed = data.get("commands")
        commands = tuple(
            SlashCommand(name=as_str(item, "name"), description=as_str(item, "description"))
            for item in (listed if isinstance(listed, list) else ())
            if isinstance(item, Mapping) and as_str(item, "name")
        )
        return [InfoChanged(commands=commands)]

    # ---- context, plan and quota -------------------------------------------------

    def _truncation(self, event: Json, data: Json) -> list[DriverEvent]:
        facts = (
            "performedBy",
            "preTruncationTokensInMessages",
            "postTruncationTokensInMessages",
            "messagesRemovedDuringTruncation",
            "tokensRemovedDuringTruncation",
        )
        details = {key: data[key] for key in facts if key in data}
        post, limit = as_int(data, "postTruncationTokensInMessages"), as_int(data, "tokenLimit")
        if post is not None and limit is not None:
            self._window = (post, limit)
        compacted = self._emit(event, ContextCompacted(), {"copilot/truncation": details})
        return [compacted, self._usage(event, post or 0, {})]

    def _context_cleared(self, event: Json, data: Json) -> list[DriverEvent]:
        limit = None if self._window is None else self._window[1]
        self._window = None if limit is None else (0, limit)
        cleared = {"messagesCleared": data.get("messagesCleared")}
        compacted = self._emit(event, ContextCompacted(), {"copilot/context_cleared": cleared})
        return [compacted, self._usage(event, 0, {})]

    def _usage_checkpoint(self, event: Json, data: Json) -> list[DriverEvent]:
        billing = {k: data[k] for k in ("totalNanoAiu", "totalPremiumRequests") if k in data}
        fallback = 0 if self._window is None else self._window[0]
        return [self._usage(event, fallback, {"copilot/billing": billing})]

    def _plan_changed(self, event: Json, data: Json) -> list[DriverEvent]:
        operation = as_str(data, "operation")
        if operation == "delete":
            return [self._emit(event, PlanUpdated(entries=()))]
        return _signal(f"the plan was {operation}d")(self, event, data)

    # ---- the end ---------------------------------------------------------------

    def _shutdown(self, event: Json, data: Json) -> list[DriverEvent]:
        if as_str(data, "shutdownType") == "error":
            reason = as_str(data, "errorReason", "no reason given")
            return [
                WireFailed(
                    kind=ErrorKind.PROTOCOL_FAILED,
                    message=f"Copilot shut the session down: {reason}",
                )
            ]
        summary: dict[str, Any] = dict(data)  # the session's totals, kept whole
        current = as_int(data, "currentTokens")
        if current is not None and self._window is not None:
            self._window = (current, self._window[1])
        usage = self._usage(event, current or 0, {"copilot/shutdown": summary})
        return [usage]


def _signal(what: str) -> Handler:
    """A change Copilot only signals (the content is read by RPC): an Info note."""

    def note(state: SessionEvents, event: Json, data: Json) -> list[DriverEvent]:
        kind = as_str(event, "type")
        return [
            state._emit(
                event,
                Diagnostic(level=DiagnosticLevel.INFO, message=what),
                {"copilot/signal": kind},
            )
        ]

    return note


SESSION_HANDLERS: dict[str, Handler] = {
    "session.model_change": SessionEvents._model_change,
    "session.mode_changed": SessionEvents._mode_changed,
    "session.resume": SessionEvents._resume,
    "subagent.selected": SessionEvents._agent_selected,
    "subagent.deselected": SessionEvents._agent_selected,
    "commands.changed": SessionEvents._commands_changed,
    "session.truncation": SessionEvents._truncation,
    "session.context_cleared": SessionEvents._context_cleared,
    "session.usage_checkpoint": SessionEvents._usage_checkpoint,
    "session.plan_changed": SessionEvents._plan_changed,
    "session.todos_changed": _signal("the todo list changed"),
    "session.background_tasks_changed": _signal("the background tasks changed"),
    "session.shutdown": SessionEvents._shutdown,
}
