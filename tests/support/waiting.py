"""Waiting in tests: on the other tasks, or on another process, never on a fixed tick.

Three ways to wait, from the most to the least exact:

- `settled()` returns once every other task of this event loop is blocked,
  in the manner of trio's `wait_all_tasks_blocked`: it yields one loop turn at
  a time and returns when the loop's ready queue has stayed empty for a few
  turns in a row. A task waiting on a channel, an event, a timer, a thread or
  a pipe counts as blocked. After it, a state that the tasks reach on their
  own (a sender stuck on a full channel, a receiver waiting on an empty one)
  can be asserted outright. It reads no clock.
- `until(condition)` is for a state the test reaches through something other
  than the loop's tasks (a thread, a timer, another process writing to a
  pipe). It checks, lets the tasks settle, checks again, and only then sleeps
  before the next look, each sleep twice the last (from 1 ms up to 0.1 s), so
  a loaded machine sees a handful of looks, not one every millisecond.
- `retries()` is the same growing back-off for a look that blocks or is
  slow (a /proc scan, an HTTP scrape): the caller makes the look itself.

All three are bounded: `settled` by a number of turns, the others by a
timeout after which they fail naming what they waited for.

The preferred wait is none of these: a test that can wait on the thing itself
(`Session.wait_idle()`, `wait_closed()`, a stream's next event,
`ServeProcess.wait_for`) does so.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Protocol

from corral.pipeline.events import SessionStatus

__all__ = ["idle", "retries", "settled", "until"]

FIRST_DELAY = 0.001
LONGEST_DELAY = 0.1


async def settled(*, quiet_turns: int = 3, max_turns: int = 100_000) -> None:
    """Return once no other task is ready to run, `quiet_turns` loop turns in a row.

    Several turns, not one: a callback made ready by I/O already waiting (a
    pipe between two tasks, a thread's result) shows up only on the next turn.
    Fails after `max_turns` turns (a task that never blocks).
    """
    if not await _settle(quiet_turns, max_turns):
        raise AssertionError(f"the other tasks were still running after {max_turns} loop turns")


async def _settle(quiet_turns: int, max_turns: int) -> bool:
    loop = asyncio.get_running_loop()
    ready = getattr(loop, "_ready", None)  # asyncio's own loop: its run queue
    if ready is None:
        raise RuntimeError("settled() reads the run queue of asyncio's own event loop")
    quiet = 0
    for _ in range(max_turns):
        await asyncio.sleep(0)
        quiet = quiet + 1 if not ready else 0
        if quiet >= quiet_turns:
            return True
    return False


class retries:  # lower case: it reads as a loop, `async for _ in retries(...)`
    """Yield at once, then after sleeps that double (1 ms up to `longest`), until `timeout`.

    The caller breaks out when its look succeeds; running out of time raises
    `AssertionError` naming `what`. An iterator, not a generator, so breaking
    out leaves nothing to close.
    """

    def __init__(
        self, *, timeout: float = 10.0, what: str = "the condition", longest: float = LONGEST_DELAY
    ) -> None:
        self._timeout = timeout
        self._what = what
        self._longest = longest
        self._deadline: float | None = None
        self._delay = FIRST_DELAY
        self._attempt = 0

    def __aiter__(self) -> retries:
        return self

    async def __anext__(self) -> int:
        loop = asyncio.get_running_loop()
        if self._deadline is None:
            self._deadline = loop.time() + self._timeout
        elif (left := self._deadline - loop.time()) <= 0:
            raise AssertionError(f"timed out after {self._timeout} s waiting for {self._what}")
        else:
            await asyncio.sleep(min(self._delay, left))
            self._delay = min(self._delay * 2, self._longest)
        self._attempt += 1
        return self._attempt


async def until(
    condition: Callable[[], object], timeout: float = 10.0, *, what: str = "the condition"
) -> None:
    """Return once `condition()` is true: first as soon as the tasks settle, then with back-off.

    The settling is bounded by turns and not an error here: tasks that never
    block (a flood flowing through) just move on to the next look.
    """
    async for _ in retries(timeout=timeout, what=what):
        if condition():
            return
        await _settle(3, 10_000)
        if condition():
            return


class _Session(Protocol):
    @property
    def status(self) -> SessionStatus: ...

    async def wait_idle(self) -> None: ...


async def idle(session: _Session, *, timeout: float = 10.0) -> None:
    """Wait on the session itself until no turn runs and nothing is queued.

    `wait_idle` also returns when the session ended; a test that waits for
    idle means a live session, so that fails here.
    """
    async with asyncio.timeout(timeout):
        await session.wait_idle()
    assert session.status is SessionStatus.IDLE, f"the session ended ({session.status})"
