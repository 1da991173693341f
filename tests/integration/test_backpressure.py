"""Backpressure (issue 2): a stalled sink stops the source, memory stays bounded,
nothing is lost; commands are never blocked by a full event path."""

from __future__ import annotations

import asyncio

from corral.actors.runtime import Runtime, RuntimeSettings
from corral.actors.session import ActorSettings
from corral.pipeline.events import Event, TextDelta
from corral.sources.mock import parse_script

from .helpers import GateSink, text_turn, until

SMALL = RuntimeSettings(actor=ActorSettings(driver_capacity=4, events_capacity=8, sink_capacity=8))
TOTAL = 3000


async def drain(session: object, into: list[Event]) -> None:
    async for event in session.events():  # type: ignore[attr-defined]
        into.append(event)


async def test_a_stalled_sink_holds_every_channel_at_capacity_and_pauses_the_agent() -> None:
    gate = GateSink()
    async with Runtime(mock=parse_script(text_turn(TOTAL)), settings=SMALL) as rt:
        session = await rt.open("mock", dir=".", extra_sinks=[gate])
        app_events: list[Event] = []
        async with asyncio.TaskGroup() as tasks:
            tasks.create_task(drain(session, app_events))
            await session.prompt("go")
            actor = session.actor
            await until(lambda: actor.driver_events.statistics().waiting_senders == 1)
            produced = actor.engine.sequence
            for channel in (actor.driver_events, actor.events_out, actor.sink_channels[1]):
                stats = channel.statistics()
                assert stats.depth == stats.capacity, stats
            # Bounded: what the engine produced is at most what the channels hold.
            assert produced <= 8 + 8 + 8 + 4 + 2
            await asyncio.sleep(0.05)  # the agent really is paused, not just slow
            assert actor.engine.sequence == produced
            gate.gate.set()
            await until(lambda: any(type(e.kind).__name__ == "TurnEnded" for e in app_events))
            await session.close()
        texts = [e for e in app_events if isinstance(e.kind, TextDelta)]
        assert len(texts) == TOTAL
        sequences = [e.sequence for e in app_events]
        assert sequences == list(range(1, len(sequences) + 1))
        assert [e.sequence for e in gate.events()] == sequences


async def test_cancel_answer_and_close_are_not_blocked_by_a_full_event_path() -> None:
    gate = GateSink()
    script = text_turn(TOTAL)
    async with Runtime(mock=parse_script(script), settings=SMALL) as rt:
        session = await rt.open("mock", dir=".", extra_sinks=[gate])
        app_events: list[Event] = []
        async with asyncio.TaskGroup() as tasks:
            tasks.create_task(drain(session, app_events))
            await session.prompt("go")
            actor = session.actor
            await until(lambda: actor.driver_events.statistics().waiting_senders == 1)
            async with asyncio.timeout(2):
                await session.prompt("queued behind")
                await session.cancel(clear_queue=True)
                await session.close()
            gate.gate.set()
        names = [type(e.kind).__name__ for e in app_events]
        assert names.count("TurnStarted") == names.count("TurnEnded") == 1
        assert names[-1] == "StatusChanged"


async def test_one_stalled_session_does_not_stall_the_commands_of_another() -> None:
    gate = GateSink()
    async with Runtime(mock=parse_script(text_turn(TOTAL)), settings=SMALL) as rt:
        stalled = await rt.open("mock", dir=".", extra_sinks=[gate])
        other = await rt.open("mock", dir=".")
        stalled_events: list[Event] = []
        other_events: list[Event] = []
        async with asyncio.TaskGroup() as tasks:
            tasks.create_task(drain(stalled, stalled_events))
            tasks.create_task(drain(other, other_events))
            await stalled.prompt("go")
            await until(lambda: stalled.actor.driver_events.statistics().waiting_senders == 1)
            async with asyncio.timeout(10):
                await other.prompt("go too")
                await until(lambda: any(type(e.kind).__name__ == "TurnEnded" for e in other_events))
                await other.close()
            gate.gate.set()
            await stalled.close()
        assert sum(isinstance(e.kind, TextDelta) for e in other_events) == TOTAL
