"""Replaying a recorded wire into a live session, as fast as corral can take it.

`ReplayDriver` is a driver with no process: at the first `StartTurn` it
feeds the recorded bytes through the same sans-IO path as the live source
(`JsonLinesDecoder` then the source's frame translator) and sends the
driver events on. What is timed is corral's own cost, not an agent's.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Sequence
from typing import Any, Protocol

from ...pipeline.decoding import JsonLinesDecoder, NotJson, Oversized
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

__all__ = ["FrameTranslator", "ReplayDriver"]


class FrameTranslator(Protocol):
    def feed(self, frame: dict[str, Any]) -> list[DriverEvent]: ...


class ReplayDriver:
    def __init__(self, chunks: Sequence[bytes], translator: Callable[[], FrameTranslator]) -> None:
        self._chunks = chunks
        self._translator = translator
        self._go = asyncio.Event()
        self._stopped = asyncio.Event()

    async def start(self, tasks: asyncio.TaskGroup) -> Handshake:
        return Handshake(details=AgentDetails())

    async def run(self, events_out: EventSink) -> None:
        await self._go.wait()
        if self._stopped.is_set():
            return
        decoder = JsonLinesDecoder()
        translate = self._translator()
        await events_out.send(TurnBegan())
        for chunk in self._chunks:
            for frame in decoder.feed(chunk):
                if isinstance(frame, NotJson | Oversized):
                    continue
                for event in translate.feed(frame):
                    if not isinstance(event, TurnBegan | TurnFinished):
                        await events_out.send(event)
        await events_out.send(TurnFinished(stop=Completed()))
        await self._stopped.wait()

    async def send(self, command: DriverCommand) -> None:
        if isinstance(command, StartTurn):
            self._go.set()

    async def stop(self, grace: float) -> None:
        self._stopped.set()
        self._go.set()
