"""The batched hot path (issue 21), attacked where batching could break it.

A source sends a read's worth of driver events as one batch; the engine
takes and emits batches; the channels carry them, counted as their items and
bytes. Here a source shaped like a live one (every read one `send_batch`,
each batch larger than every channel) runs through a real session with
small channels, and each test fails if batching broke a property: order and
gapless sequence numbers across batch boundaries, a stalled sink stopping
the source mid-batch, a command going through while a batch is blocked.
"""

from __future__ import annotations

import asyncio
import os
import sys
from collections.abc import Awaitable, Callable
from pathlib import Path

from corral.actors.handle import Session
from corral.actors.runtime import Runtime, RuntimeSettings
from corral.actors.session import ActorSettings
from corral.pipeline.channels import Channel
from corral.pipeline.driver import (
    DriverCommand,
    Emitted,
    EventSink,
    Handshake,
    Interrupt,
    StartTurn,
    TurnBegan,
    TurnFinished,
)
from corral.pipeline.events import AgentDetails, Cancelled, Completed, Event, TextDelta, TurnEnded
from corral.sources._jsonrpc import Incoming, JsonRpcPeer, RpcNotification
from corral.sources._process import AgentProcess

from tests.support.waiting import until

from .helpers import GateSink, catalog_of

SMALL = RuntimeSettings(actor=ActorSettings(driver_capacity=4, events_capacity=8, sink_capacity=8))
PER_READ = 50  # driver events per batch: more than any channel above holds
READS = 40


class BatchingDriver:
    """A live source without a process: each "read" is one batch of text deltas."""

    def __init__(self) -> None:
        self.commands: list[DriverCommand] = []
        self.reads = 0  # batches begun
        self._go = asyncio.Event()
        self._interrupted = asyncio.Event()
        self._stopped = asyncio.Event()

    async def start(self, tasks: asyncio.TaskGroup) -> Handshake:
        return Handshake(details=AgentDetails())

    async def run(self, events_out: EventSink) -> None:
        await self._go.wait()
        await events_out.send(TurnBegan())
        stop: Completed | Cancelled = Completed()
        for read in range(READS):
            if self._interrupted.is_set():
                stop = Cancelled()
                break
            self.reads += 1
            first = read * PER_READ
            await events_out.send_batch(
                [
                    Emitted(kind=TextDelta(message_id="m1", text=str(n)))
                    for n in range(first, first + PER_READ)
                ]
            )
        await events_out.send(TurnFinished(stop=stop))
        await self._stopped.wait()

    async def send(self, command: DriverCommand) -> None:
        self.commands.append(command)
        if isinstance(command, StartTurn):
            self._go.set()
        if isinstance(command, Interrupt):
            self._interrupted.set()

    async def stop(self, grace: float) -> None:
        self._stopped.set()
        self._go.set()


async def _drain(session: Session, into: list[Event]) -> None:
    async for event in session.events():
        into.append(event)


def _turn_ended(events: list[Event]) -> bool:
    return any(isinstance(e.kind, TurnEnded) for e in events)


def _source_blocked(session: Session) -> bool:
    """The source waits, mid-batch, on a full driver channel."""
    stats = session.channels()[0].statistics()
    return stats.depth == stats.capacity and stats.waiting_senders == 1


async def test_order_and_sequence_numbers_hold_across_batch_boundaries() -> None:
    driver, gate = BatchingDriver(), GateSink()
    gate.gate.set()
    async with Runtime(catalog=catalog_of(driver, "batching"), settings=SMALL) as rt:
        session = await rt.open("batching", dir=".", extra_sinks=[gate])
        app_events: list[Event] = []
        async with asyncio.timeout(30), asyncio.TaskGroup() as tasks:
            tasks.create_task(_drain(session, app_events))
            await session.prompt("go")
            await until(lambda: _turn_ended(app_events))
            await session.close()
    texts = [e.kind.text for e in app_events if isinstance(e.kind, TextDelta)]
    assert texts == [str(n) for n in range(READS * PER_READ)]
    sequences = [e.sequence for e in app_events]
    assert sequences == list(range(1, len(sequences) + 1))
    assert [e.sequence for e in gate.events()] == sequences


