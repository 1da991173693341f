"""Counting passes of the event loop, for tests of what one pass holds."""

from __future__ import annotations

import asyncio


class Passes:
    """Counts passes of the running loop: a callback that puts itself back each pass.

    `now` is the number of passes since it was made; `stop()` ends the count.
    """

    def __init__(self) -> None:
        self.now = 0
        self._loop = asyncio.get_running_loop()
        self._handle = self._loop.call_soon(self._tick)

    def _tick(self) -> None:
        self.now += 1
        self._handle = self._loop.call_soon(self._tick)

    def stop(self) -> None:
        self._handle.cancel()
