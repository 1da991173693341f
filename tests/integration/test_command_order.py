"""What the agent said before an app's command comes before the command's effect.

A driver hands its events to the actor through a channel; the app's
commands reach the engine directly. An event already in that channel when
a prompt arrives was said by the agent before the prompt (a recording of
the wire has it first, and `corral import` of that recording puts it
first), so the live session must too: the engine takes it in before the
command. Here the driver's channel is given an event and the app's prompt
follows in the same step of the loop, so the actor has had no chance to
take the event on its own: without the rule the prompt's `TurnStarted`
comes first.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable

from corral.actors.handle import Session
from corral.actors.runtime import Runtime
from corral.pipeline.driver import (
    DriverCommand,
    DriverEvent,
    Emitted,
    EventSink,
    Handshake,
    StartTurn,
    TurnBegan,
    TurnFinished,
)
from corral.pipeline.events import (
    AgentDetails,
    Completed,
    Delivery,
    Diagnostic,
    DiagnosticLevel,
    Event,
    Started,
    TextDelta,
    TurnEnded,
    TurnStarted,
)

from tests.support.waiting import until

from .helpers import catalog_of


class TurnByTurnDriver:
    """Answers each prompt with a text and the turn's end (the first turn's end left
    to the test, if asked)."""

    def __init__(self, *, first_left_open: bool = False) -> None:
        self.first_left_open = first_left_open
        self._prompts: asyncio.Queue[str] = asyncio.Queue()

    async def start(self, tasks: asyncio.TaskGroup) -> Handshake:
        return Handshake(details=AgentDetails())

    async def run(self, events_out: EventSink) -> None:
        while True:
            text = await self._prompts.get()
            await events_out.send(TurnBegan())
            await events_out.send(Emitted(kind=TextDelta(message_id="m1", text=text)))
            if self.first_left_open:
                self.first_left_open = False
            else:
                await events_out.send(TurnFinished(stop=Completed()))

    async def send(self, command: DriverCommand) -> None:
        if isinstance(command, StartTurn):
            self._prompts.put_nowait(command.text)

    async def stop(self, grace: float) -> None:
        pass


def _handed_over(session: Session, event: DriverEvent) -> None:
    """The driver has handed `event` over; the actor has not run since."""
    assert session.channels()[0].try_send(event)


def _kinds(events: list[Event], *wanted: type) -> list[object]:
    return [e.kind for e in events if isinstance(e.kind, wanted)]


async def _drain(session: Session, into: list[Event]) -> None:
    async for event in session.events():
        into.append(event)


def _ended(events: list[Event], turns: int) -> bool:
    return len(_kinds(events, TurnEnded)) >= turns


async def _two_prompts(
    driver: TurnByTurnDriver, between: DriverEvent, until_first: Callable[[list[Event]], bool]
) -> tuple[Delivery, list[Event]]:
    """Prompt, wait `until_first`, hand `between` over and prompt again at once; the
    second prompt's delivery, and every event once its text is out."""
    async with Runtime(catalog=catalog_of(driver, "turn-by-turn"), transcripts=False) as rt:
        session = await rt.open("turn-by-turn", dir=".")
        seen: list[Event] = []
        async with asyncio.timeout(30), asyncio.TaskGroup() as tasks:
            tasks.create_task(_drain(session, seen))
            await session.prompt("one")
            await until(lambda: until_first(seen))
            _handed_over(session, between)
            delivery = await session.prompt("two")
            await until(lambda: len(_kinds(seen, TextDelta)) == 2 and _ended(seen, 2))
            await session.close()
    return delivery, seen


async def test_what_the_agent_said_between_turns_comes_before_the_next_prompt() -> None:
    note = Diagnostic(level=DiagnosticLevel.INFO, message="between turns")
    delivery, seen = await _two_prompts(
        TurnByTurnDriver(), Emitted(kind=note), lambda seen: _ended(seen, 1)
    )
    assert isinstance(delivery.kind, Started)
    kinds = _kinds(seen, TurnEnded, TurnStarted, Diagnostic, TextDelta)
    first_end = next(i for i, kind in enumerate(kinds) if isinstance(kind, TurnEnded))
    after = [type(kind) for kind in kinds[first_end + 1 :]]
    assert after == [Diagnostic, TurnStarted, TextDelta, TurnEnded], after
    assert note in kinds


async def test_a_prompt_after_a_turn_the_agent_has_ended_starts_at_once() -> None:
    delivery, seen = await _two_prompts(
        TurnByTurnDriver(first_left_open=True),
        TurnFinished(stop=Completed()),  # the agent ended the first turn
        lambda seen: bool(_kinds(seen, TextDelta)),
    )
    # Not queued behind a turn that is over: the engine knew it was over.
    assert isinstance(delivery.kind, Started), delivery
    turns = [type(kind) for kind in _kinds(seen, TurnStarted, TurnEnded)]
    assert turns == [TurnStarted, TurnEnded] * 2
