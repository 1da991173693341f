"""SessionActor: one session's engine, driver and sinks, wired by channels.

```
driver.run ─► driver_events ─► [engine] ─► events_out ─► FanOut ─┬► sink channel ─► sink
   ▲ (bounded)                   │ to_driver                       └► ...
   └──────── driver.send ◄───────┘
```

The actor loop feeds the engine a batch of driver events at a time (what
the driver holds, at most `_FAIR_SHARE`) and only when the previous output
has gone out, as one batch; before a full share, or while others wait for
theirs, it takes its turn at the loop's turnstile (`_turnstile.py`: many
busy sessions take turns, and so do their drivers). While `events_out` is
full the loop waits, `driver_events` fills, and the driver stops reading
the agent: backpressure, nothing dropped. Commands (`prompt`, `answer`,
`cancel`, `close`...) call the engine directly from the caller's task and
forward what it decided to the agent at once, so they are never queued
behind the event path; their events join the outbox, which the loop
flushes in order. What the driver already handed over goes into the engine
first (unless the loop is waiting on the sinks): the agent said it before
the command, so a prompt's `TurnStarted` follows it, as in the wire.

Lifecycle: `run` returns after the session ended (closed by the app, the
agent died, or the wire failed) and every sink has seen `Closed`.

The engine makes every session record (`Opened`, `Prompted`, `Decision`,
`SessionFailed`, `Closed`, see `pipeline/records.py`); the actor only
carries its outbox to the sinks, in order.

A sink that cannot keep the records (the transcript on a full disk) tells
the actor through `sink_failed`; the app hears it as an Error `Diagnostic`
(extension `corral/sink_failed`) and the session goes on. Before its last
records (the session error, `Closed`) the actor waits until such sinks
have handled everything sent before, so a failure on the session's last
events still reaches the app; only the footer's own failure cannot.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Mapping, Sequence
from typing import Protocol, TypeVar, runtime_checkable

import attrs

from ..pipeline.channels import BrokenChannel, Channel
from ..pipeline.commands import RollbackScope
from ..pipeline.driver import AgentExited, Driver, DriverEvent
from ..pipeline.errors import AgentGone, CorralError, ErrorKind
from ..pipeline.events import (
    Answer,
    ConfigValue,
    Delivery,
    Diagnostic,
    DiagnosticLevel,
    SessionInfo,
    SessionStatus,
)
from ..pipeline.records import SinkItem
from ..pipeline.sizes import item_size
from ..pipeline.stages import FanOut, Sink
from ..pipeline.wakeup import Wakeup
from ._turnstile import TakingTurns, Turnstile, turnstile
from .engine import Engine, Pending

__all__ = ["ActorSettings", "FallibleSink", "SessionActor"]

T = TypeVar("T")
_FAIR_SHARE = 32  # driver events handled before yielding to other tasks


@runtime_checkable
class FallibleSink(Protocol):
    """A sink that may fail on its own (a disk): it calls back, once, on the event loop."""

    def on_failure(self, report: Callable[[str, str, Mapping[str, object]], None]) -> None: ...

    async def caught_up(self, count: int) -> None:
        """Return once the first `count` records it was sent are handled (kept or lost)."""
        ...


@attrs.frozen(kw_only=True)
class ActorSettings:
    driver_capacity: int = 64  # driver events buffered before the source pauses
    events_capacity: int = 256  # records buffered before the engine pauses
    sink_capacity: int = 256  # per sink
    # Each of those channels also holds at most this many bytes (`pipeline.sizes`):
    # 256 events of an agent's 16 MB lines would be 4 GB. A larger item passes alone.
    channel_bytes: int = 8 * 1024 * 1024
    close_grace: float = 5.0  # EOF → SIGTERM → SIGKILL within this
    command_timeout: float = 30.0  # writing a command to a stuck agent


class SessionActor:
    def __init__(
        self,
        *,
        engine: Engine,
        driver: Driver,
        sinks: Sequence[Sink],
        settings: ActorSettings | None = None,
        on_ending: Callable[[], None] | None = None,
    ) -> None:
        """`on_ending` is called once the session takes no more commands, just before
        its last records (the session error, `Closed`) go to the sinks."""
        self.engine = engine
        self.driver = driver
        self.settings = settings if settings is not None else ActorSettings()
        self.session_id = engine.session_id
        size, max_bytes = item_size, self.settings.channel_bytes
        self.driver_events: Channel[DriverEvent] = Channel(
            self.settings.driver_capacity,
            name=f"{self.session_id}/driver",
            max_bytes=max_bytes,
            size=size,
        )
        self.events_out: Channel[SinkItem] = Channel(
            self.settings.events_capacity,
            name=f"{self.session_id}/engine",
            max_bytes=max_bytes,
            size=size,
        )
        self.sink_channels = [
            Channel[SinkItem](
                self.settings.sink_capacity,
                name=f"{self.session_id}/{sink.name}",
                max_bytes=max_bytes,
                size=size,
            )
            for sink in sinks
        ]
        self._sinks = tuple(sinks)
        self._input = Wakeup(self.driver_events)  # the loop's wait: driver, commands, time
        self._driver_lock = asyncio.Lock()
        self._stopped = asyncio.Event()
        self._stop_lock = asyncio.Lock()
        self._done = asyncio.Event()
        self._status_seen = engine.status
        self._status_changed = asyncio.Event()
        self._sent = 0  # records sent to the sinks
        self._sinks_behind = False  # the loop waits for room in `events_out`
        self._final = False  # the last records are going out: nothing more joins
        self._ending = False
        self._on_ending = on_ending
        self._fallible = [sink for sink in sinks if isinstance(sink, FallibleSink)]
        for sink in self._fallible:
            sink.on_failure(self.sink_failed)

    def channels(self) -> list[Channel[DriverEvent] | Channel[SinkItem]]:
        """Every channel of this session, for metrics and tests."""
        return [self.driver_events, self.events_out, *self.sink_channels]

    # ---- running ---------------------------------------------------------------

    async def run(self, tasks: asyncio.TaskGroup) -> None:
        fanout = FanOut(self.sink_channels)
        consumers = [
            tasks.create_task(fanout.run(self.events_out), name=f"{self.session_id}-fanout")
        ]
        for sink, channel in zip(self._sinks, self.sink_channels, strict=True):
            consumers.append(
                tasks.create_task(sink.run(channel), name=f"{self.session_id}-{sink.name}")
            )
        turns = turnstile()  # the loop's: this session's actor and driver take turns there
        tasks.create_task(self._run_driver(turns), name=f"{self.session_id}-driver")
        try:
            await self._loop(turns)
        except BaseException:
            self._final = True
            raise
        finally:
            self.driver_events.abort()  # a driver still sending gets BrokenChannel
        await self._stop_driver()
        await self._finish()
        for consumer in consumers:
            await consumer  # every sink has seen Closed
        self._done.set()
        self._announce_status()

    async def _finish(self) -> None:
        """The session's last records: its error (if any) and `Closed`."""
        engine = self.engine
        # The app may see `closed` before the slowest sink is done with it: from now
        # on every command gets SessionClosed.
        self._ending = True
        if self._on_ending is not None:
            self._on_ending()
        for sink in self._fallible:
            await sink.caught_up(self._sent)  # a failure so far joins the stream...
        await self._flush_outbox()  # ...here
        self._final = True
        engine.finish()  # the session error, if any, and `Closed`: the engine's records
        await self._flush_outbox()
        self.events_out.close()

    async def _run_driver(self, turns: Turnstile) -> None:
        try:
            await self.driver.run(TakingTurns(self.driver_events, _FAIR_SHARE, turns))
        except BrokenChannel:
            pass  # the session is over; nobody reads the driver's events any more
        finally:
            self.driver_events.close()

    async def _loop(self, turns: Turnstile) -> None:
        engine = self.engine
        driver_events = self.driver_events
        while True:
            if engine.outbox or engine.status is not self._status_seen:
                await self._flush_outbox()
            if engine.to_driver:
                await self._flush_driver()
            if engine.finished:
                await self._flush_outbox()
                return
            if len(driver_events):
                if len(driver_events) >= _FAIR_SHARE or turns.waiting:
                    # A full share (nothing here would suspend while channels
                    # have room), or others already waiting for their turn: let
                    # them (and the app's commands) run first, a bounded number
                    # per pass of the loop.
                    await turns.take_turn()
                # What the driver holds, as one batch (a command may have taken it in).
                batch = driver_events.take_ready(_FAIR_SHARE)
                if batch:
                    engine.on_driver_events(batch)
                continue
            if driver_events.closed:
                # The driver ended without saying why; the agent is gone.
                engine.on_driver_event(AgentExited(status="unknown", stderr=""))
                continue
            engine.on_quiescent()
            if engine.outbox or engine.to_driver:
                continue
            await self._wait_for_input()

    async def _wait_for_input(self) -> None:
        """Until the driver sends, a command kicks, or the engine's next deadline."""
        engine = self.engine
        deadline = engine.next_deadline()
        at_most = None if deadline is None else deadline - engine.clock()
        await self._input.wait(at_most)
        if deadline is not None and engine.clock() >= deadline:
            engine.on_time()

    async def _flush_outbox(self) -> None:
        """The engine's records to the sinks, in order, as one batch."""
        outbox = self.engine.outbox
        while outbox:
            records = list(outbox)
            outbox.clear()  # what a command adds meanwhile goes in the next batch
            self._sinks_behind = True  # while this waits, commands leave the driver's events
            try:
                await self.events_out.send_batch(records)
            finally:
                self._sinks_behind = False
            self._sent += len(records)
        if self.engine.status is not self._status_seen:
            self._announce_status()

    def _announce_status(self) -> None:
        """Wake everyone waiting for a status (one event per change, then a fresh one)."""
        self._status_seen = self.engine.status
        changed, self._status_changed = self._status_changed, asyncio.Event()
        changed.set()

    async def _flush_driver(self) -> None:
        """Send the engine's decisions to the agent, in order, one writer at a time."""
        to_driver = self.engine.to_driver
        if not to_driver:
            return
        async with self._driver_lock:
            while to_driver:
                command = to_driver.popleft()
                try:
                    async with asyncio.timeout(self.settings.command_timeout):
                        await self.driver.send(command)
                except AgentGone:
                    pass  # the driver's run reports the exit
                except TimeoutError:
                    raise CorralError(
                        ErrorKind.PROTOCOL_FAILED,
                        f"{self.engine.agent.name} is not reading its input",
                    ) from None

    async def _stop_driver(self) -> None:
        """Stop the agent once; every caller returns when it is stopped."""
        async with self._stop_lock:
            if not self._stopped.is_set():
                await self.driver.stop(self.settings.close_grace)
                self._stopped.set()

    def sink_failed(self, sink: str, message: str, fields: Mapping[str, object]) -> None:
        """A sink lost the session's records from here on: tell the app, go on.

        Once the last records are on their way nothing more can join the
        stream; the sink's own report (stderr, metrics) remains.
        """
        if self._final:
            return
        self.engine.emit(
            Diagnostic(level=DiagnosticLevel.ERROR, message=message),
            in_turn=False,
            extensions={"corral/sink_failed": {"sink": sink, **fields}},
        )
        self._kick()

    # ---- commands (called from other tasks) -----------------------------------

    def _kick(self) -> None:
        self._input.kick()

    async def _settle(self, outcome: T | Pending) -> T:
        self._kick()
        await self._flush_driver()
        if not isinstance(outcome, Pending):
            return outcome
        waiter: asyncio.Future[object] = asyncio.get_running_loop().create_future()

        def done(pending: Pending) -> None:
            if waiter.done():
                return
            if pending.error is not None:
                waiter.set_exception(pending.error)
            else:
                waiter.set_result(pending.value)

        outcome.on_settle(done)
        return await waiter  # type: ignore[return-value]

    async def _call(self, action: Callable[[], T | Pending]) -> T:
        if self._ending:
            raise CorralError(ErrorKind.SESSION_CLOSED, f"session {self.session_id} has ended")
        self._take_in_arrived()
        return await self._settle(action())

    def _take_in_arrived(self) -> None:
        """Before a command, the driver's events that came before it: the agent said
        them first (as the wire recording has them), so a prompt's `TurnStarted`
        follows what was said between turns, and a prompt after a turn that has in
        fact ended starts at once. Not while the loop waits on the sinks: then the
        driver's channel is the backpressure, and what it holds waits its turn."""
        engine = self.engine
        if len(self.driver_events) and not self._sinks_behind and not engine.finished:
            self._kick()  # the loop sends what this makes (or sees the engine broken)
            engine.on_driver_events(self.driver_events.take_ready(self.settings.driver_capacity))

    async def prompt(self, text: str, attachments: tuple[str, ...] = ()) -> Delivery:
        result: Delivery = await self._call(lambda: self.engine.prompt(text, attachments))
        return result

    async def dequeue(self, prompt_id: str) -> None:
        await self._call(lambda: self.engine.dequeue(prompt_id))

    async def answer(self, request_id: str, answer: Answer) -> None:
        await self._call(lambda: self.engine.answer(request_id, answer))

    async def cancel(self, clear_queue: bool = False) -> None:
        await self._call(lambda: self.engine.cancel(clear_queue))

    async def configure(self, option: str, value: ConfigValue) -> SessionInfo:
        result: SessionInfo = await self._call(lambda: self.engine.configure(option, value))
        return result

    async def rollback(self, turns: int, scope: RollbackScope) -> None:
        await self._call(lambda: self.engine.rollback(turns, scope))

    async def compact(self) -> None:
        await self._call(self.engine.compact)

    def info(self) -> SessionInfo:
        return self.engine.info()

    async def close(self) -> None:
        """End the session; returns once the agent is stopped (within the grace)."""
        if self._done.is_set():
            return
        if not self.engine.finished:
            self.engine.close()
        self._kick()
        await self._stop_driver()

    async def wait_closed(self) -> None:
        await self._done.wait()

    async def wait_status(self, wanted: SessionStatus) -> None:
        """Return once the session's status is `wanted`, or once it has ended.

        The status is the engine's; its events may still be on their way to
        the sinks when this returns.
        """
        while self.engine.status is not wanted and not self._done.is_set():
            await self._status_changed.wait()  # also set once the session is done


def monotonic() -> float:
    return time.monotonic()