async def _stalled(
    driver: BatchingDriver, while_blocked: Callable[[Session], Awaitable[None]]
) -> list[Event]:
    """A turn whose sink stalls until the source is blocked mid-batch and
    `while_blocked` has run; every event the app saw."""
    gate = GateSink()
    async with Runtime(catalog=catalog_of(driver, "batching"), settings=SMALL) as rt:
        session = await rt.open("batching", dir=".", extra_sinks=[gate])
        app_events: list[Event] = []
        async with asyncio.TaskGroup() as tasks:
            tasks.create_task(_drain(session, app_events))
            await session.prompt("go")
            try:
                await until(lambda: _source_blocked(session))
                await while_blocked(session)
            finally:
                gate.gate.set()  # a failure above must not leave the session stalled
            await until(lambda: _turn_ended(app_events), timeout=30)
            await session.close()
    sequences = [e.sequence for e in app_events]
    assert sequences == list(range(1, len(sequences) + 1))
    return app_events


async def test_a_stalled_sink_stops_a_batching_source_mid_batch() -> None:
    driver = BatchingDriver()

    async def paused(session: Session) -> None:
        produced, reads = session.events_made, driver.reads
        for _ in range(200):  # every ready task, many times over: nothing moves
            await asyncio.sleep(0)
        assert (session.events_made, driver.reads) == (produced, reads)
        # Bounded by the channels and one batch, not the turn (2,000 deltas).
        assert reads <= 2 and produced <= 4 * 8 + 2 * PER_READ
        held = sum(c.statistics().depth for c in session.channels())
        assert held <= 4 + 8 + 8 * (len(session.channels()) - 2)

    app_events = await _stalled(driver, paused)
    texts = [e for e in app_events if isinstance(e.kind, TextDelta)]
    assert len(texts) == READS * PER_READ  # nothing lost


async def test_a_cancel_goes_through_at_once_while_a_batch_is_blocked() -> None:
    driver = BatchingDriver()

    async def cancel(session: Session) -> None:
        async with asyncio.timeout(2):  # not behind the blocked batch
            await session.cancel()
            await session.prompt("queued behind")
            await session.cancel(clear_queue=True)
        assert any(isinstance(c, Interrupt) for c in driver.commands)
        assert _source_blocked(session)  # the batch is still blocked: nothing waited for it

    app_events = await _stalled(driver, cancel)
    (ended,) = [e.kind for e in app_events if isinstance(e.kind, TurnEnded)]
    assert isinstance(ended.stop, Cancelled)
    assert driver.reads < READS  # the source stopped at the next read


# ---- a real agent process: the pump's batches and the pipe ---------------------------------

FLOOD = 20_000  # notifications, about 1.3 MB: far more than the pipe and the channel hold
_FLOODER = f"""
import sys
line = '{{"jsonrpc":"2.0","method":"n","params":{{"i":%d,"pad":"{"p" * 40}"}}}}\\n'
out = sys.stdout
for start in range(0, {FLOOD}, 500):  # large writes: every read holds many lines
    out.write("".join(line % i for i in range(start, start + 500)))
out.flush()
"""


def _wrote(pid: int) -> int:
    for line in Path(f"/proc/{pid}/io").read_text().splitlines():
        if line.startswith("wchar:"):
            return int(line.split()[1])
    raise AssertionError(f"no wchar for {pid}")


async def _stopped_writing(pid: int) -> int:
    """Until the agent's written bytes hold still across several looks; that count."""
    still, written = 0, -1
    while still < 5:
        await asyncio.sleep(0.05)  # a look at the agent, repeated until it holds still
        now = _wrote(pid)
        still = still + 1 if now == written else 0
        written = now
    return written


async def test_a_full_channel_stops_the_pump_mid_read_and_the_pipe_stops_the_agent(
    tmp_path: Path,
) -> None:
    bound = 64 * 1024
    incoming: Channel[Incoming] = Channel(
        64, name="incoming", max_bytes=bound, size=lambda item: 256 + getattr(item, "size", 0)
    )
    async with asyncio.timeout(60), asyncio.TaskGroup() as tasks:
        agent = await AgentProcess.spawn(
            [sys.executable, "-c", _FLOODER], cwd=str(tmp_path), env=dict(os.environ), tasks=tasks
        )
        pump = tasks.create_task(JsonRpcPeer(agent).pump(incoming))
        await until(lambda: incoming.statistics().waiting_senders == 1)
        written = await _stopped_writing(agent.pid)
        stats = incoming.statistics()
        assert written < FLOOD * 60  # the agent is stopped short of its flood
        assert stats.depth <= 64 and stats.bytes <= bound  # a read's batch was split
        assert not pump.done()
        got = [item async for item in incoming]
        await pump
        await agent.stop(1.0)
    indices = [item.params["i"] for item in got if isinstance(item, RpcNotification)]
    assert indices == list(range(FLOOD))  # nothing lost, in order across reads
