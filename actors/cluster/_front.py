"""The front's side of a session that runs on a Ray host: a proxy and its pump.

`RemoteActor` is what the front's `Session` handle drives (the `Actor` of
`actors/handle.py`) for a session on a `SessionHost`. Commands are direct
calls on the host actor, each answered by a `Reply`; they never wait
behind the session's records. `run` is the pump:

```
host.next_batch ──► events_in ──► FanOut ──┬► the app's sink (lines / stream)
 (≤ 256 records,    (bounded)              ├► the transcript archive
  waits for one)                           └► metrics
```

The next batch is asked for only once the previous one is in `events_in`:
a slow app fills the front's channels, the pump stops asking, the host's
outbox fills and its session stops reading the agent. The front's own
sinks (the line writer, the archive, the metrics) see the same ordered
records as for a local session, so the wire, the archive and `/metrics`
need no shared file system.

When the host is gone (its node died, its process was killed) the pump
ends the session itself, as `LineSink.abandon` does for a crash: from
the `SessionTail` of what it forwarded, the open requests closed, the
running turn `Failed`, `Idle`, numbered on without a gap, then the session
error (`ProcessExited`) and `Closed`, through the same sinks.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import Callable, Sequence
from typing import Any

import attrs
from ray.exceptions import ActorDiedError, ActorUnavailableError, NodeDiedError, RayError

from ...pipeline.channels import Channel
from ...pipeline.commands import RollbackScope
from ...pipeline.errors import CorralError, ErrorKind
from ...pipeline.events import (
    Answer,
    ConfigValue,
    Delivery,
    Event,
    SessionInfo,
    SessionStatus,
    SystemTime,
    TurnStarted,
)
from ...pipeline.records import Closed, CloseReason, SessionFailed, SinkItem
from ...pipeline.sizes import item_size
from ...pipeline.stages import FanOut, Sink
from ...sinks.lines import SessionTail
from ..session import ActorSettings
from ._host import Reply

__all__ = ["BATCH", "RemoteActor", "host_gone"]

BATCH = 256  # records per pull: one Ray call costs about what 256 records do
_GONE = (ActorDiedError, ActorUnavailableError, NodeDiedError)


@attrs.define
class _Facts:
    """What the handle reads of the engine, as the forwarded records say it."""

    failure: CorralError | None = None
    sequence: int = 0


@attrs.frozen
class _Where:
    pid: int | None  # the agent's pid on its node
    node: str


def host_gone(error: RayError) -> CorralError:
    """A Ray failure under a session, as the session's error."""
    kind = ErrorKind.PROCESS_EXITED if isinstance(error, _GONE) else ErrorKind.PROTOCOL_FAILED
    return CorralError(kind, f"the session's Ray host is gone: {type(error).__name__}")


