"""Backpressure (issue 2): a stalled sink stops the source, memory stays bounded,
nothing is lost; commands are never blocked by a full event path."""

from __future__ import annotations

import asyncio

from corral.actors.handle import Session
from corral.actors.runtime import Runtime, RuntimeSettings
from corral.actors.session import ActorSettings
from corral.pipeline.events import (
    Event,
    PermissionAnswer,
    PermissionChoice,
    RequestClosed,
    SessionStatus,
    TextDelta,
)
from corral.sources.mock import parse_script

from tests.support.waiting import until

from .helpers import GateSink, text_turn

SMALL = RuntimeSettings(actor=ActorSettings(driver_capacity=4, events_capacity=8, sink_capacity=8))
TOTAL = 3000
ASK = {
    "Emit": {
        "RequestOpened": {
            "Permission": {
                "id": "r1",
                "tool": {
                    "id": "tool1",
                    "kind": "Execute",
                    "title": "make",
                    "status": "Pending",
                    "input": {"Command": {"command": "make", "cwd": None}},
                    "diffs": [],
                    "locations": [],
                },
                "options": ["AllowOnce", "DenyOnce"],
            }
        }
    }
}


def every_stage_blocked(session: Session) -> bool:
    """The agent, the engine loop and the fan-out each wait on a full channel."""
    ends = ("/driver", "/engine", "/gate")
    channels = [c for c in session.channels() if c.name.endswith(ends)]
    assert len(channels) == 3
    return all(
        stats.depth == stats.capacity and stats.waiting_senders == 1
        for stats in (channel.statistics() for channel in channels)
    )


def others_caught_up(session: Session) -> bool:
    """Every sink but the stalled gate (the app's, the transcript) has read what reached it."""
    return all(
        channel.statistics().depth == 0
        for channel in session.channels()[2:]  # the sinks'
        if not channel.name.endswith("/gate")
    )


def traffic(session: Session) -> list[tuple[int, int]]:
    return [(c.statistics().sent_total, c.statistics().received_total) for c in session.channels()]


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
            try:
                await until(lambda: every_stage_blocked(session) and others_caught_up(session))
                produced = session.events_made
                # Bounded: what the engine produced is at most what the channels hold.
                assert produced <= 8 + 8 + 8 + 4 + 2
                # Paused, not slow: with every stage blocked (and the other sinks
                # done with what they had), letting every ready task run many times
                # over moves nothing through any channel.
                before = traffic(session)
                for _ in range(200):
                    await asyncio.sleep(0)
                assert traffic(session) == before and session.events_made == produced
            finally:
                gate.gate.set()  # a failure above must not leave the session stalled
            await until(lambda: any(type(e.kind).__name__ == "TurnEnded" for e in app_events))
            await session.close()
        texts = [e for e in app_events if isinstance(e.kind, TextDelta)]
        assert len(texts) == TOTAL
        sequences = [e.sequence for e in app_events]
        assert sequences == list(range(1, len(sequences) + 1))
        assert [e.sequence for e in gate.events()] == sequences


async def test_cancel_answer_and_close_are_not_blocked_by_a_full_event_path() -> None:
    gate = GateSink()
    text = {"Emit": {"TextDelta": {"message_id": "m1", "text": "x"}}}
    flood = {"Repeat": {"times": TOTAL, "steps": [text]}}
    script = {
        "turns": [[ASK, flood, "AwaitAnswer", {"End": {"Completed": {"source": "Protocol"}}}]]
    }
    async with Runtime(mock=parse_script(script), settings=SMALL) as rt:
        session = await rt.open("mock", dir=".", extra_sinks=[gate])
        app_events: list[Event] = []
        async with asyncio.TaskGroup() as tasks:
            tasks.create_task(drain(session, app_events))
            await session.prompt("go")
            try:
                asking = SessionStatus.NEEDS_INPUT
                await until(lambda: session.status is asking and every_stage_blocked(session))
                async with asyncio.timeout(2):
                    await session.answer("r1", PermissionAnswer(PermissionChoice.ALLOW_ONCE))
                    await session.prompt("queued behind")
                    await session.cancel(clear_queue=True)
                    await session.close()
            finally:
                gate.gate.set()  # a failure above must not leave the session stalled
        names = [type(e.kind).__name__ for e in app_events]
        assert names.count("TurnStarted") == names.count("TurnEnded") == 1
        closed = [e for e in app_events if isinstance(e.kind, RequestClosed)]
        assert [e.extensions["corral/decision"]["decided_by"] for e in closed] == ["app"]
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
            try:
                driver_events = stalled.channels()[0]
                await until(lambda: driver_events.statistics().waiting_senders == 1)
                async with asyncio.timeout(10):
                    await other.prompt("go too")
                    await until(
                        lambda: any(type(e.kind).__name__ == "TurnEnded" for e in other_events)
                    )
                    await other.close()
            finally:
                gate.gate.set()  # a failure above must not leave the session stalled
            await stalled.close()
        assert sum(isinstance(e.kind, TextDelta) for e in other_events) == TOTAL
