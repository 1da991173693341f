"""Bounded channels between stages: backpressure, explicit close, statistics.

A `Channel` holds at most `capacity` items and, when given `max_bytes` and
a `size` function, at most that many bytes of them. `send` waits while it is
full, which is how backpressure travels upstream: a slow sink stops the
fan-out, which stops the engine, which stops the source reading the agent's
stdout, and the OS pipe then stops the agent. Nothing is dropped.

The hot path moves batches: `send_batch` puts a read's worth of items with
one wake-up of the receiver, `receive_batch` takes what is held with one.
A batch counts as its items and their bytes, so the bounds stay exact: what
fits goes in, the rest waits for room (a batch larger than the bound is
split). The byte bound keeps memory bounded when items differ wildly in
size (256 text deltas are a few kilobytes, 256 events of 16 MB lines are
4 GB); an item larger than the whole bound is admitted alone, so none waits
forever. `size` is called once per item, on its way in; `receive_sized`
hands the sizes on, so a fan-out measures an item once, not per output.

Three distinct endings (after trio's memory channels):
- the sender called `close()`: receivers drain what is left, then get
  `EndOfChannel` (a clean end; `async for` simply stops);
- the receiver called `abort()`: every later or waiting `send` raises
  `BrokenChannel` (the other side is gone);
- sending after your own `close()` raises `ChannelClosed` (a bug).

Waiting on several inputs at once (channels, kicks from other tasks, a
deadline) has one way: a `Wakeup` (`pipeline/wakeup.py`), with one future
(`watch`), not a task per input. `statistics()` is a frozen snapshot (depth,
capacity, waiting tasks, totals, time senders spent blocked) for metrics and
for tests that wait until a producer is blocked instead of sleeping.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections import deque
from collections.abc import AsyncIterator, Callable, Sequence
from typing import Generic, TypeVar

import attrs

__all__ = ["BrokenChannel", "Channel", "ChannelClosed", "ChannelStats", "EndOfChannel"]

T = TypeVar("T")
H = TypeVar("H")  # what a deque of the channel holds: items or their sizes


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

    def _put(self, item: T, nbytes: int) -> None:
        self._items.append(item)
        if self._size is not None:
            self._sizes.append(nbytes)
            self._bytes += nbytes
        self._sent += 1
        if self._receivers:
            self._wake(self._receivers)

    def _has_room(self, nbytes: int) -> bool:
        """Room for an item of `nbytes`; by the byte bound any item fits alone
        (without one, both byte figures stay 0)."""
        items = self._items
        return len(items) < self._capacity and (
            not items or self._bytes + nbytes <= self._byte_limit
        )

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
        return True

    async def send(self, item: T) -> None:
        """Put, waiting while the channel is full (backpressure)."""
        if self._closed:
            self._check_open()
        nbytes = 0 if self._size is None else self._size(item)
        if self._senders or not self._has_room(nbytes):
            await self._wait_for_room(nbytes)
        self._put(item, nbytes)
        if self._senders and len(self._items) < self._capacity:
            self._wake(self._senders)

    async def send_batch(self, batch: Sequence[T], sizes: Sequence[int] | None = None) -> None:
        """Put every item of `batch`, in order, waiting while the channel is full.

        A batch counts as its items and their bytes, so backpressure stays
        exact: what fits goes in at once (one wake-up for the receiver), the
        rest as room frees. A batch larger than the bound is thus split, and
        an item larger than the whole byte bound still passes alone.
        `sizes`: the items' sizes if known already (measured by a channel with
        the same `size`), else `size` measures each once.
        """
        if self._closed:
            self._check_open()
        if self._size is None:
            sizes = None  # no byte bound here, whatever another channel measured
        elif sizes is None:
            sizes = [self._size(item) for item in batch]
        start, count = 0, len(batch)
        while start < count:
            nbytes = 0 if sizes is None else sizes[start]
            if self._senders or not self._has_room(nbytes):
                await self._wait_for_room(nbytes)
            end = self._admit(batch, sizes, start)  # at least one: there is room
            self._sent += end - start
            start = end
            if self._receivers:
                self._wake(self._receivers)
            if self._senders and len(self._items) < self._capacity:
                self._wake(self._senders)

    def _admit(self, batch: Sequence[T], sizes: Sequence[int] | None, start: int) -> int:
        """Put what fits of `batch[start:]` now; the index of the first item left out."""
        items = self._items
        end = min(len(batch), start + self._capacity - len(items))
        if sizes is None:
            items.extend(batch[start:end])
            return max(start, end)
        held, limit, index = self._bytes, self._byte_limit, start
        if index < end and (taken := sum(sizes[start:end])) + held <= limit:
            items.extend(batch[start:end])  # all of it fits: no item-by-item check
            self._sizes.extend(sizes[start:end])
            self._bytes = held + taken
            return end
        while index < end:
            nbytes = sizes[index]
            if items and held + nbytes > limit:
                break
            items.append(batch[index])
            self._sizes.append(nbytes)
            held += nbytes
            index += 1
        self._bytes = held
        return index

    async def _wait_for_room(self, nbytes: int) -> None:
        """Wait, in turn with other senders, until an item of `nbytes` fits."""
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

    def try_receive(self) -> T | None:
        """Take without waiting; None when empty (items are never None)."""
        if not self._items:
            if self._closed:
                raise EndOfChannel(self.name)
            return None
        return self._take_one()

    async def receive(self) -> T:
        if not self._items:
            await self._until_item()
        return self._take_one()

    def _take_one(self) -> T:
        item = self._items.popleft()
        if self._sizes:  # a byte bound: the item's bytes leave with it
            self._bytes -= self._sizes.popleft()
        self._received += 1
        if self._senders:
            self._wake(self._senders)
        return item

    async def _until_item(self) -> None:
        """Wait until an item is held; EndOfChannel at the clean end."""
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

    async def receive_batch(self, limit: int = 256) -> list[T]:
        """Everything available now (at most `limit`), waiting for at least one;
        EndOfChannel at the clean end, like `receive`: per-item costs paid per batch."""
        return (await self.receive_sized(limit))[0]

    async def receive_sized(self, limit: int = 256) -> tuple[list[T], list[int] | None]:
        """`receive_batch`, with the items' sizes (None without a byte bound): the
        fan-out hands them on, so an item is measured once, not per hop."""
        if not self._items:
            await self._until_item()
        return self._take_sized(limit)

    def take_ready(self, limit: int = 256) -> list[T]:
        """What is held now (at most `limit`), never waiting: [] when empty, even at the end."""
        return self._take_sized(limit)[0] if self._items else []

    def _take_sized(self, limit: int) -> tuple[list[T], list[int] | None]:
        count = min(len(self._items), limit)
        batch = _take(self._items, count)
        self._received += count
        sizes: list[int] | None = None
        if self._size is not None:
            sizes = _take(self._sizes, count)
            self._bytes -= sum(sizes)
        if self._senders:
            self._wake(self._senders)
        return batch, sizes

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
        """Resolve `waiter` once an item is available or the channel ended: one
        future for a task waiting on several things at once (see `Wakeup`)."""
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

    async def __aiter__(self) -> AsyncIterator[T]:
        while True:
            try:
                yield await self.receive()
            except EndOfChannel:
                return


def _take(held: deque[H], count: int) -> list[H]:  # the first `count`, removed
    if count < len(held):
        return [held.popleft() for _ in range(count)]
    taken = list(held)
    held.clear()
    return taken
