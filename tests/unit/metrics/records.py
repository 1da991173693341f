"""A session's record stream, written by hand for the metrics tests.

`Stream` builds the records a SessionActor would send a sink: `Opened`,
events with gapless sequence numbers and timestamps from a settable clock,
`Decision`s, `SessionFailed`, `Closed`. Every event is checked against the
line-protocol schema as it is made.
"""

from __future__ import annotations

from typing import Any

from corral.pipeline.errors import CorralError, ErrorKind
from corral.pipeline.events import (
    AgentDetails,
    AgentInstallation,
    Completed,
    ContextUsage,
    Event,
    EventKind,
    InstallationSource,
    PermissionChoice,
    PermissionRequest,
    PromptOrigin,
    RequestClosed,
    RequestOpened,
    SessionInfo,
    SessionStatus,
    StatusChanged,
    StopReason,
    SystemTime,
    ToolKind,
    ToolStatus,
    ToolUpdate,
    ToolUpdated,
    TurnContext,
    TurnEnded,
    TurnStarted,
)
from corral.pipeline.records import (
    Closed,
    Decision,
    Opened,
    SessionFailed,
    SinkItem,
    decided_by_from,
)

from tests.support.schema import check

__all__ = ["Stream", "tool"]

START = 1_700_000_000.0


def tool(tool_id: str, status: ToolStatus, kind: ToolKind = ToolKind.EXECUTE) -> ToolUpdate:
    return ToolUpdate(id=tool_id, kind=kind, title=f"{kind.value} call", status=status)


def _time(seconds: float) -> SystemTime:
    return SystemTime.from_ns(round(seconds * 1e9))


class Stream:
    def __init__(self, session_id: str = "s1", agent: str = "mock") -> None:
        self.session_id = session_id
        self.agent = agent
        self.now = START
        self.records: list[SinkItem] = []
        self._sequence = 0
        self._turn: str | None = None
        self._turns = 0

    def at(self, offset: float) -> Stream:
        """Move the clock to START + offset seconds."""
        self.now = START + offset
        return self

    def opened(self) -> Stream:
        installation = AgentInstallation(
            id=self.agent,
            name=self.agent,
            executable_path="(built in)",
            source=InstallationSource.PINNED,
        )
        info = SessionInfo(id=self.session_id, agent=installation, details=AgentDetails())
        self.records.append(Opened(info=info, at=_time(self.now)))
        return self

    def event(self, kind: EventKind, *, in_turn: bool = True, **extensions: Any) -> Stream:
        self._sequence += 1
        turn = self._turn if in_turn else None
        event = Event(
            sequence=self._sequence,
            session_id=self.session_id,
            kind=kind,
            occurred_at=_time(self.now),
            turn_info=None if turn is None else TurnContext(id=turn),
            extensions=extensions,
        )
        check("line-protocol.schema.json", "Event", event.to_wire())
        self.records.append(event)
        return self

    def turn_started(self) -> Stream:
        self._turns += 1
        self._turn = f"t{self._turns}"
        self.event(StatusChanged(SessionStatus.WORKING))
        return self.event(TurnStarted(PromptOrigin(f"p{self._turns}")))

    def turn_ended(self, stop: StopReason | None = None) -> Stream:
        self.event(TurnEnded(stop=stop or Completed()))
        self._turn = None
        return self.event(StatusChanged(SessionStatus.IDLE), in_turn=False)

    def tool(self, tool_id: str, status: ToolStatus, kind: ToolKind = ToolKind.EXECUTE) -> Stream:
        return self.event(ToolUpdated(tool(tool_id, status, kind)))

    def usage(
        self, *, cost: float | None = None, model: str | None = None, **tokens: int
    ) -> Stream:
        extensions: dict[str, Any] = {"corral/tokens": tokens}
        if model is not None:
            extensions["corral/model"] = model
        kind = ContextUsage(used_tokens=1000, window_tokens=10000, cost_usd=cost)
        self._sequence += 1
        event = Event(
            sequence=self._sequence,
            session_id=self.session_id,
            kind=kind,
            occurred_at=_time(self.now),
            extensions=extensions,
        )
        check("line-protocol.schema.json", "Event", event.to_wire())
        self.records.append(event)
        return self

    def permission(
        self, request_id: str, tool_id: str, kind: ToolKind = ToolKind.EXECUTE
    ) -> Stream:
        request = PermissionRequest(
            id=request_id,
            tool=tool(tool_id, ToolStatus.PENDING, kind),
            options=(PermissionChoice.ALLOW_ONCE, PermissionChoice.DENY_ONCE),
        )
        return self.event(RequestOpened(request))

    def decided(
        self,
        request_id: str,
        decision: str,
        decided_by: str,
        waited: float,
        *,
        tool_kind: str | None = "Execute",
        shown: bool = True,
    ) -> Stream:
        if shown:
            self.event(RequestClosed(request_id))
        self.records.append(
            Decision(
                session_id=self.session_id,
                request_id=request_id,
                decision=decision,  # type: ignore[arg-type]  # a test feeds words outside the enum
                decided_by=decided_by_from(decided_by),
                at=_time(self.now),
                waited_seconds=waited,
                tool_kind=tool_kind,
                agent=self.agent,
                turn_id=self._turn,
            )
        )
        return self

    def failed(self, kind: ErrorKind = ErrorKind.PROCESS_EXITED) -> Stream:
        error = CorralError(kind, "the agent died", status="9", stderr="")
        self.records.append(SessionFailed(session_id=self.session_id, error=error))
        return self

    def closed(self, reason: str = "closed") -> Stream:
        self.records.append(
            Closed(
                session_id=self.session_id,
                reason=reason,  # type: ignore[arg-type]  # a test feeds words outside the enum
                at=_time(self.now),
                events=self._sequence,
                turns=self._turns,
            )
        )
        return self
