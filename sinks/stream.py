"""The in-process app sink: a session's events as an async iterator.

The Python API's `Session.events()` reads this sink's bounded channel. Like
every sink it takes part in backpressure: an app that stops iterating
pauses the session rather than losing events.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

from ..pipeline.channels import Channel
from ..pipeline.errors import CorralError
from ..pipeline.events import Event
from ..pipeline.records import SessionFailed, SinkItem
from .lines import SessionTail

__all__ = ["StreamSink"]


class StreamSink:
    name = "stream"

    def __init__(self, capacity: int = 256, *, session_id: str = "") -> None:
        self.events: Channel[Event] = Channel(capacity, name=f"{session_id}/app-stream")
        self.failure: CorralError | None = None
        self.tail = SessionTail()  # what the reader was given, should the session crash

    async def run(self, items_in: Channel[SinkItem]) -> None:
        try:
            async for item in items_in:
                if isinstance(item, Event):
                    await self.events.send(item)
                elif isinstance(item, SessionFailed):
                    self.failure = item.error
                self.tail.saw(item)
        except asyncio.CancelledError:
            # The session's stages were torn down (a crash inside corral): its owner,
            # the Session handle, ends the stream with the session's last words.
            raise
        except BaseException:
            self.events.close()
            raise
        self.events.close()

    def __aiter__(self) -> AsyncIterator[Event]:
        return aiter(self.events)
