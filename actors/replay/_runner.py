"""Replay: a recorded session, run through a real engine, as records.

```
ReplayItem* ─► [replay] ─► Engine (fake clock) ─► Opened, Event*, Prompted, Decision*, ..., Closed
```

A reader of an agent's own transcript yields `PromptSent` and
`DriverEvent`s in file order (a reader of corral's wire recordings also
`AnswerSent`: the app's answers, given to the engine as the app's).
`replay` feeds them to a real `Engine`, so an imported session gets
exactly the records (`Opened`, `Prompted`, the
session's end), turns, status changes, request records and sequence
numbers a live session would have produced from the same wire: the engine
makes them all, the runner only drains them. The agent here is the file,
so the runner plays its part of the driver contract: a `StartTurn` is
acknowledged at once (`TurnBegan`), and every other command is dropped
(nobody listens).

Time: the engine's monotonic clock is fake and stands still, so no quiet
window or stall warning fires between two lines of a file. Wall time
(`occurred_at`) is the session's start, then each prompt's `at_ns` when
the transcript has one (never going backwards). A prompt that arrives
while the previous turn is still open, and the end of the file, end that
turn as a live session with no turn-end signal would: `Completed` with
source `Inferred`. The session then closes (`Closed`, reason `closed`),
or fails if the file says the agent exited or the wire failed.

Pure and synchronous: items in, records out; no I/O.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterable, Iterator

import attrs

from ...pipeline.driver import (
    AnswerSent,
    Handshake,
    PromptSent,
    ReplayItem,
    StartTurn,
    TurnBegan,
    TurnFinished,
)
from ...pipeline.errors import CorralError
from ...pipeline.events import (
    AgentDetails,
    AgentInstallation,
    Completed,
    CompletionSource,
    InstallationSource,
)
from ...pipeline.records import SinkItem
from ..engine import Engine, EngineSettings

__all__ = ["ReplaySession", "imported_installation", "replay"]


@attrs.frozen(kw_only=True)
class ReplaySession:
    session_id: str
    agent: AgentInstallation
    started_ns: int
    details: AgentDetails = attrs.field(factory=AgentDetails)
    dir: str = ""
    title: str | None = None
    resume_token: str | None = None


def imported_installation(agent_id: str, name: str | None = None) -> AgentInstallation:
    return AgentInstallation(
        id=agent_id,
        name=name or agent_id,
        executable_path="(imported)",
        source=InstallationSource.PINNED,
    )


class _Clock:
    """The engine's clocks during a replay: monotonic stands still, wall follows the file."""

    def __init__(self, wall_ns: int) -> None:
        self.wall_ns = wall_ns

    def monotonic(self) -> float:
        return 0.0

    def wall(self) -> int:
        return self.wall_ns


class _Replay:
    def __init__(self, session: ReplaySession, settings: EngineSettings | None) -> None:
        self.clock = _Clock(session.started_ns)
        self.engine = Engine(
            session_id=session.session_id,
            agent=session.agent,
            handshake=Handshake(
                details=session.details,
                resume_token=session.resume_token,
                title=session.title,
                reliable_turn_end=True,
            ),
            clock=self.clock.monotonic,
            wall_clock_ns=self.clock.wall,
            session_dir=session.dir,
            settings=settings,
        )

    def drain(self) -> Iterator[SinkItem]:
        """Everything the engine produced, acknowledging each turn it starts."""
        engine = self.engine
        while engine.outbox or engine.to_driver:
            while engine.outbox:
                yield engine.outbox.popleft()
            while engine.to_driver:
                if isinstance(engine.to_driver.popleft(), StartTurn):
                    engine.on_driver_event(TurnBegan())

    def prompt(self, sent: PromptSent) -> Iterator[SinkItem]:
        if sent.at_ns is not None:
            self.clock.wall_ns = max(self.clock.wall_ns, sent.at_ns)
        yield from self.end_open_turn()
        if self.engine.finished:
            return
        self.engine.prompt(sent.text)  # idle, so Started at once; `Prompted` first
        yield from self.drain()

    def answer(self, sent: AnswerSent) -> Iterator[SinkItem]:
        """The app's recorded answer, if its request is still open (a policy may have closed it)."""
        with contextlib.suppress(CorralError):
            self.engine.answer(sent.request_id, sent.answer)
        yield from self.drain()

    def end_open_turn(self) -> Iterator[SinkItem]:
        engine = self.engine
        if engine.turn is not None and not engine.finished:
            engine.on_driver_event(TurnFinished(stop=Completed(CompletionSource.INFERRED)))
            yield from self.drain()

    def finish(self) -> Iterator[SinkItem]:
        yield from self.end_open_turn()
        engine = self.engine
        if not engine.finished:
            engine.close()
        engine.finish()  # the session error, if the file says it failed, then `Closed`
        yield from self.drain()


def replay(
    items: Iterable[ReplayItem],
    *,
    session: ReplaySession,
    settings: EngineSettings | None = None,
) -> Iterator[SinkItem]:
    """The records a live session would have produced from `items`, in order."""
    run = _Replay(session, settings)
    yield from run.drain()  # `Opened`
    for item in items:
        if isinstance(item, PromptSent):
            yield from run.prompt(item)
            continue
        if run.engine.finished:
            continue  # after the agent exited nothing more belongs to the session
        if isinstance(item, AnswerSent):
            yield from run.answer(item)
            continue
        run.engine.on_driver_event(item)
        yield from run.drain()
    yield from run.finish()
