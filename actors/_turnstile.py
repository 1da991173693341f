"""Taking turns on one event loop: many busy sessions, and still a responsive loop.

A session's actor that has a full share of driver events waiting would
handle it without ever suspending while its channels have room; yielding
with `asyncio.sleep(0)` puts it straight back in the loop's ready queue.
With a thousand sessions streaming at once, one pass of the loop then runs
a thousand shares (and what their sinks do with them) before a timer, a
socket or an app's command is looked at again: up to seconds of lag. The
turnstile instead queues the tasks that take a turn and lets at most
`width` of them through per pass of the loop, in the order they came. A
pass then holds a bounded amount of work whatever the number of sessions,
and every task still gets its turn: first come, first through, nobody
skipped. With fewer busy sessions than `width`, none waits longer than a
pass or two.

Who takes a turn (`actors/session.py`): an actor before a full share, and
before any batch while others are waiting (so a crowd woken at once, say a
thousand sessions prompted together, queues too); a driver, through
`TakingTurns`, after its first few events and then after each share it
sends (an agent's first words go out at once, so a short answer is never
held back, and a driver never holds an event while it waits).

There is one turnstile per event loop (`turnstile()`): fairness is the
loop's, whichever runtime the sessions belong to. A task waiting here
holds nothing (turns are taken between batches, never while sending), so
a stalled session cannot keep the others out.
"""

from __future__ import annotations

import asyncio
import weakref
from collections import deque
from collections.abc import Sequence
from typing import Generic, TypeVar

from ..pipeline.channels import Channel

__all__ = ["FIRST_WORDS", "WIDTH", "TakingTurns", "Turnstile", "turnstile"]

T = TypeVar("T")

WIDTH = 16  # actors let through per pass of the loop
FIRST_WORDS = 8  # a driver's first events, sent before its first turn


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
    """A sender into `channel`: its first `FIRST_WORDS` items at once, then a turn
    after each `share` items.

    The turn comes after a send, never between an item and its send: a driver
    waiting for its turn holds nothing it has read, so what the agent said is
    in the channel (where a command takes it in first, `actors/session.py`)
    as soon as the driver has it.
    """

    def __init__(self, channel: Channel[T], share: int, turns: Turnstile) -> None:
        self._channel = channel
        self._share = share
        # Counted since the last turn taken. The first few events go at once (an
        # agent's first words are not held back: a session closed right after its
        # prompt still gets a short answer out); then a turn, then one a share.
        self._sent = max(0, share - FIRST_WORDS)
        self._turns = turns

    async def send(self, item: T) -> None:
        await self._channel.send(item)
        self._sent += 1
        if self._sent >= self._share:
            await self._take_turn()

    async def send_batch(self, batch: Sequence[T]) -> None:
        await self._channel.send_batch(batch)
        self._sent += len(batch)
        if self._sent >= self._share:
            await self._take_turn()

    async def _take_turn(self) -> None:
        self._sent = 0
        await self._turns.take_turn()
