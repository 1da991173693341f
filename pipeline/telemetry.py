"""What sources report besides events: process lifecycle, wire health, raw lines.

Drivers receive a `SessionTelemetry` bound to their session and agent and
call it as things happen; observers (the metrics sink, the raw wire
recorder) implement `Observer`. With no observer every call is a no-op,
so a driver never needs to ask whether anyone listens.

Conventions that ride on events instead (so they reach every sink); a
driver fills typed fields of `Emitted` (`pipeline/driver.py`) and the
engine writes them as these `extensions` keys where it emits the event
(`pipeline/extensions.py` writes and reads every `corral/*` key):
- unknown frames: an Info `Diagnostic` with the raw frame under
  `extensions["<source>/raw_frame"]` and `extensions["corral/unknown_frame"]`
  set to the frame's type (`Emitted.unknown_frame`);
- undecodable lines: a Warning `Diagnostic` with
  `extensions["corral/decode_error"]` = "not_json" | "oversized" | "bad_shape"
  (`Emitted.problem`, a `ProblemKind`);
- token usage: `ContextUsage` with `extensions["corral/tokens"]` =
  {"input", "output", "cache_read", "cache_write", "reasoning"} (ints, any
  subset; `Emitted.tokens`, a `TokenCount`) counting the tokens used *since
  the previous report* (the engine adds up the reports of a turn), and
  optionally `extensions["corral/model"]` (`Emitted.model`);
  `ContextUsage.cost_usd` is the session's running total (a drop is a reset).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

__all__ = ["NULL_TELEMETRY", "Observer", "SessionTelemetry", "Telemetry"]


class Observer(Protocol):
    def process_started(self, agent: str) -> None: ...

    def process_exited(self, agent: str, status: str) -> None: ...

    def process_restarted(self, agent: str) -> None: ...

    def decode_error(self, agent: str, kind: str) -> None: ...

    def unknown_frame(self, agent: str) -> None: ...

    def wire_line(self, session_id: str, direction: str, line: bytes) -> None:
        """One raw line of the agent's wire; direction "in" (from the agent) or "out"."""
        ...


class SessionTelemetry:
    """Telemetry bound to one session and agent; what drivers call."""

    __slots__ = ("_observers", "agent", "records_wire", "session_id")

    def __init__(self, observers: Sequence[Observer], session_id: str, agent: str) -> None:
        self._observers = tuple(observers)
        self.session_id = session_id
        self.agent = agent
        self.records_wire = bool(self._observers)

    def process_started(self) -> None:
        for observer in self._observers:
            observer.process_started(self.agent)

    def process_exited(self, status: str) -> None:
        for observer in self._observers:
            observer.process_exited(self.agent, status)

    def process_restarted(self) -> None:
        for observer in self._observers:
            observer.process_restarted(self.agent)

    def decode_error(self, kind: str) -> None:
        for observer in self._observers:
            observer.decode_error(self.agent, kind)

    def unknown_frame(self) -> None:
        for observer in self._observers:
            observer.unknown_frame(self.agent)

    def wire_line(self, direction: str, line: bytes) -> None:
        for observer in self._observers:
            observer.wire_line(self.session_id, direction, line)

    def wire_lines(self, direction: str, lines: Sequence[bytes]) -> None:
        """Several raw lines, in order: to an observer's `wire_lines` where it has
        one (it takes them as one batch), else line by line."""
        for observer in self._observers:
            many = getattr(observer, "wire_lines", None)
            if many is not None:
                many(self.session_id, direction, lines)
                continue
            for line in lines:
                observer.wire_line(self.session_id, direction, line)


class Telemetry:
    """The Runtime's observers; hands out per-session views."""

    def __init__(self, observers: Sequence[Observer] = ()) -> None:
        self.observers = list(observers)

    def add(self, observer: Observer) -> None:
        self.observers.append(observer)

    def for_session(self, session_id: str, agent: str) -> SessionTelemetry:
        return SessionTelemetry(self.observers, session_id, agent)


NULL_TELEMETRY = SessionTelemetry((), "", "")
