"""Replaying a recorded wire into a live session, as fast as corral can take it.

`ReplayDriver` is a driver with no process: at the first `StartTurn` it
feeds the recorded bytes, in pipe-sized chunks, through the same sans-IO
reader as the live source (a fresh one per segment) and sends the driver
events on, one batch per chunk, as one turn. What is timed is corral's own cost, not an agent's.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Sequence

from ...pipeline.driver import (
    DriverCommand,
    DriverEvent,
    EventSink,
    Handshake,
    StartTurn,
    TurnBegan,
    TurnFinished,
)
from ...pipeline.events import AgentDetails, Completed
from ._wires import WireReplay

__all__ = ["ReplayDriver"]

CHUNK = 65536  # what one read of a pipe gives at most


class ReplayDriver:
    def __init__(self, segments: Sequence[bytes], wire: Callable[[], WireReplay]) -> None:
        self._segments = segments
        self._wire = wire
        self._go = asyncio.Event()
        self._stopped = asyncio.Event()

    async def start(self, tasks: asyncio.TaskGroup) -> Handshake:
        return Handshake(details=AgentDetails())

    async def run(self, events_out: EventSink) -> None:
        await self._go.wait()
        if self._stopped.is_set():
            return
        await events_out.send(TurnBegan())
        for segment in self._segments:
            wire = self._wire()
            for start in range(0, len(segment), CHUNK):
                await self._forward(wire.feed(segment[start : start + CHUNK]), events_out)
            await self._forward(wire.end(), events_out)
        await events_out.send(TurnFinished(stop=Completed()))
        await self._stopped.wait()

    @staticmethod
    async def _forward(events: list[DriverEvent], events_out: EventSink) -> None:
        # One batch per chunk, as a live source sends a read's worth. The
        # recordings' own turn boundaries fold into the one replayed turn.
        await events_out.send_batch(
            [event for event in events if not isinstance(event, TurnBegan | TurnFinished)]
        )

    async def send(self, command: DriverCommand) -> None:
        if isinstance(command, StartTurn):
            self._go.set()

    async def stop(self, grace: float) -> None:
        self._stopped.set()
        self._go.set()
