"""Taking turns on one event loop: many busy sessions, and still a responsive loop.

A session's actor that has more driver events waiting than its fair share
handles one share, then yields. `asyncio.sleep(0)` would put it straight
back in the loop's ready queue; with a thousand sessions streaming at once,
one pass of the loop then runs a thousand shares (and what their sinks do
with them) before a timer, a socket or an app's command is looked at again:
up to seconds of lag. The turnstile instead queues the actors that yield
and lets at most `width` of them through per pass of the loop, in the order
they came. A pass then holds a bounded amount of work whatever the number
of sessions, and every actor still gets its turn: first come, first
through, nobody skipped. With fewer busy sessions than `width`, none waits
longer than a pass, as with `sleep(0)`.

The same goes for the other side of the engine: a driver sends through
`TakingTurns`, which yields through the turnstile after each share of
events, so a thousand agents' reads do not fill one pass either.

There is one turnstile per event loop (`turnstile()`): fairness is the
loop's, whichever runtime the sessions belong to. An actor waiting here
holds nothing (it yields between batches, never while sending), so a
stalled session cannot keep the others out.
"""

from __future__ import annotations

import asyncio
import weakref
from collections import deque
from collections.abc import Sequence
from typing import Generic, TypeVar

from ..pipeline.channels import Channel

__all__ = ["WIDTH", "TakingTurns", "Turnstile", "turnstile"]

T = TypeVar("T")

WIDTH = 16  # actors let through per pass of the loop


class Turnstile:
    def __init__(self, width: int | None = None) -> None:
        """Used from one event loop only (it holds no reference to it: the per-loop
        registry keys turnstiles by their loop, weakly)."""
        width = WIDTH if width is None else width
        if width < 1:
            raise ValueError(f"a turnstile lets at least one through, got width {width}")
        self._width = width
        self._waiting: deque[asyncio.Future[None]] = deque()
        self._release_due = False  # a `_release` is in the loop's ready queue

    @property
    def waiting(self) -> int:
        return len(self._waiting)

    async def take_turn(self) -> None:
        """Yield to the loop; come back when the turnstile lets this task through."""
        loop = asyncio.get_running_loop()
        turn = loop.create_future()
        self._waiting.append(turn)
        if not self._release_due:
            self._release_due = True
            loop.call_soon(self._release)
        await turn  # cancelled: `_release` skips it

    def _release(self) -> None:
        """Let up to `width` through (this pass); the rest wait for the next."""
        waiting, let_through = self._waiting, 0
        while waiting and let_through < self._width:
            turn = waiting.popleft()
            if not turn.done():
                turn.set_result(None)
                let_through += 1
        self._release_due = bool(waiting)
        if waiting:
            asyncio.get_running_loop().call_soon(self._release)


_PER_LOOP: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, Turnstile] = (
    weakref.WeakKeyDictionary()
)


def turnstile() -> Turnstile:
    """The running loop's turnstile."""
    loop = asyncio.get_running_loop()
    found = _PER_LOOP.get(loop)
    if found is None:
        found = _PER_LOOP[loop] = Turnstile()
    return found


class TakingTurns(Generic[T]):
    """A sender into `channel` that takes a turn after every `share` items sent."""

    def __init__(self, channel: Channel[T], share: int, turns: Turnstile | None = None) -> None:
        """`turns`: the turnstile to take turns at; the running loop's by default."""
        self._channel = channel
        self._share = share
        self._sent = share  # since the last turn taken: the first share takes one too
        self._turns = turns

    async def send(self, item: T) -> None:
        if self._sent >= self._share:
            await self._take_turn()
        self._sent += 1
        await self._channel.send(item)

    async def send_batch(self, batch: Sequence[T]) -> None:
        if self._sent >= self._share:
            await self._take_turn()
        self._sent += len(batch)
        await self._channel.send_batch(batch)

    async def _take_turn(self) -> None:
        self._sent = 0
        if self._turns is None:
            self._turns = turnstile()
        await self._turns.take_turn()
