"""The archive's one disk thread, woken per round of batches, not per batch.

```
sink A ─┐ run(write A's batch) ──► pending ──► thread: every pending call, in order
sink B ─┘ run(write B's batch) ──►            └─► one callback in the loop settles them all
```

With a thousand streaming sessions, a sink hands over a batch of a few
records at a time, and a thread pool costs the event loop a thread-safe
wakeup per batch and its threads fight the loop for the GIL. One thread
takes everything that is pending as one round: while it writes a round,
the next one gathers, so the busier the sessions, the larger the rounds,
and the loop is woken once per round, not once per batch.

Each sink has at most one batch pending (it waits for it before taking the
next), so a session's records keep their order; what a call raises is
raised in its caller. `close()` runs what is pending, then stops the thread.
"""

from __future__ import annotations

import asyncio
import contextlib
import threading
from collections.abc import Callable
from typing import Any, TypeVar

__all__ = ["DiskWorker"]

T = TypeVar("T")
_Call = tuple[Callable[[], Any], asyncio.Future[Any]]


class DiskWorker:
    def __init__(self, name: str = "corral-transcript") -> None:
        self._pending: list[_Call] = []
        self._wake = threading.Condition()
        self._closed = False
        self._thread = threading.Thread(target=self._serve, name=name, daemon=True)
        self._thread.start()

    async def run(self, call: Callable[[], T]) -> T:
        """`call()` in the worker's thread; its result, or what it raised."""
        future: asyncio.Future[T] = asyncio.get_running_loop().create_future()
        with self._wake:
            if self._closed:
                raise RuntimeError("the archive's disk worker is closed")
            self._pending.append((call, future))
            self._wake.notify()
        return await future

    def close(self) -> None:
        """Run what is pending, then stop the thread (it is joined)."""
        with self._wake:
            self._closed = True
            self._wake.notify()
        self._thread.join()

    def _serve(self) -> None:
        while True:
            with self._wake:
                while not self._pending and not self._closed:
                    self._wake.wait()
                if not self._pending:
                    return
                calls, self._pending = self._pending, []
            self._run_round(calls)

    @staticmethod
    def _run_round(calls: list[_Call]) -> None:
        done: dict[asyncio.AbstractEventLoop, list[tuple[asyncio.Future[Any], Any, bool]]] = {}
        for call, future in calls:
            try:
                outcome, failed = call(), False
            except BaseException as error:  # raised in the caller, whatever it is
                outcome, failed = error, True
            done.setdefault(future.get_loop(), []).append((future, outcome, failed))
        for loop, settled in done.items():
            with contextlib.suppress(RuntimeError):  # a closed loop: nobody waits any more
                loop.call_soon_threadsafe(_settle, settled)


def _settle(settled: list[tuple[asyncio.Future[Any], Any, bool]]) -> None:
    for future, outcome, failed in settled:
        if future.cancelled():
            continue
        if failed:
            future.set_exception(outcome)
        else:
            future.set_result(outcome)
