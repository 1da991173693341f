"""Many sessions streaming at once take turns: each pass of the event loop holds a
bounded number of their batches, so timers and the app's commands are not kept
waiting behind all of them (the scale phase of `corral bench` measures the lag)."""

from __future__ import annotations

from collections import Counter

import pytest
from corral.actors import _turnstile
from corral.actors.engine import Engine
from corral.actors.runtime import Runtime
from corral.pipeline.channels import Channel
from corral.pipeline.driver import DriverEvent
from corral.pipeline.records import SinkItem
from corral.sources.mock import parse_script

from tests.support.passes import Passes

SESSIONS = 60
EVENTS = 400


class _Drain:
    """An app that reads every record as it comes."""

    name = "drain"

    async def run(self, items_in: Channel[SinkItem]) -> None:
        async for _ in items_in:
            pass


async def test_a_pass_of_the_loop_holds_a_bounded_number_of_batches(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    width = 4
    monkeypatch.setattr(_turnstile, "WIDTH", width)
    batches_per_pass: Counter[int] = Counter()
    clock: list[Passes] = []
    handle = Engine.on_driver_events

    def counted(engine: Engine, events: list[DriverEvent]) -> None:
        if clock:
            batches_per_pass[clock[0].now] += 1
        handle(engine, events)

    monkeypatch.setattr(Engine, "on_driver_events", counted)
    step = {"Emit": {"TextDelta": {"message_id": "m1", "text": "token "}}}
    script = parse_script(
        {
            "turns": [
                [
                    {"Repeat": {"times": EVENTS, "steps": [step]}},
                    {"End": {"Completed": {"source": "Protocol"}}},
                ]
            ]
        }
    )
    async with Runtime(mock=script, transcripts=False) as rt:
        sessions = [await rt.open("mock", dir=".", app_sink=_Drain()) for _ in range(SESSIONS)]
        clock.append(Passes())
        for session in sessions:
            await session.prompt("go")
        for session in sessions:
            await session.wait_idle()
        clock[0].stop()
    assert sum(batches_per_pass.values()) >= SESSIONS * EVENTS // 32  # they all streamed
    # Turns go to the actors and the drivers alike (at most `width` a pass); an
    # actor a driver's share woke may take what is there without a turn.
    assert max(batches_per_pass.values()) <= 2 * width
