"""How `corral demo` shows events to a person: one readable line each.

Text is gathered per message and printed when the message ends; tools
print when their status changes; statuses and usage are dim. A tally per
session feeds the closing summary table.
"""

from __future__ import annotations

from typing import TextIO

import attrs

from ..pipeline.events import (
    Cancelled,
    Completed,
    CompletionSource,
    ContextUsage,
    Delivery,
    Diagnostic,
    Event,
    Failed,
    MessageEnded,
    PlanStatus,
    PlanUpdated,
    PromptOrigin,
    Queued,
    ReasoningDelta,
    Refused,
    RequestClosed,
    RequestOpened,
    Started,
    StatusChanged,
    Steered,
    StopReason,
    TextDelta,
    ToolOutputDelta,
    ToolStatus,
    ToolUpdated,
    TurnEnded,
    TurnStarted,
)
from ..pipeline.extensions import marked_decision

__all__ = ["Renderer", "SessionTally"]

_COLORS = ("36", "35", "33", "32", "34")
_PLAN = {PlanStatus.PENDING: "[ ]", PlanStatus.IN_PROGRESS: "[~]", PlanStatus.COMPLETED: "[x]"}
_TOOL = {
    ToolStatus.PENDING: "…",
    ToolStatus.RUNNING: "⚙",
    ToolStatus.COMPLETED: "✓",
    ToolStatus.FAILED: "✗",
    ToolStatus.CANCELLED: "⊘",
}


@attrs.define
class SessionTally:
    agent: str
    turns: int = 0
    events: int = 0
    tools: int = 0
    decisions: dict[str, int] = attrs.field(factory=dict)
    tokens: int = 0
    cost: float = 0.0
    status: str = "Idle"

    def add(self, event: Event) -> None:
        self.events += 1
        match event.kind:
            case TurnEnded():
                self.turns += 1
            case ToolUpdated(tool=tool) if tool.status is ToolStatus.COMPLETED:
                self.tools += 1
            case RequestClosed():
                who = str((marked_decision(event) or {}).get("decided_by", "?"))
                self.decisions[who] = self.decisions.get(who, 0) + 1
            case ContextUsage(used_tokens=used, cost_usd=cost):
                self.tokens = used
                self.cost += cost or 0.0
            case StatusChanged(status=status):
                self.status = status.value


def _stop_text(stop: StopReason) -> str:
    match stop:
        case Completed(source=source):
            return "completed" if source is CompletionSource.PROTOCOL else "completed (inferred)"
        case Failed(message=message):
            return f"failed: {message}"
        case Cancelled():
            return "cancelled"
        case Refused():
            return "refused"


class Renderer:
    def __init__(self, out: TextIO, *, color: bool) -> None:
        self.out = out
        self.color = color
        self.labels: dict[str, str] = {}
        self.texts: dict[tuple[str, str], list[str]] = {}
        self.tool_status: dict[tuple[str, str], ToolStatus] = {}

    def _paint(self, code: str, text: str) -> str:
        return f"\x1b[{code}m{text}\x1b[0m" if self.color else text

    def _label(self, session_id: str, agent: str) -> str:
        if session_id not in self.labels:
            code = _COLORS[len(self.labels) % len(_COLORS)]
            self.labels[session_id] = self._paint(code, f"{session_id} {agent:<8}")
        return self.labels[session_id]

    def line(self, session_id: str, agent: str, text: str, *, dim: bool = False) -> None:
        body = self._paint("2", text) if dim else text
        print(f"{self._label(session_id, agent)} │ {body}", file=self.out, flush=True)

    def banner(self) -> None:
        title = "corral demo: three scripted agents, one pipeline, every event in order"
        print(self._paint("1", title), file=self.out)
        print("(mock agents: nothing is installed, nothing leaves this machine)\n", file=self.out)

    def opened(self, session_id: str, agent: str, mode: str) -> None:
        self.line(session_id, agent, f"session opened (permission mode {mode})")

    def note(self, session_id: str, agent: str, text: str) -> None:
        self.line(session_id, agent, f"↳ {text}")

    def delivered(self, session_id: str, agent: str, text: str, delivery: Delivery) -> None:
        match delivery.kind:
            case Started(turn_id=turn_id):
                where = f"started as {turn_id}"
            case Steered(turn_id=turn_id):
                where = f"steered into {turn_id}"
            case Queued(position=position):
                where = f"queued at position {position}"
        self.line(session_id, agent, f"prompt {delivery.prompt_id} “{text}” {where}")

    def event(self, session_id: str, agent: str, event: Event) -> None:
        text = self._describe(session_id, event)
        if text is not None:
            self.line(session_id, agent, text[0], dim=text[1])

    def _describe(self, sid: str, event: Event) -> tuple[str, bool] | None:
        match event.kind:
            case TurnStarted(origin=origin):
                why = f"prompt {origin.prompt_id}" if isinstance(origin, PromptOrigin) else "agent"
                return f"▶ turn {event.turn_info.id if event.turn_info else '?'} ({why})", False
            case TextDelta(message_id=mid, text=text) | ReasoningDelta(message_id=mid, text=text):
                self.texts.setdefault((sid, mid), []).append(text)
                return None
            case MessageEnded(message_id=mid):
                said = "".join(self.texts.pop((sid, mid), []))
                return (f"» {said}", False) if said else None
            case ToolUpdated(tool=tool):
                if self.tool_status.get((sid, tool.id)) is tool.status:
                    return None
                self.tool_status[(sid, tool.id)] = tool.status
                result = f" → {tool.output}" if tool.output and tool.status.finished else ""
                return f"{_TOOL[tool.status]} {tool.title}{result}", False
            case ToolOutputDelta(text=text):
                return f"  │ {text.rstrip()}", True
            case PlanUpdated(entries=entries):
                return "plan: " + "  ".join(f"{_PLAN[e.status]} {e.text}" for e in entries), False
            case RequestOpened(request=request):
                decided = marked_decision(event)
                if decided is not None:
                    return f"? {request.id} decided by {decided['decided_by']}", False
                return f"? permission asked: {request.id}", False
            case RequestClosed(request_id=rid):
                decided = marked_decision(event) or {}
                return f"✔ {rid}: {decided.get('decision')} by {decided.get('decided_by')}", False
            case ContextUsage(used_tokens=used, cost_usd=cost):
                return f"Σ {used:,} tokens in context, ${cost or 0:.4f}", True
            case StatusChanged(status=status):
                return f"status {status.value}", True
            case TurnEnded(stop=stop):
                return f"■ turn ended: {_stop_text(stop)}", False
            case Diagnostic(level=level, message=message):
                return f"! {level.value}: {message}", False
        return None

    def summary(self, tallies: dict[str, SessionTally]) -> None:
        print(file=self.out)
        print(self._paint("1", "summary"), file=self.out)
        header = f"{'session':<8}{'agent':<10}{'turns':>6}{'events':>8}{'tools':>6}"
        header += f"{'tokens':>9}{'cost':>9}  decisions"
        print(header, file=self.out)
        for session_id, tally in tallies.items():
            decided = ", ".join(f"{who}×{n}" for who, n in sorted(tally.decisions.items()))
            print(
                f"{session_id:<8}{tally.agent:<10}{tally.turns:>6}{tally.events:>8}"
                f"{tally.tools:>6}{tally.tokens:>9,}{'$' + format(tally.cost, '.4f'):>9}  "
                f"{decided or '-'}",
                file=self.out,
            )
