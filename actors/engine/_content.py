"""Agent content: which turn it belongs to, and how turns end.

Content kinds (text, reasoning, user messages, a tool starting, plans) that
arrive while no turn runs open an agent-origin turn. Bookkeeping (usage, a
diagnostic, a finished tool, an update of a tool from an earlier turn)
never opens a turn and outside a turn carries no `turn_info`. Content that
arrives after a new turn was started but before the wire acknowledged it
belongs to the previous turn and is dropped, never misattributed (counted
in `stale_dropped`).

A turn ends in one place, `end_turn`: open requests are withdrawn, every
message that never ended gets a synthesized `MessageEnded`, the usage
reported during the turn rides on it, and `TurnEnded` lists the tools still
running (`background`).
"""

from __future__ import annotations

from typing import Any

from ...pipeline.driver import Emitted
from ...pipeline.events import (
    Cancelled,
    Completed,
    CompletionSource,
    ContextUsage,
    Diagnostic,
    DiagnosticLevel,
    EventKind,
    MessageEnded,
    PlanUpdated,
    ReasoningDelta,
    StopReason,
    TextDelta,
    ToolOutputDelta,
    ToolUpdated,
    TurnEnded,
    UserMessage,
)
from ._core import EngineCore

__all__ = ["ContentMixin"]


def merge_usage(held: dict[str, Any], fresh: dict[str, Any]) -> dict[str, Any]:
    """Extensions of two usage reports as one: `corral/tokens` summed, the rest newest."""
    merged = {**held, **fresh}
    before, after = held.get("corral/tokens"), fresh.get("corral/tokens")
    if isinstance(before, dict) and isinstance(after, dict):
        tokens = dict(before)
        for name, count in after.items():
            if isinstance(count, int) and isinstance(tokens.get(name, 0), int):
                tokens[name] = tokens.get(name, 0) + count
        merged["corral/tokens"] = tokens
    return merged


def _tool_id(kind: EventKind) -> str | None:
    match kind:
        case ToolUpdated(tool=tool):
            return tool.id
        case ToolOutputDelta(tool_id=tool_id):
            return tool_id
    return None


def _opens_turn(kind: EventKind) -> bool:
    match kind:
        case TextDelta() | ReasoningDelta() | UserMessage() | ToolOutputDelta() | PlanUpdated():
            return True
        case ToolUpdated(tool=tool):
            return not tool.status.finished
    return False


class ContentMixin(EngineCore):
    def on_content(self, emitted: Emitted) -> None:
        kind = emitted.kind
        turn = self.turn
        tool_id = _tool_id(kind)
        owner = None if tool_id is None else self.tool_owner.get(tool_id)
        if owner is not None and (turn is None or owner != turn.id):
            self._background_tool(emitted)
            return
        if isinstance(kind, ContextUsage) and turn is not None and turn.acked:
            # Rides on this turn's end: the latest figures, with the tokens of
            # every report of the turn added up (each counts since the last).
            turn.usage = kind
            turn.usage_extensions = merge_usage(turn.usage_extensions, emitted.extensions)
            return
        if isinstance(kind, MessageEnded) and kind.message_id in self.ended_messages:
            return  # already ended when its turn ended
        if turn is None:
            if not _opens_turn(kind):
                self.emit(kind, in_turn=False, extensions=emitted.extensions)
                return
            self.open_agent_turn()
            turn = self.turn
            assert turn is not None
        elif not turn.acked:
            if _opens_turn(kind) or isinstance(kind, MessageEnded):
                self.stale_dropped += 1  # the previous turn's tail
            else:
                self.emit(kind, in_turn=False, extensions=emitted.extensions)
            return
        match kind:
            case TextDelta(message_id=message_id) | ReasoningDelta(message_id=message_id):
                turn.open_messages[message_id] = None
            case MessageEnded(message_id=message_id):
                turn.open_messages.pop(message_id, None)
                self.ended_messages.add(message_id)
            case ToolUpdated(tool=tool):
                self.tool_owner[tool.id] = turn.id
                if tool.status.finished:
                    turn.running_tools.pop(tool.id, None)
                else:
                    turn.running_tools[tool.id] = None
        turn.last_activity = self.clock()
        turn.stall_warned = False
        self.emit(kind, parent_tool_id=emitted.parent_tool_id, extensions=emitted.extensions)

    def _background_tool(self, emitted: Emitted) -> None:
        """An update of a tool that outlived its turn: bookkeeping."""
        kind = emitted.kind
        if isinstance(kind, ToolUpdated) and kind.tool.status.finished:
            self.tool_owner.pop(kind.tool.id, None)
        self.emit(kind, in_turn=False, extensions=emitted.extensions)

    def end_turn(self, stop: StopReason, extensions: dict[str, object] | None = None) -> None:
        turn = self.turn
        assert turn is not None, "end_turn without a turn"
        self.requeue_steer()
        self.withdraw_requests(decided_by="cancel" if isinstance(stop, Cancelled) else "turn_end")
        for message_id in turn.open_messages:
            self.emit(MessageEnded(message_id))
            self.ended_messages.add(message_id)
        if turn.usage is not None:
            self.emit(turn.usage, extensions=turn.usage_extensions)
        self.emit(
            TurnEnded(stop=stop, background=tuple(turn.running_tools)),
            extensions=extensions,
        )
        self.turn = None

    # ---- time ------------------------------------------------------------------

    def turn_deadline(self) -> float | None:
        turn = self.turn
        if turn is None:
            return None
        deadlines = []
        if turn.cancel_deadline is not None:
            deadlines.append(turn.cancel_deadline)
        if turn.quiet_window is not None and not turn.running_tools and not self.requests:
            deadlines.append(turn.last_activity + turn.quiet_window)
        if not turn.stall_warned and not self.requests:
            deadlines.append(turn.last_activity + self.settings.stall_after)
        return min(deadlines, default=None)

    def expire_turn(self) -> None:
        turn = self.turn
        if turn is None:
            return
        now = self.clock()
        if turn.cancel_deadline is not None and now >= turn.cancel_deadline:
            self.emit(
                Diagnostic(
                    level=DiagnosticLevel.WARNING,
                    message=f"{self.agent.name} did not confirm the cancel in time; "
                    "corral ended the turn",
                ),
                extensions={"corral/cancel_timeout": True},
            )
            self.end_turn(Cancelled())
            return
        silent = now - turn.last_activity
        paused = bool(turn.running_tools or self.requests)
        if turn.quiet_window is not None and not paused and silent >= turn.quiet_window:
            self.end_turn(Completed(CompletionSource.INFERRED))
            return
        if not turn.stall_warned and not self.requests and silent >= self.settings.stall_after:
            turn.stall_warned = True
            self.emit(
                Diagnostic(
                    level=DiagnosticLevel.WARNING,
                    message=f"{self.agent.name} has been silent for {silent:.0f} s mid-turn",
                ),
                extensions={"corral/stall": {"silent_seconds": round(silent, 3)}},
            )
