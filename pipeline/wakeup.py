"""Waiting on several inputs at once: the one way to do it.

A task that reads from more than one place (two channels; a channel and
commands from other tasks; either, or a deadline) waits with a `Wakeup`:
one future that each channel resolves through `Channel.watch` when it has
an item or ends, that other tasks resolve with `kick`, and that a timer
resolves after `at_most` seconds. No task per input, nothing left behind:
the future is unwatched from every channel and the timer cancelled
whichever comes first. After a wait the task looks again at everything it
reads (`try_receive`, its own state); the wakeup says only "look now".

Its users: the session actor (driver events, app commands, deadlines), the
line writer, the driver kit's inbox (the driver's own events and the
agent's frames), and the mock agent's pauses (side commands; an interrupt
or an answer kicks it). Something that is not a channel (a flag another
task sets) is a `kick` from the task that sets it, never a task per input.
"""

from __future__ import annotations

import asyncio
from typing import Any

from .channels import Channel

__all__ = ["Wakeup"]


class Wakeup:
    """One task's wait on several inputs: channels, kicks from other tasks, a bound.

    `wait` returns once any of `channels` has an item or has ended, once
    another task called `kick`, or once `at_most` seconds passed; the caller
    then looks at what it waits on (`try_receive`, its own state). A kick
    while nobody waits is kept: the next `wait` returns at once, so a kick
    is never lost between the caller's last look and its wait.
    """

    def __init__(self, *channels: Channel[Any]) -> None:
        self._channels = channels
        self._waiter: asyncio.Future[None] | None = None
        self._kicked = False

    def kick(self) -> None:
        waiter = self._waiter
        if waiter is None:
            self._kicked = True
        elif not waiter.done():
            waiter.set_result(None)

    async def wait(self, at_most: float | None = None) -> None:
        if self._kicked:
            self._kicked = False
            return
        loop = asyncio.get_running_loop()
        waiter: asyncio.Future[None] = loop.create_future()
        self._waiter = waiter
        for channel in self._channels:
            channel.watch(waiter)
        timer = None
        if at_most is not None:
            timer = loop.call_later(max(0.0, at_most), _wake_one, waiter)
        try:
            await waiter
        finally:
            self._waiter = None
            if timer is not None:
                timer.cancel()
            waiter.cancel()  # a no-op once resolved
            for channel in self._channels:
                channel.unwatch(waiter)


def _wake_one(waiter: asyncio.Future[None]) -> None:
    if not waiter.done():
        waiter.set_result(None)
