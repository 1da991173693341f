"""The archive's disk thread: one thread, rounds of calls, results and errors to the callers."""

from __future__ import annotations

import asyncio
import threading
from typing import Any

import pytest
from corral.sinks.transcript._worker import DiskWorker


async def test_a_call_runs_in_the_worker_thread_and_its_result_comes_back() -> None:
    worker = DiskWorker(name="test-disk")
    try:
        name = await worker.run(lambda: threading.current_thread().name)
    finally:
        worker.close()
    assert name == "test-disk"


async def test_what_a_call_raises_is_raised_in_its_caller_and_the_thread_goes_on() -> None:
    worker = DiskWorker()

    def fail() -> None:
        raise OSError(28, "No space left on device")

    try:
        with pytest.raises(OSError, match="No space left"):
            await worker.run(fail)
        assert await worker.run(lambda: 42) == 42
    finally:
        worker.close()


async def test_calls_pending_together_run_in_one_round_and_wake_the_loop_once(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """While the thread is busy, later calls gather; it takes them all at once, in order."""
    loop = asyncio.get_running_loop()
    wakeups: list[object] = []
    threadsafe = loop.call_soon_threadsafe

    def counted(callback: Any, *args: Any) -> asyncio.Handle:
        wakeups.append(callback)
        return threadsafe(callback, *args)

    monkeypatch.setattr(loop, "call_soon_threadsafe", counted)
    worker = DiskWorker()
    entered, release = threading.Event(), threading.Event()
    ran: list[int] = []

    def blocker() -> None:
        entered.set()
        release.wait()

    try:
        first = asyncio.ensure_future(worker.run(blocker))
        await asyncio.to_thread(entered.wait)
        wakeups.clear()  # to_thread's own
        calls = [asyncio.ensure_future(worker.run(lambda n=n: ran.append(n))) for n in range(50)]
        await asyncio.sleep(0)  # every call is pending behind the blocker
        release.set()
        await asyncio.gather(first, *calls)
    finally:
        worker.close()
    assert ran == list(range(50))
    assert len(wakeups) == 2  # the blocker's round, and the fifty's


def test_close_runs_what_is_pending_then_stops_the_thread() -> None:
    worker = DiskWorker()
    done: list[str] = []

    async def hand_over() -> asyncio.Future[None]:
        handed = asyncio.ensure_future(worker.run(lambda: done.append("written")))
        await asyncio.sleep(0)  # the call is handed over
        return handed

    loop = asyncio.new_event_loop()
    try:
        future = loop.run_until_complete(hand_over())
        worker.close()  # the call is pending or running: it still runs
        loop.run_until_complete(future)
    finally:
        loop.close()
    assert done == ["written"]
    assert not worker._thread.is_alive()


async def test_a_closed_worker_refuses_new_calls() -> None:
    worker = DiskWorker()
    worker.close()
    with pytest.raises(RuntimeError, match="closed"):
        await worker.run(lambda: None)
