"""Batches through bounded channels: a batch counts as its items and bytes.

Each test attacks what moving batches instead of items could break: a batch
larger than the bounds (it must be split, never deadlock, never overfill),
an item larger than the byte bound inside a batch (alone, as before), a
sender cancelled mid-batch (what went in stays, in order; the next sender is
not starved), and the fan-out measuring each record once for every sink.
"""

from __future__ import annotations

import asyncio

import pytest
from corral.pipeline.channels import BrokenChannel, Channel, EndOfChannel
from corral.pipeline.stages import FanOut

from tests.support.waiting import settled


def _held(channel: Channel[bytes]) -> tuple[int, int]:
    stats = channel.statistics()
    return stats.depth, stats.bytes


async def _drain(channel: Channel[bytes], seen: list[tuple[int, int]]) -> list[bytes]:
    """Every item, one batch at a time, noting what the channel held before each take."""
    got: list[bytes] = []
    while True:
        seen.append(_held(channel))
        try:
            got += await channel.receive_batch(limit=3)
        except EndOfChannel:
            return got
        await asyncio.sleep(0)  # let the sender refill between takes


async def test_a_batch_larger_than_both_bounds_is_split_and_arrives_whole_in_order() -> None:
    channel: Channel[bytes] = Channel(4, max_bytes=100, size=len)
    batch = [bytes([65 + n]) * 30 for n in range(20)]  # 600 bytes, 20 items
    seen: list[tuple[int, int]] = []
    async with asyncio.timeout(5):  # a deadlock fails here
        receiver = asyncio.create_task(_drain(channel, seen))
        await channel.send_batch(batch)
        channel.close()
        assert await receiver == batch
    # Never more than the bounds: 4 items, 100 bytes (three 30-byte items fit).
    assert max(depth for depth, _ in seen) <= 3 and max(held for _, held in seen) <= 100
    assert channel.statistics().sent_total == channel.statistics().received_total == 20


async def test_a_batch_fills_the_channel_then_its_sender_waits_for_room() -> None:
    channel: Channel[int] = Channel(4)
    sender = asyncio.create_task(channel.send_batch(list(range(10))))
    await settled()
    stats = channel.statistics()
    assert (stats.depth, stats.waiting_senders) == (4, 1) and not sender.done()
    assert await channel.receive_batch() == [0, 1, 2, 3]
    await settled()
    assert await channel.receive_batch() == [4, 5, 6, 7]
    await sender
    assert await channel.receive_batch() == [8, 9]


async def test_an_item_larger_than_the_byte_bound_inside_a_batch_passes_alone() -> None:
    channel: Channel[bytes] = Channel(8, max_bytes=100, size=len)
    sender = asyncio.create_task(channel.send_batch([b"a" * 10, b"b" * 500, b"c" * 10]))
    await settled()
    assert _held(channel) == (1, 10)  # the large one waits until the channel is empty
    assert await channel.receive_batch() == [b"a" * 10]
    await settled()
    assert _held(channel) == (1, 500)  # alone: the small one after it waits again
    assert await channel.receive_batch() == [b"b" * 500]
    await sender
    assert await channel.receive_batch() == [b"c" * 10]


async def test_a_sender_cancelled_mid_batch_keeps_what_went_in_and_frees_the_next() -> None:
    channel: Channel[int] = Channel(2)
    first = asyncio.create_task(channel.send_batch([1, 2, 3, 4]))
    await settled()
    second = asyncio.create_task(channel.send_batch([9]))
    await settled()
    first.cancel()
    with pytest.raises(asyncio.CancelledError):
        await first
    assert await channel.receive_batch() == [1, 2]  # accepted before the cancel: kept
    async with asyncio.timeout(5):
        await second  # not starved by the cancelled sender
    assert await channel.receive_batch() == [9]


async def test_a_batch_sent_to_an_aborted_channel_is_broken() -> None:
    channel: Channel[int] = Channel(2)
    sender = asyncio.create_task(channel.send_batch([1, 2, 3]))
    await settled()
    channel.abort()
    with pytest.raises(BrokenChannel):
        await sender


async def test_the_fan_out_measures_each_record_once_for_every_sink() -> None:
    measured: list[bytes] = []

    def size(item: bytes) -> int:
        measured.append(item)
        return len(item)

    records: Channel[bytes] = Channel(8, max_bytes=1000, size=size)
    outputs = [Channel[bytes](8, max_bytes=1000, size=size) for _ in range(3)]
    async with asyncio.timeout(5), asyncio.TaskGroup() as tasks:
        tasks.create_task(FanOut(outputs).run(records))
        await records.send_batch([b"one", b"two", b"three"])
        records.close()
    assert measured == [b"one", b"two", b"three"]  # by the input, not again per output
    for output in outputs:
        assert [item async for item in output] == [b"one", b"two", b"three"]
        assert output.statistics().bytes == 0