class RemoteActor:
    def __init__(
        self,
        *,
        host: Any,  # the SessionHost's Ray actor handle
        session_id: str,
        info: SessionInfo,
        node: str,
        agent_pid: int | None,
        on_gone: Callable[[], None],
    ) -> None:
        self._host = host
        self.session_id = session_id
        self._info = info
        self.node = node
        self.engine = _Facts()
        self.driver = _Where(agent_pid, node)
        self._on_gone = on_gone
        self._tail = SessionTail()
        self._turns = 0
        self._channels: list[Channel[SinkItem]] = []
        self._changed = asyncio.Event()
        self._ending = False

    # ---- the pump ------------------------------------------------------------------

    async def run(self, sinks: Sequence[Sink], settings: ActorSettings) -> None:
        """Pull the session's records into the front's sinks until its `Closed`."""
        events_in, *outputs = self._channels = [
            _channel(capacity, f"{self.session_id}/{name}", settings)
            for capacity, name in [
                (settings.events_capacity, "front"),
                *((settings.sink_capacity, sink.name) for sink in sinks),
            ]
        ]
        async with asyncio.TaskGroup() as tasks:
            tasks.create_task(FanOut(outputs).run(events_in), name=f"{self.session_id}-fanout")
            for sink, channel in zip(sinks, outputs, strict=True):
                tasks.create_task(sink.run(channel), name=f"{self.session_id}-{sink.name}")
            try:
                await self._pull(events_in)
            finally:
                events_in.close()
                self._ending = True

    async def _pull(self, events_in: Channel[SinkItem]) -> None:
        while not self._tail.closed:
            try:
                batch = await self._host.next_batch.remote(self.session_id, BATCH)
            except RayError as error:
                self._on_gone()
                batch = self._last_words(host_gone(error))
            if not batch:  # the host lost the session without its end
                batch = self._last_words(
                    CorralError(ErrorKind.PROTOCOL_FAILED, "the Ray host lost this session")
                )
            for item in batch:
                self._saw(item)
                await events_in.send(item)
            self._changed.set()
            self._changed = asyncio.Event()

    def _saw(self, item: SinkItem) -> None:
        self._tail.saw(item)
        match item:
            case Event(kind=TurnStarted()):
                self._turns += 1
            case SessionFailed(error=error):
                self.engine.failure = error
                self._ending = True
            case Closed():
                self._ending = True
        if isinstance(item, Event):
            self.engine.sequence = max(self.engine.sequence, item.sequence)

    def _last_words(self, error: CorralError) -> list[SinkItem]:
        """The end the host can no longer send, numbered on from what was forwarded."""
        at = SystemTime.from_ns(time.time_ns())
        ending: list[SinkItem] = list(self._tail.last_events(self.session_id, error, at))
        if not self._tail.failed:
            ending.append(SessionFailed(session_id=self.session_id, error=error))
        ending.append(
            Closed(
                session_id=self.session_id,
                reason=CloseReason.FAILED,
                at=at,
                events=self._tail.sequence,  # `last_events` numbered on from it
                turns=self._turns,
            )
        )
        return ending

    # ---- the Actor the handle drives ---------------------------------------------

    def channels(self) -> Sequence[Channel[Any]]:
        return list(self._channels)

    def info(self) -> SessionInfo:
        return attrs.evolve(self._info, status=self._tail.status)

    async def _call(self, name: str, *args: object) -> Any:
        if self._ending:
            raise CorralError(ErrorKind.SESSION_CLOSED, f"session {self.session_id} has ended")
        try:
            reply: Reply = await self._host.command.remote(self.session_id, name, args)
        except RayError as error:
            raise host_gone(error) from None
        if reply.info is not None:
            self._info = reply.info
        if reply.error is not None:
            raise reply.error
        return reply.value

    async def prompt(self, text: str, attachments: tuple[str, ...] = ()) -> Delivery:
        delivery: Delivery = await self._call("prompt", text, attachments)
        return delivery

    async def dequeue(self, prompt_id: str) -> None:
        await self._call("dequeue", prompt_id)

    async def answer(self, request_id: str, answer: Answer) -> None:
        await self._call("answer", request_id, answer)

    async def cancel(self, clear_queue: bool = False) -> None:
        await self._call("cancel", clear_queue)

    async def configure(self, option: str, value: ConfigValue) -> SessionInfo:
        info: SessionInfo = await self._call("configure", option, value)
        return info

    async def rollback(self, turns: int, scope: RollbackScope) -> None:
        await self._call("rollback", turns, scope)

    async def compact(self) -> None:
        await self._call("compact")

    async def close(self) -> None:
        """Ask the host to end the session; its `Closed` comes through the pump."""
        if self._ending:
            return
        with contextlib.suppress(CorralError):  # ended, or the host is gone: the pump ends it
            await self._call("close")

    async def wait_status(self, wanted: SessionStatus) -> None:
        """The engine's status, as the handle means it: the host's, not the records'."""
        if wanted is SessionStatus.IDLE:
            with contextlib.suppress(RayError):  # the host is gone: the session ends
                made = await self._host.wait_idle.remote(self.session_id)
                # The engine's count, like a local session's (some may still be on the way).
                self.engine.sequence = max(self.engine.sequence, made)
            return
        while self._tail.status is not wanted and not self._tail.closed:
            await self._changed.wait()


def _channel(capacity: int, name: str, settings: ActorSettings) -> Channel[SinkItem]:
    return Channel(capacity, name=name, max_bytes=settings.channel_bytes, size=item_size)
