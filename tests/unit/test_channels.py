"""Bounded channels: backpressure, the three endings, statistics."""

from __future__ import annotations

import asyncio

import pytest
from corral.pipeline.channels import BrokenChannel, Channel, ChannelClosed, EndOfChannel

from tests.support.waiting import settled


def test_a_capacity_below_one_is_refused() -> None:
    with pytest.raises(ValueError):
        Channel(0)


async def test_a_full_channel_blocks_the_sender_until_room_is_made() -> None:
    channel: Channel[int] = Channel(2)
    await channel.send(1)
    await channel.send(2)
    sender = asyncio.create_task(channel.send(3))
    await settled()
    assert channel.statistics().waiting_senders == 1
    assert channel.statistics().depth == 2 and not sender.done()
    assert await channel.receive() == 1
    await sender
    assert [await channel.receive(), await channel.receive()] == [2, 3]
    assert channel.statistics().blocked_seconds_total > 0


async def test_after_close_receivers_drain_then_see_the_end() -> None:
    channel: Channel[int] = Channel(4)
    await channel.send(1)
    channel.close()
    channel.close()  # idempotent
    assert [item async for item in channel] == [1]
    with pytest.raises(EndOfChannel):
        await channel.receive()


async def test_sending_after_your_own_close_is_channel_closed() -> None:
    channel: Channel[int] = Channel(1)
    channel.close()
    with pytest.raises(ChannelClosed):
        await channel.send(1)


async def test_a_receiver_that_aborts_breaks_a_waiting_sender() -> None:
    channel: Channel[int] = Channel(1)
    await channel.send(1)
    sender = asyncio.create_task(channel.send(2))
    await settled()
    assert channel.statistics().waiting_senders == 1
    channel.abort()
    with pytest.raises(BrokenChannel):
        await sender


async def test_a_cancelled_sender_does_not_starve_the_next_one() -> None:
    channel: Channel[int] = Channel(1)
    await channel.send(0)
    first = asyncio.create_task(channel.send(1))
    second = asyncio.create_task(channel.send(2))
    await settled()
    assert channel.statistics().waiting_senders == 2
    first.cancel()
    assert await channel.receive() == 0
    await second
    assert await channel.receive() == 2


async def test_statistics_count_what_went_through() -> None:
    channel: Channel[str] = Channel(3, name="edge")
    for item in "abc":
        await channel.send(item)
    await channel.receive()
    stats = channel.statistics()
    assert (stats.name, stats.sent_total, stats.received_total, stats.depth) == ("edge", 3, 1, 2)


async def test_one_watcher_future_wakes_for_whichever_channel_gets_an_item_first() -> None:
    first: Channel[int] = Channel(2, name="first")
    second: Channel[int] = Channel(2, name="second")
    waiter: asyncio.Future[None] = asyncio.get_running_loop().create_future()
    first.watch(waiter)
    second.watch(waiter)
    await settled()
    assert not waiter.done()
    second.try_send(7)
    assert waiter.done()
    # The other channel skips the settled waiter and wakes its next receiver.
    receiver = asyncio.create_task(first.receive())
    await settled()
    assert first.statistics().waiting_receivers == 1
    first.try_send(1)
    assert await receiver == 1


async def test_watching_a_channel_with_items_or_closed_resolves_at_once() -> None:
    loop = asyncio.get_running_loop()
    holding: Channel[int] = Channel(1)
    holding.try_send(1)
    ended: Channel[int] = Channel(1)
    ended.close()
    for channel in (holding, ended):
        waiter: asyncio.Future[None] = loop.create_future()
        channel.watch(waiter)
        assert waiter.done()


async def test_a_cancelled_watcher_does_not_swallow_a_wake_up() -> None:
    channel: Channel[int] = Channel(2)
    waiter: asyncio.Future[None] = asyncio.get_running_loop().create_future()
    channel.watch(waiter)
    waiter.cancel()
    receiver = asyncio.create_task(channel.receive())
    await settled()
    assert channel.statistics().waiting_receivers == 1
    channel.try_send(5)
    assert await receiver == 5


async def test_unwatching_leaves_no_waiter_behind() -> None:
    channel: Channel[int] = Channel(2)
    loop = asyncio.get_running_loop()
    for _ in range(100):  # an idle session woken by commands, again and again
        waiter: asyncio.Future[None] = loop.create_future()
        channel.watch(waiter)
        waiter.set_result(None)  # something else woke it
        channel.unwatch(waiter)
        channel.unwatch(waiter)  # twice is harmless
    assert channel.statistics().waiting_receivers == 0
    assert len(channel._receivers) == 0
