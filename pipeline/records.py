"""What flows from a session's engine to its sinks.

Sinks see one ordered stream per session: `Opened` first, then `Event`s
(gapless `sequence`) interleaved with `Prompted` and `Decision` records,
then at most one `SessionFailed`, then exactly one `Closed`. The line sink
writes events, the session error and the `closed` line; the transcript
keeps everything; metrics count what they know. Prompts and decisions carry
no sequence number: they are not events of the line protocol (the app sent
the prompt, and hears about it as `TurnStarted` or a queue position), so
recording one never makes a gap and the app never sees one.
"""

from __future__ import annotations

import enum

import attrs

from .errors import CorralError
from .events import Event, SessionInfo, SystemTime

__all__ = [
    "CloseReason",
    "Closed",
    "DecidedBy",
    "Decider",
    "Decision",
    "Opened",
    "Outcome",
    "PolicyDecider",
    "PolicyPart",
    "Prompted",
    "SessionFailed",
    "SinkItem",
    "decided_by_from",
]


@attrs.frozen(kw_only=True)
class Opened:
    info: SessionInfo
    at: SystemTime
    dir: str = ""


@attrs.frozen(kw_only=True)
class Prompted:
    """The text of a prompt the session accepted, in the order it was sent.

    `prompt_id` is the engine's (`p1`, `p2`, ...), the one `TurnStarted`'s
    origin names.
    """

    session_id: str
    prompt_id: str
    text: str
    at: SystemTime
    attachments: tuple[str, ...] = ()


class Outcome(enum.StrEnum):
    """How a request ended (`Decision.decision`); the value is the wire's word."""

    ALLOW_ONCE = "allow_once"
    ALLOW_ALWAYS = "allow_always"
    DENY_ONCE = "deny_once"
    DENY_ALWAYS = "deny_always"
    ANSWERED = "answered"  # questions
    CANCELLED = "cancelled"
    TIMEOUT = "timeout"


class Decider(enum.StrEnum):
    """Who decided a request, where it was not a policy's rule, guard or mode."""

    APP = "app"
    TIMEOUT = "timeout"
    CANCEL = "cancel"
    TURN_END = "turn_end"
    SHUTDOWN = "shutdown"
    AGENT = "agent"  # the agent withdrew it
    GENERATE = "generate"  # the policy of a `generate` session
    LIMIT = "limit"  # too many requests open at once


class PolicyPart(enum.StrEnum):
    """Which part of a policy decided (`PolicyDecider.part`)."""

    RULE = "rule"
    GUARD = "guard"
    MODE = "mode"


class PolicyDecider(str):
    """A policy's part and its name: `rule:<id>`, `guard:<id>`, `mode:<mode>`.

    A string whose text is the word the wire, the transcript and the metrics
    have always used, as `Decider` is; made and taken apart only here.
    """

    __slots__ = ()

    def __new__(cls, part: PolicyPart, name: str) -> PolicyDecider:
        return super().__new__(cls, f"{part.value}:{name}")

    @property
    def part(self) -> PolicyPart:
        return PolicyPart(self.partition(":")[0])

    @property
    def name(self) -> str:
        return self.partition(":")[2]

    def __reduce__(self) -> tuple[object, tuple[PolicyPart, str]]:
        return PolicyDecider, (self.part, self.name)


DecidedBy = Decider | PolicyDecider
"""Who decided a request: a policy's part, or one of the fixed `Decider`s."""


def decided_by_from(text: str) -> DecidedBy:
    """The decider a record's word names (read back from a file); ValueError if none."""
    part, colon, name = text.partition(":")
    if colon and name and part in PolicyPart.__members__.values():
        return PolicyDecider(PolicyPart(part), name)
    return Decider(text)


@attrs.frozen(kw_only=True)
class Decision:
    """How one request ended: exactly one per request, and who decided it."""

    session_id: str
    request_id: str
    decision: Outcome
    decided_by: DecidedBy
    at: SystemTime
    waited_seconds: float = 0.0
    request_kind: str = "Permission"  # or Question
    tool_kind: str | None = None
    agent: str = ""
    turn_id: str | None = None

    def to_wire(self) -> dict[str, object]:
        return {
            "request_id": self.request_id,
            "decision": str(self.decision),
            "decided_by": str(self.decided_by),
            "waited_seconds": round(self.waited_seconds, 6),
            "request_kind": self.request_kind,
            "tool_kind": self.tool_kind,
        }


@attrs.frozen(kw_only=True)
class SessionFailed:
    session_id: str
    error: CorralError


class CloseReason(enum.StrEnum):
    """Why a session ended (`Closed.reason`), the `closed` line's word."""

    CLOSED = "closed"
    EXITED = "exited"
    FAILED = "failed"
    SHUTDOWN = "shutdown"


@attrs.frozen(kw_only=True)
class Closed:
    session_id: str
    reason: CloseReason
    at: SystemTime
    events: int = 0
    turns: int = 0


SinkItem = Opened | Event | Prompted | Decision | SessionFailed | Closed
