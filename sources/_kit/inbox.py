"""One reader over two channels: the driver's own events, then the agent's frames.

`run` is the only task that sends a driver's events. What the driver makes
itself (a verdict, a refused prompt, the events of a file it read for the
agent) is a typed `Local` value, never a fake agent frame. It goes in one
of two ways:

- `put_local`: served first, before the next agent frame (a verdict the
  engine waits on must not queue behind a long stream);
- `put_behind`: into the frames channel itself, behind whatever the agent
  said before it (ACP's `stopReason` must follow every update the agent
  sent ahead of its answer).

`next_batch` returns a `Local` alone, or the frames held now (a batch, as
the pump put them in: a read's worth), or None once the agent's output
ended (the frames channel was closed by the pump). Putting into an inbox whose
driver stopped does nothing: the session is over. Both channels are
bounded, the frames also in bytes (each message counts the bytes read for
it, so a few huge lines fill it as surely as many small ones); a full one
pauses the task that puts, and so the reading of the agent.
"""

from __future__ import annotations

import contextlib
from typing import Generic, TypeVar

import attrs

from ...pipeline.channels import BrokenChannel, Channel, ChannelClosed, EndOfChannel
from ...pipeline.driver import DriverEvent
from ...pipeline.sizes import ITEM_OVERHEAD
from ...pipeline.wakeup import Wakeup

__all__ = ["Inbox", "Local"]

F = TypeVar("F")

MAX_FRAME_BYTES = 8 * 1024 * 1024  # the agent's messages held here, as read (16 MB lines exist)


def _held(item: object) -> int:
    """What an item keeps alive: the bytes read for it (`size`), or just itself."""
    return ITEM_OVERHEAD + getattr(item, "size", 0)


@attrs.frozen
class Local:
    """Events the driver made itself, delivered as they are."""

    events: tuple[DriverEvent, ...]


class Inbox(Generic[F]):
    def __init__(
        self, *, name: str, frames: int, local: int = 16, max_bytes: int = MAX_FRAME_BYTES
    ) -> None:
        self.frames: Channel[F | Local] = Channel(
            frames, name=name, max_bytes=max_bytes, size=_held
        )
        self._local: Channel[Local] = Channel(local, name=f"{name}-local")
        self._either = Wakeup(self.frames, self._local)

    async def put_local(self, *events: DriverEvent) -> None:
        """Events served before the next agent frame."""
        if not events:
            return
        with contextlib.suppress(BrokenChannel, ChannelClosed):  # stopped: nobody reads
            await self._local.send(Local(events))

    async def put_behind(self, item: F | Local) -> None:
        """An item served after every frame the agent sent before it."""
        with contextlib.suppress(BrokenChannel, ChannelClosed):  # output ended, or stopped
            await self.frames.send(item)

    async def next_batch(self, limit: int = 64) -> list[Local | F] | None:
        """What to deliver next: the driver's own events (one `Local`), else the
        agent's frames held now (at most `limit`, in order); None once the
        agent's output ended."""
        frames = self.frames
        while True:
            try:
                local = self._local.try_receive()
            except EndOfChannel:
                local = None
            if local is not None:
                return [local]
            if len(frames):
                return await frames.receive_batch(limit)  # no wait: they are held
            if frames.closed:
                return None
            await self._wait()

    async def _wait(self) -> None:
        if self._local.closed:  # aborted at stop: only the agent's output is left
            await self.frames.wait_readable()
        else:
            await self._either.wait()

    def abort_local(self) -> None:
        """Stop taking local events (a task putting one is released)."""
        self._local.abort()

    def abort(self) -> None:
        """Stop taking anything: the agent's remaining output is not read."""
        self._local.abort()
        self.frames.abort()
