"""One reader over two channels: the driver's own events first, then the agent's frames.

`run` is the only task that sends a driver's events; what the driver
decides itself (a verdict, a refused prompt) waits in `local` and goes out
before the next frame. `next_item` returns a `Local` event, a frame, or
None once the agent's output has ended (the frames channel was closed by
the JSON-RPC pump). An aborted `local` (the driver stopped) is no longer
waited on.
"""

from __future__ import annotations

import asyncio
from typing import TypeVar

from ...pipeline.channels import Channel, EndOfChannel
from ...pipeline.driver import DriverEvent

__all__ = ["Local", "next_item"]

F = TypeVar("F")


class Local:
    __slots__ = ("event",)

    def __init__(self, event: DriverEvent) -> None:
        self.event = event


async def next_item(local: Channel[DriverEvent], frames: Channel[F]) -> Local | F | None:
    while True:
        try:
            event = local.try_receive()
        except EndOfChannel:
            event = None
        if event is not None:
            return Local(event)
        try:
            frame = frames.try_receive()
        except EndOfChannel:
            return None
        if frame is not None:
            return frame
        waits = [asyncio.ensure_future(frames.wait_readable())]
        if not local.closed:
            waits.append(asyncio.ensure_future(local.wait_readable()))
        try:
            await asyncio.wait(waits, return_when=asyncio.FIRST_COMPLETED)
        finally:
            for waiter in waits:
                waiter.cancel()
