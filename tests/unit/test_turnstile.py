"""The turnstile: busy sessions take turns, a bounded number per pass of the loop."""

from __future__ import annotations

import asyncio
import gc
import weakref

import pytest
from corral.actors._turnstile import FIRST_WORDS, TakingTurns, Turnstile, turnstile
from corral.pipeline.channels import Channel

from tests.support.passes import Passes


async def _let_through(gate: Turnstile, count: int) -> tuple[list[int], list[int]]:
    """`count` tasks take a turn at once: the order they got through, and the pass."""
    order: list[int] = []
    passes: list[int] = []
    clock = Passes()

    async def wait_turn(index: int) -> None:
        await gate.take_turn()
        order.append(index)
        passes.append(clock.now)

    async with asyncio.TaskGroup() as tasks:
        for index in range(count):
            tasks.create_task(wait_turn(index))
    clock.stop()
    return order, passes


async def test_at_most_width_get_through_per_pass_in_the_order_they_came() -> None:
    gate = Turnstile(width=3)
    order, passes = await _let_through(gate, 10)
    assert order == list(range(10))  # first come, first through: nobody skipped
    per_pass = [passes.count(p) for p in sorted(set(passes))]
    assert per_pass == [3, 3, 3, 1]  # never more than the width in one pass
    assert gate.waiting == 0


async def test_fewer_than_the_width_all_get_through_in_the_next_pass() -> None:
    gate = Turnstile(width=16)
    order, passes = await _let_through(gate, 5)
    assert order == list(range(5))
    assert len(set(passes)) == 1


async def test_a_cancelled_waiter_takes_no_place() -> None:
    gate = Turnstile(width=1)
    got_through: list[str] = []

    async def wait_turn(name: str) -> None:
        await gate.take_turn()
        got_through.append(name)

    first = asyncio.create_task(wait_turn("cancelled"))
    second = asyncio.create_task(wait_turn("second"))
    await asyncio.sleep(0)  # both are waiting now
    assert gate.waiting == 2
    first.cancel()
    await second  # the one place of the next pass goes to the next live waiter
    assert got_through == ["second"]
    assert first.cancelled()


def test_a_turnstile_lets_at_least_one_through() -> None:
    with pytest.raises(ValueError, match="at least one"):
        Turnstile(width=0)


async def test_one_turnstile_per_loop() -> None:
    assert turnstile() is turnstile()


def test_a_finished_loop_is_not_kept_alive_by_its_turnstile() -> None:
    async def take_one() -> None:
        await turnstile().take_turn()

    loop = asyncio.new_event_loop()
    loop.run_until_complete(take_one())
    loop.close()
    gone = weakref.ref(loop)
    del loop
    gc.collect()
    assert gone() is None


class _CountingGate(Turnstile):
    def __init__(self) -> None:
        super().__init__()
        self.turns = 0

    async def take_turn(self) -> None:
        self.turns += 1
        await super().take_turn()


async def test_a_sender_sends_its_first_words_then_takes_a_turn_each_share() -> None:
    channel: Channel[int] = Channel(100)
    gate = _CountingGate()
    share = FIRST_WORDS + 2
    sender = TakingTurns(channel, share=share, turns=gate)
    turns_after: list[int] = []
    for item in range(FIRST_WORDS + share + 1):
        await sender.send(item)
        turns_after.append(gate.turns)
    # The first words go at once, then a turn; then a turn after each share.
    assert turns_after == [0] * (FIRST_WORDS - 1) + [1] * share + [2, 2]
    sent = len(turns_after)
    await sender.send_batch(list(range(sent, sent + share - 1)))  # a batch counts as its items
    assert gate.turns == 3
    total = sent + share - 1
    assert [channel.try_receive() for _ in range(total)] == list(range(total))


async def test_a_sender_waiting_for_its_turn_has_sent_what_it_was_given() -> None:
    channel: Channel[int] = Channel(100)
    gate = Turnstile(width=1)
    sender = TakingTurns(channel, share=FIRST_WORDS, turns=gate)
    for item in range(FIRST_WORDS - 1):
        await sender.send(item)
    others = [asyncio.ensure_future(gate.take_turn()) for _ in range(3)]  # a queue before it
    await asyncio.sleep(0)
    last = asyncio.ensure_future(sender.send(FIRST_WORDS - 1))
    await asyncio.sleep(0)
    assert not last.done()  # it waits behind the others...
    assert len(channel) == FIRST_WORDS  # ...with its item already in the channel
    await asyncio.gather(last, *others)
