"""Telemetry from the sources: agent processes and the health of their wires.

`ProcessObserver` implements `pipeline.telemetry.Observer`. Drivers call it
through their `SessionTelemetry` as things happen (a process started or
exited, a line that was not JSON, a frame of an unknown type, one raw wire
line). Every call is a few dictionary updates: it runs on the driver's own
task, in the middle of reading the agent's output.

Raw wire lines name their session, not their agent; the observer learns
each session's agent label when its metrics sink is made (`bind`) and
forgets it when the session ends (`unbind`).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from ._families import Families
from ._labels import OTHER, exit_kind

__all__ = ["ProcessObserver"]

_DECODE_KINDS = frozenset({"not_json", "oversized", "bad_shape"})
_DIRECTIONS = frozenset({"in", "out"})


class ProcessObserver:
    def __init__(self, families: Families, agents: Callable[[str], str]) -> None:
        self._m = families
        self._agents = agents
        self._session_agents: dict[str, str] = {}

    def bind(self, session_id: str, agent_label: str) -> None:
        self._session_agents[session_id] = agent_label

    def unbind(self, session_id: str) -> None:
        self._session_agents.pop(session_id, None)

    def process_started(self, agent: str) -> None:
        label = (self._agents(agent),)
        self._m.process_starts.inc(label)
        self._m.processes_running.add(label, 1)

    def process_exited(self, agent: str, status: str) -> None:
        label = self._agents(agent)
        self._m.process_exits.inc((label, exit_kind(status)))
        running = self._m.processes_running.values.get((label,), 0.0)
        if running > 0:
            self._m.processes_running.add((label,), -1)

    def process_restarted(self, agent: str) -> None:
        self._m.process_restarts.inc((self._agents(agent),))

    def decode_error(self, agent: str, kind: str) -> None:
        kind_label = kind if kind in _DECODE_KINDS else OTHER
        self._m.decode_errors.inc((self._agents(agent), kind_label))

    def unknown_frame(self, agent: str) -> None:
        self._m.unknown_frames.inc((self._agents(agent),))

    def wire_line(self, session_id: str, direction: str, line: bytes) -> None:
        self.wire_lines(session_id, direction, (line,))

    def wire_lines(self, session_id: str, direction: str, lines: Sequence[bytes]) -> None:
        """A batch of raw lines (a read's worth), counted at once."""
        agent = self._session_agents.get(session_id, "unknown")
        labels = (agent, direction if direction in _DIRECTIONS else OTHER)
        self._m.wire_lines.inc(labels, float(len(lines)))
        self._m.wire_bytes.inc(labels, float(sum(map(len, lines))))
