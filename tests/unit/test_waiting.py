"""The test suite's own waits (tests/support/waiting.py) wait on what they say."""

from __future__ import annotations

import asyncio
import itertools
import threading

import pytest
from corral.pipeline.channels import Channel
from corral.pipeline.events import SessionStatus

from tests.support.waiting import idle, retries, settled, until


async def relay(items_in: Channel[int], items_out: Channel[int]) -> None:
    async for item in items_in:
        await items_out.send(item)


async def test_settled_returns_once_a_chain_of_tasks_has_passed_everything_along() -> None:
    channels: list[Channel[int]] = [Channel(1) for _ in range(30)]
    async with asyncio.TaskGroup() as tasks:
        for here, there in itertools.pairwise(channels):
            tasks.create_task(relay(here, there))
        channels[0].try_send(7)
        await settled()
        assert channels[-1].try_receive() == 7
        for channel in channels:
            channel.close()


async def test_settled_counts_a_task_waiting_on_a_full_channel_as_blocked() -> None:
    channel: Channel[int] = Channel(1)
    channel.try_send(0)
    sender = asyncio.create_task(channel.send(1))
    await settled()
    assert channel.statistics().waiting_senders == 1
    assert channel.try_receive() == 0
    await sender


async def test_settled_fails_while_a_task_never_blocks() -> None:
    async def spin() -> None:
        while True:
            await asyncio.sleep(0)

    spinner = asyncio.create_task(spin())
    try:
        with pytest.raises(AssertionError, match="still running"):
            await settled(max_turns=50)
    finally:
        spinner.cancel()


async def test_until_sees_what_a_thread_makes_true() -> None:
    done = threading.Event()
    worker = threading.Thread(target=done.set)
    worker.start()
    await until(done.is_set, timeout=10, what="the thread")
    worker.join(timeout=10)


async def test_until_fails_naming_what_it_waited_for() -> None:
    with pytest.raises(AssertionError, match="the moon"):
        await until(lambda: False, timeout=0.05, what="the moon")


async def test_retries_looks_at_once_then_backs_off_until_its_timeout() -> None:
    loop = asyncio.get_running_loop()
    looks: list[float] = []
    with pytest.raises(AssertionError, match="the look"):
        async for _ in retries(timeout=0.05, what="the look"):
            looks.append(loop.time())
    # Sleeps of 1, 2, 4... ms: a handful of looks in 50 ms, not one a millisecond.
    assert 2 <= len(looks) < 20


class EndedSession:
    """A session that ended while working: `wait_idle` returns at once."""

    status = SessionStatus.WORKING

    async def wait_idle(self) -> None:
        return None


async def test_idle_fails_when_the_session_ended_instead() -> None:
    with pytest.raises(AssertionError, match="ended"):
        await idle(EndedSession())
