"""An engine driven directly, with a fake clock, for policy tests.

The engine is sans-IO: requests enter through `on_driver_event`, the policy
decides or forwards, deadlines pass when the test moves the clock, and what
the engine produced (events, decisions, commands to the driver) is drained
into lists. Every event is checked against the line-protocol schema.
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path

from corral.actors.engine import Engine
from corral.pipeline.commands import PermissionMode
from corral.pipeline.driver import Handshake, RequestAsked, TurnBegan
from corral.pipeline.events import (
    AgentDetails,
    AgentInstallation,
    Capabilities,
    Capability,
    Event,
    InstallationSource,
)
from corral.pipeline.policy import Policy
from corral.pipeline.records import Decision

from tests.support.schema import check

from .support import permission

__all__ = ["Clock", "Harness"]


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


class Harness:
    """One engine, its clock, and what it produced so far."""

    def __init__(
        self,
        rules: Policy,
        session: Path,
        *,
        show: bool = False,
        mode: PermissionMode = PermissionMode.ASK,
    ) -> None:
        self.clock = Clock()
        self.engine = Engine(
            session_id="s1",
            agent=AgentInstallation(
                id="mock", name="Mock", executable_path="/bin/mock", source=InstallationSource.PATH
            ),
            handshake=Handshake(
                details=AgentDetails(
                    capabilities=Capabilities(
                        features=frozenset({Capability.PERMISSIONS, Capability.QUESTIONS})
                    )
                )
            ),
            clock=self.clock,
            wall_clock_ns=lambda: 1_700_000_000_000_000_000,
            session_dir=str(session),
            mode=mode,
            policy=rules,
            show_auto_decisions=show,
        )
        self.events: list[Event] = []
        self.decisions: list[Decision] = []
        self.sent: list[object] = []

    def drain(self) -> None:
        while self.engine.outbox:
            item = self.engine.outbox.popleft()
            if isinstance(item, Event):
                check("line-protocol.schema.json", "Event", item.to_wire())
                self.events.append(item)
            elif isinstance(item, Decision):
                self.decisions.append(item)
        while self.engine.to_driver:
            self.sent.append(self.engine.to_driver.popleft())

    def start_turn(self) -> None:
        self.engine.prompt("go")
        self.engine.on_driver_event(TurnBegan())
        self.drain()

    def ask(self, command: str, request_id: str = "r1") -> None:
        self.engine.on_driver_event(
            RequestAsked(
                request=permission(
                    "Execute", command=command, request_id=request_id, tool_id=request_id
                )
            )
        )
        self.drain()

    def advance(self, seconds: float) -> None:
        self.clock.now += seconds
        deadline = self.engine.next_deadline()
        if deadline is not None and deadline <= self.clock.now:
            self.engine.on_time()
        self.drain()

    def kinds(self, kind: type) -> list[Event]:
        return [event for event in self.events if isinstance(event.kind, kind)]

    def one_decision_per_request(self) -> dict[str, Decision]:
        counts = Counter(decision.request_id for decision in self.decisions)
        assert all(count == 1 for count in counts.values()), counts
        return {decision.request_id: decision for decision in self.decisions}
