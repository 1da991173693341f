"""Bounded channels between stages: backpressure, explicit close, statistics.

A `Channel` holds at most `capacity` items and, when given `max_bytes` and
a `size` function, at most that many bytes of them. `send` waits while it is full,
which is how backpressure travels upstream: a slow sink stops the fan-out,
which stops the engine, which stops the source reading the agent's stdout,
and the OS pipe then stops the agent. Nothing is dropped.

The byte bound is what keeps memory bounded when items differ wildly in
size: 256 text deltas are a few kilobytes, 256 events of an agent's 16 MB
lines are 4 GB. An item larger than the whole bound is still admitted when
the channel is empty (alone), so no item can wait forever; an item that fits
waits until the bytes ahead of it leave. `size` is called once per item, on
its way in, and must not change for an item.

Three distinct endings (after trio's memory channels):
- the sender called `close()`: receivers drain what is left, then get
  `EndOfChannel` (a clean end; `async for` simply stops);
- the receiver called `abort()`: every later or waiting `send` raises
  `BrokenChannel` (the other side is gone);
- sending after your own `close()` raises `ChannelClosed` (a bug).

Waiting on several inputs at once (two channels, a channel and commands
from other tasks, a deadline) has one way: a `Wakeup` over the channels
(`pipeline/wakeup.py`), which other tasks may `kick`, and whose `wait`
takes a bound in seconds. It waits with one future (`watch`), not a task
per input.

`statistics()` is a frozen snapshot (depth, capacity, waiting tasks, totals,
time senders spent blocked) for metrics and for tests that wait until a
producer is blocked instead of sleeping.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections import deque
from collections.abc import AsyncIterator, Callable
from typing import Generic, TypeVar

import attrs

__all__ = ["BrokenChannel", "Channel", "ChannelClosed", "ChannelStats", "EndOfChannel"]

T = TypeVar("T")


class EndOfChannel(Exception):
    """The sender closed the channel and every item was received."""


class BrokenChannel(Exception):
    """The receiving side aborted; nothing more can be delivered."""


class ChannelClosed(Exception):
    """This side already closed the channel."""


@attrs.frozen(kw_only=True)
class ChannelStats:
    name: str
    depth: int
    capacity: int
    waiting_senders: int
    waiting_receivers: int
    sent_total: int
    received_total: int
    blocked_seconds_total: float
    closed: bool
    bytes: int = 0  # held now, by `size` (0 without a byte bound)
    max_bytes: int | None = None


class Channel(Generic[T]):
    """A bounded FIFO between one stage and the next."""

    def __init__(
        self,
        capacity: int,
        *,
        name: str = "channel",
        max_bytes: int | None = None,
        size: Callable[[T], int] | None = None,
    ) -> None:
        if capacity < 1:
            # asyncio.Queue(0) means unbounded; a channel never does.
            raise ValueError(f"channel capacity must be at least 1, got {capacity}")
        if (max_bytes is None) != (size is None):
            raise ValueError("a byte bound needs both max_bytes and size")
        if max_bytes is not None and max_bytes < 1:
            raise ValueError(f"channel max_bytes must be at least 1, got {max_bytes}")
        self.name = name
        self._capacity = capacity
        self._max_bytes = max_bytes
        self._byte_limit = 0 if max_bytes is None else max_bytes  # the same, as an int
        self._size = size
        self._bytes = 0
        self._sizes: deque[int] = deque()  # each held item's size, with a byte bound
        self._items: deque[T] = deque()
        self._senders: deque[asyncio.Future[None]] = deque()
        self._receivers: deque[asyncio.Future[None]] = deque()
        self._closed = False
        self._aborted = False
        self._sent = 0
        self._received = 0
        self._blocked_seconds = 0.0

    @property
    def capacity(self) -> int:
        return self._capacity

    def __len__(self) -> int:
        return len(self._items)

    def statistics(self) -> ChannelStats:
        return ChannelStats(
            name=self.name,
            depth=len(self._items),
            capacity=self._capacity,
            waiting_senders=sum(1 for f in self._senders if not f.done()),
            waiting_receivers=sum(1 for f in self._receivers if not f.done()),
            sent_total=self._sent,
            received_total=self._received,
            blocked_seconds_total=self._blocked_seconds,
            closed=self._closed,
            bytes=self._bytes,
            max_bytes=self._max_bytes,
        )

    # ---- the byte bound (only with `max_bytes`) ----------------------------------------

    def _fits(self, nbytes: int) -> bool:
        """Room for an item of `nbytes` by the byte bound (any item, alone)."""
        return not self._items or self._bytes + nbytes <= self._byte_limit

    def _put(self, item: T, nbytes: int) -> None:
        self._items.append(item)
        if self._size is not None:
            self._sizes.append(nbytes)
            self._bytes += nbytes

    def _taken(self, count: int) -> None:
        """`count` items left from the front: their bytes with them."""
        if self._sizes:
            for _ in range(count):
                self._bytes -= self._sizes.popleft()

    def _has_room(self, nbytes: int) -> bool:
        if len(self._items) >= self._capacity:
            return False
        return self._max_bytes is None or self._fits(nbytes)

    def _check_open(self) -> None:
        if self._aborted:
            raise BrokenChannel(f"{self.name}: the receiver is gone")
        if self._closed:
            raise ChannelClosed(f"{self.name}: already closed")

    @staticmethod
    def _wake(waiters: deque[asyncio.Future[None]]) -> None:
        while waiters:
            waiter = waiters.popleft()
            if not waiter.done():
                waiter.set_result(None)
                return

    def try_send(self, item: T) -> bool:
        """Put without waiting; False when full."""
        if self._closed:
            self._check_open()
        nbytes = 0 if self._size is None else self._size(item)
        if not self._has_room(nbytes):
            return False
        self._put(item, nbytes)
        self._sent += 1
        if self._receivers:
            self._wake(self._receivers)
        return True

    async def send(self, item: T) -> None:
        """Put, waiting while the channel is full (backpressure)."""
        if self._closed:
            self._check_open()
        items = self._items
        if self._size is None:
            nbytes = 0
            if len(items) < self._capacity and not self._senders:
                # The fast path: room, and nobody queued ahead of us.
                items.append(item)
                self._sent += 1
                if self._receivers:
                    self._wake(self._receivers)
                return
        else:
            nbytes = self._size(item)
            if (
                not self._senders
                and len(items) < self._capacity
                and (not items or self._bytes + nbytes <= self._byte_limit)
            ):
                # The same fast path, inlined: this runs for every event of a session.
                items.append(item)
                self._sizes.append(nbytes)
                self._bytes += nbytes
                self._sent += 1
                if self._receivers:
                    self._wake(self._receivers)
                return
        started = time.perf_counter()
        try:
            while not self._has_room(nbytes):
                waiter = asyncio.get_running_loop().create_future()
                self._senders.append(waiter)
                try:
                    await waiter
                except BaseException:
                    waiter.cancel()
                    # Pass the wake-up on so no other sender starves.
                    if len(self._items) < self._capacity:
                        self._wake(self._senders)
                    raise
                self._check_open()
        finally:
            self._blocked_seconds += time.perf_counter() - started
        self._put(item, nbytes)
        self._sent += 1
        self._wake(self._receivers)
        if len(self._items) < self._capacity:
            self._wake(self._senders)

    def try_receive(self) -> T | None:
        """Take without waiting; None when empty (items are never None)."""
        if not self._items:
            if self._closed:
                raise EndOfChannel(self.name)
            return None
        item = self._items.popleft()
        if self._sizes:  # a byte bound: the item's bytes leave with it
            self._bytes -= self._sizes.popleft()
        self._received += 1
        if self._senders:
            self._wake(self._senders)
        return item

    async def receive(self) -> T:
        if self._items:
            item = self._items.popleft()
            if self._sizes:  # a byte bound: the item's bytes leave with it
                self._bytes -= self._sizes.popleft()
            self._received += 1
            if self._senders:
                self._wake(self._senders)
            return item
        while not self._items:
            if self._closed:
                raise EndOfChannel(self.name)
            waiter = asyncio.get_running_loop().create_future()
            self._receivers.append(waiter)
            try:
                await waiter
            except BaseException:
                waiter.cancel()
                if self._items or self._closed:
                    self._wake(self._receivers)
                raise
        item = self._items.popleft()
        if self._sizes:  # a byte bound: the item's bytes leave with it
            self._bytes -= self._sizes.popleft()
        self._received += 1
        self._wake(self._senders)
        return item

    async def receive_batch(self, limit: int = 256) -> list[T]:
        """Everything available now (at most `limit`), waiting for at least one.

        Raises EndOfChannel at the clean end, like `receive`. Stages that can
        handle items together use it to pay per-item costs once per batch.
        """
        first = await self.receive()
        batch = [first]
        items = self._items
        while items and len(batch) < limit:
            batch.append(items.popleft())
        self._taken(len(batch) - 1)
        self._received += len(batch) - 1
        if self._senders:
            self._wake(self._senders)
        return batch

    async def batches(self, limit: int = 256) -> AsyncIterator[list[T]]:
        """`receive_batch` after `receive_batch`, until the clean end."""
        while True:
            try:
                yield await self.receive_batch(limit)
            except EndOfChannel:
                return

    async def wait_readable(self) -> None:
        """Wait until an item is available or the channel ended."""
        while not self._items and not self._closed:
            waiter = asyncio.get_running_loop().create_future()
            self._receivers.append(waiter)
            try:
                await waiter
            except BaseException:
                waiter.cancel()
                raise
        # Another receiver may be waiting too: let it look as well.
        self._wake(self._receivers)

    def watch(self, waiter: asyncio.Future[None]) -> None:
        """Resolve `waiter` once an item is available or the channel ended.

        For a task that waits on several things at once (this channel, another,
        a command, a deadline) with one future, instead of a task per thing: it
        resolves the future from whichever comes first, then `unwatch`es it
        from each channel.
        """
        if self._items or self._closed:
            if not waiter.done():
                waiter.set_result(None)
            return
        self._receivers.append(waiter)

    def unwatch(self, waiter: asyncio.Future[None]) -> None:
        """Forget a `watch` that something else resolved (so idle waits pile up nothing)."""
        with contextlib.suppress(ValueError):  # already woken (or never watched)
            self._receivers.remove(waiter)

    def close(self) -> None:
        """The sender is done; receivers drain, then see the end. Idempotent."""
        if self._closed:
            return
        self._closed = True
        for waiter in (*self._receivers, *self._senders):
            if not waiter.done():
                waiter.set_result(None)
        self._receivers.clear()

    def abort(self) -> None:
        """The receiver is gone; senders get BrokenChannel. Idempotent."""
        self._aborted = True
        self._closed = True
        self._items.clear()
        self._sizes.clear()
        self._bytes = 0
        for waiter in (*self._receivers, *self._senders):
            if not waiter.done():
                waiter.set_result(None)
        self._receivers.clear()
        self._senders.clear()

    @property
    def closed(self) -> bool:
        return self._closed

    def __aiter__(self) -> AsyncIterator[T]:
        return self._iterate()

    async def _iterate(self) -> AsyncIterator[T]:
        while True:
            try:
                yield await self.receive()
            except EndOfChannel:
                return
