"""`Wakeup`: the one way a task waits on several inputs (channels, kicks, a bound)."""

from __future__ import annotations

import asyncio

from corral.pipeline.channels import Channel
from corral.pipeline.wakeup import Wakeup

from tests.support.waiting import settled


async def test_a_wait_returns_when_any_of_its_channels_has_an_item() -> None:
    first: Channel[int] = Channel(2, name="first")
    second: Channel[int] = Channel(2, name="second")
    wakeup = Wakeup(first, second)
    waiting = asyncio.create_task(wakeup.wait())
    await settled()
    assert not waiting.done()
    second.try_send(7)
    await asyncio.wait_for(waiting, 5)


async def test_a_wait_returns_when_a_channel_ends() -> None:
    channel: Channel[int] = Channel(2)
    wakeup = Wakeup(channel)
    waiting = asyncio.create_task(wakeup.wait())
    await settled()
    channel.close()
    await asyncio.wait_for(waiting, 5)


async def test_a_kick_from_another_task_wakes_the_waiting_one() -> None:
    wakeup = Wakeup(Channel[int](1))
    waiting = asyncio.create_task(wakeup.wait())
    await settled()
    assert not waiting.done()
    wakeup.kick()
    await asyncio.wait_for(waiting, 5)


async def test_a_kick_while_nobody_waits_is_kept_for_the_next_wait() -> None:
    channel: Channel[int] = Channel(1)
    wakeup = Wakeup(channel)
    wakeup.kick()  # between the waiter's last look and its wait
    await asyncio.wait_for(wakeup.wait(), 5)  # returns at once: the kick is not lost
    waiting = asyncio.create_task(wakeup.wait())  # ...and only once
    await settled()
    assert not waiting.done()
    wakeup.kick()
    await waiting


async def test_a_wait_with_a_bound_of_zero_returns_without_input() -> None:
    await asyncio.wait_for(Wakeup(Channel[int](1)).wait(at_most=0.0), 5)


async def test_waits_woken_again_and_again_leave_nothing_watching() -> None:
    channel: Channel[int] = Channel(1)
    wakeup = Wakeup(channel)
    for _ in range(100):
        waiting = asyncio.create_task(wakeup.wait())
        await asyncio.sleep(0)
        wakeup.kick()
        await waiting
    assert channel.statistics().waiting_receivers == 0


async def test_a_cancelled_wait_leaves_nothing_watching_and_wakes_the_channel_s_reader() -> None:
    channel: Channel[int] = Channel(1)
    waiting = asyncio.create_task(Wakeup(channel).wait())
    await settled()
    waiting.cancel()
    await asyncio.gather(waiting, return_exceptions=True)
    assert channel.statistics().waiting_receivers == 0
    receiver = asyncio.create_task(channel.receive())
    await settled()
    channel.try_send(3)
    assert await asyncio.wait_for(receiver, 5) == 3
