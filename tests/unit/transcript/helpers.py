"""Small builders for transcript tests: a session's records without a session."""

from __future__ import annotations

from pathlib import Path

from corral.pipeline.events import (
    AgentDetails,
    AgentInstallation,
    Completed,
    Event,
    EventKind,
    InstallationSource,
    MessageEnded,
    PromptOrigin,
    SessionInfo,
    SessionStatus,
    StatusChanged,
    SystemTime,
    TextDelta,
    TurnContext,
    TurnEnded,
    TurnStarted,
)
from corral.pipeline.records import Closed, CloseReason, Opened
from corral.sinks.transcript import TranscriptWriter, WriterSettings

AGENT = AgentInstallation(
    id="mock", name="Mock agent", executable_path="(built in)", source=InstallationSource.PINNED
)
T0 = 1_750_000_000 * 10**9


def at(offset: int = 0) -> SystemTime:
    return SystemTime.from_ns(T0 + offset * 10**6)


def opened(session_id: str = "s1") -> Opened:
    info = SessionInfo(id=session_id, agent=AGENT, details=AgentDetails(version="mock-1"))
    return Opened(info=info, at=at(), dir="/work")


def event(
    sequence: int, kind: EventKind, *, turn: str | None = "t1", **extensions: object
) -> Event:
    return Event(
        sequence=sequence,
        session_id="s1",
        kind=kind,
        occurred_at=at(sequence),
        turn_info=None if turn is None else TurnContext(id=turn),
        extensions=dict(extensions),
    )


def turn(first: int, text: str, *, message: str = "m1", prompt: str = "p1") -> list[Event]:
    """One prompted turn's events, sequence `first` onwards."""
    return [
        event(first, TurnStarted(PromptOrigin(prompt))),
        event(first + 1, StatusChanged(SessionStatus.WORKING), turn=None),
        event(first + 2, TextDelta(message_id=message, text=text)),
        event(first + 3, MessageEnded(message)),
        event(first + 4, TurnEnded(stop=Completed())),
        event(first + 5, StatusChanged(SessionStatus.IDLE), turn=None),
    ]


def closed(events: int, turns: int = 1, reason: str = "closed") -> Closed:
    return Closed(
        session_id="s1", reason=CloseReason(reason), at=at(10_000), events=events, turns=turns
    )


def writer(path: Path, **settings: object) -> TranscriptWriter:
    return TranscriptWriter(
        path=path,
        transcript_id=path.name.removesuffix(".jsonl"),
        settings=WriterSettings(corral_version="0.1.0", **settings),  # type: ignore[arg-type]
    )
