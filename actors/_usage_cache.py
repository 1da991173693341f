"""The Runtime's memory of plan usage answers: one read per agent per minute.

Reading an agent's plan usage starts a process of that agent, and an app
may poll. `PlanUsageCache.get(key, read)` keeps what `read` answered for
`ttl` seconds (60 by default) per key, the (agent, executable) pair: a
second call within the window starts nothing. What is kept: a `PlanUsage`,
and an `UnsupportedFeature` verdict (the agent is on an API key or a
provider: a fact about its setup, no fresher a second later). Not kept:
`AuthRequired` (the user may log in right now), a timeout, a process that
died, a refused read: the next call asks again.

Concurrent calls for one key share one read: the first caller reads, the
others wait for its outcome. A caller cancelled mid-read takes its read
with it, and one of the waiters reads instead. The clock is a constructor
argument (monotonic seconds), so tests control time.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable, Hashable

import attrs

from ..pipeline.errors import CorralError, ErrorKind
from ..pipeline.events import PlanUsage

__all__ = ["PlanUsageCache"]

TTL = 60.0

Outcome = PlanUsage | CorralError


@attrs.frozen
class _Kept:
    outcome: Outcome
    at: float


def _answer(outcome: Outcome) -> PlanUsage:
    if isinstance(outcome, CorralError):
        raise outcome
    return outcome


class PlanUsageCache:
    def __init__(self, *, ttl: float = TTL, clock: Callable[[], float] = time.monotonic) -> None:
        self._ttl = ttl
        self._clock = clock
        self._kept: dict[Hashable, _Kept] = {}
        self._reading: dict[Hashable, asyncio.Future[Outcome | None]] = {}

    def _fresh(self, key: Hashable) -> Outcome | None:
        kept = self._kept.get(key)
        if kept is None or self._clock() - kept.at >= self._ttl:
            return None
        return kept.outcome

    async def get(self, key: Hashable, read: Callable[[], Awaitable[PlanUsage]]) -> PlanUsage:
        """The answer kept for `key`, or what `read` answers now (kept when worth keeping)."""
        while True:
            kept = self._fresh(key)
            if kept is not None:
                return _answer(kept)
            other = self._reading.get(key)
            if other is None:
                break
            shared = await asyncio.shield(other)  # None: that reader was cancelled
            if shared is not None:
                return _answer(shared)
        done: asyncio.Future[Outcome | None] = asyncio.get_running_loop().create_future()
        self._reading[key] = done
        outcome: Outcome | None = None
        try:
            try:
                outcome = await read()
            except CorralError as error:
                outcome = error
        finally:
            del self._reading[key]
            done.set_result(outcome)
        assert outcome is not None  # `read` returned or raised a CorralError
        if isinstance(outcome, PlanUsage) or outcome.kind is ErrorKind.UNSUPPORTED_FEATURE:
            self._kept[key] = _Kept(outcome, self._clock())
        return _answer(outcome)
