"""Stream operators of the Python API, on aiostream.

What flows in: each session's events (`Session.events()`), one async
iterator per session, read at the reader's pace (backpressure: a session
whose events nobody reads waits). What flows out: one merged stream
(`Runtime.events()`), and filtered or chunked views of any event stream
(`only`, `batches`).

The merge is aiostream's `flatten` over a stream of streams: `Joined`
hands every merge that is running the stream of each session the Runtime
opens, so a session opened after the merge started joins it. The merge ends
once the Runtime has closed (no session can join) and every joined stream
has ended. Each merge reads its new streams through its own bounded
channel; a merge that stops reading holds up the next `open`, never
drops a session. Like every aiostream operator, the merged stream is read
inside `async with` (`async with rt.events() as events:`), which closes
its tasks deterministically however the reader leaves.

A session's stream has one reader: read it through the merge, or through
`Session.events()` / `Session.turn()`, not both (each event goes to one).
"""

from __future__ import annotations

from collections.abc import AsyncIterable, AsyncIterator, Callable, Iterable
from typing import cast

from aiostream import stream
from aiostream.core import Stream

from ..pipeline.channels import BrokenChannel, Channel, ChannelClosed
from ..pipeline.events import Event

__all__ = ["Joined", "batches", "merged", "only"]

EventStream = AsyncIterable[Event]

# aiostream's operators are generic functions behind a decorator, which types
# their items as `Never` at the call site; these are the types they have here.
_flatten = cast("Callable[[AsyncIterable[EventStream]], Stream[Event]]", stream.flatten)
_filter = cast("Callable[[EventStream, Callable[[Event], bool]], Stream[Event]]", stream.filter)
_chunks = cast("Callable[[EventStream, int], Stream[list[Event]]]", stream.chunks)


class Joined:
    """The streams of the sessions a Runtime opens, told to every merge running."""

    def __init__(self, live: Callable[[], Iterable[EventStream]], *, capacity: int = 16) -> None:
        self._live = live  # the streams of the sessions open when a merge starts
        self._capacity = capacity
        self._readers: list[Channel[EventStream]] = []
        self._closed = False

    async def add(self, events: EventStream) -> None:
        """A session opened: each merge running joins its stream (at its pace)."""
        for reader in list(self._readers):  # the readers of this moment, copied
            try:
                await reader.send(events)
            except (BrokenChannel, ChannelClosed):
                continue  # that merge has ended meanwhile: nobody to tell

    def close(self) -> None:
        """No session joins any more: each merge ends once its streams have."""
        self._closed = True
        for reader in self._readers:
            reader.close()

    async def streams(self) -> AsyncIterator[EventStream]:
        """The streams of the open sessions, then of each one opened later."""
        joining: Channel[EventStream] = Channel(self._capacity, name="runtime/joined")
        current = list(self._live())  # and from now on `add`: both in one step
        self._readers.append(joining)
        if self._closed:
            joining.close()
        try:
            for events in current:
                yield events
            async for events in joining:
                yield events
        finally:
            self._readers.remove(joining)
            joining.abort()  # an `add` waiting on this reader stops waiting


def merged(joined: Joined) -> Stream[Event]:
    """Every session's events, interleaved as they come, in each session's order."""
    return _flatten(joined.streams())


def only(events: EventStream, *kinds: type[object]) -> Stream[Event]:
    """The events whose kind is one of `kinds` (`only(events, TextDelta, TurnEnded)`)."""
    return _filter(events, lambda event: isinstance(event.kind, kinds))


def batches(events: EventStream, size: int) -> Stream[list[Event]]:
    """The events in lists of `size` (the last one may be shorter)."""
    if size < 1:
        raise ValueError(f"a batch holds at least one event, not {size}")
    return _chunks(events, size)
