"""SessionHost: the Ray actor that runs many sessions on one node.

One host per CPU of a node (placed there with node affinity, `_hosts.py`), an
async Ray actor: on its own event loop it keeps a plain `Runtime` (no
archive, no metrics: those are the front's) that resolves the agent on
this node, checks `dir` as seen here, builds driver, engine and policy and
runs the usual `SessionActor`, under the front's session id.

Each hosted session has exactly one sink, its `Outbox`: the records wait in
that sink's bounded channel until the front pulls them with `next_batch`
(up to `limit` at once, waiting for at least one). A front that stops
pulling fills the channel; the session's fan-out waits, then its actor,
then the driver stops reading the agent: backpressure from the app to the
agent across the network, nothing dropped. Commands are other calls on the
same actor (a Ray async actor runs them concurrently), never queued behind
a batch. Every answer is a `Reply`: a `CorralError` travels as a value, not
as Ray's wrapped exception.

When the host's process dies (its node died, it was killed), its agents
must not live on: `_reaper.py` keeps their process groups and ends them.
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import Mapping
from typing import Any

import attrs

from ...pipeline.channels import Channel, EndOfChannel
from ...pipeline.commands import SessionOptions
from ...pipeline.errors import CorralError, ErrorKind
from ...pipeline.events import SessionInfo
from ...pipeline.records import Closed, SinkItem
from .._collector import tune_collector
from .._runtime_open import checked_dir
from ..runtime import Runtime
from ._reaper import AgentReaper

__all__ = ["COMMANDS", "Opening", "Outbox", "Reply", "SessionHost"]

# What the front may ask of a hosted session, by the `Session` method's name.
COMMANDS = frozenset(
    {"prompt", "dequeue", "answer", "cancel", "configure", "rollback", "compact", "close"}
)


@attrs.frozen(kw_only=True)
class Reply:
    value: object = None
    error: CorralError | None = None
    info: SessionInfo | None = None  # the session's info after the command, while it runs


@attrs.frozen(kw_only=True)
class Opening:
    info: SessionInfo
    dir: str  # the session's directory as this node sees it
    agent_pid: int | None


class Outbox:
    """A hosted session's one sink: its records wait for the front's pull."""

    name = "front"

    def __init__(self) -> None:
        self._items: asyncio.Future[Channel[SinkItem]] = asyncio.get_running_loop().create_future()
        self._taken = asyncio.Event()
        self._dropped = False

    async def run(self, items_in: Channel[SinkItem]) -> None:
        self._items.set_result(items_in)
        await self._taken.wait()  # the session ends once the front has its `Closed`...
        if self._dropped:
            async for _ in items_in:  # ...or, with no front left to pull, unread
                pass

    def drop(self) -> None:
        """Nobody will pull any more (the host stops): the rest goes nowhere."""
        self._dropped = True
        self._taken.set()

    async def take(self, limit: int) -> list[SinkItem]:
        """The next records, at most `limit`, waiting for one; [] after the end."""
        items = await asyncio.shield(self._items)
        try:
            batch = await items.receive_batch(limit)
        except EndOfChannel:
            batch = []
        if not batch or isinstance(batch[-1], Closed):
            self._taken.set()
        return batch


class SessionHost:
    def __init__(self, runtime_options: Mapping[str, Any]) -> None:
        tune_collector()  # a host's process is corral's own (`actors/_collector.py`)
        self._runtime_options = runtime_options  # the front's mock, policy, settings
        self._outboxes: dict[str, Outbox] = {}
        self._agents: dict[str, int | None] = {}  # each session's agent process group
        self._ready = asyncio.Event()
        self._stopping = asyncio.Event()
        self._runtime: Runtime | None = None
        self._main: asyncio.Future[None] | None = None
        self._reaper = AgentReaper()

    async def start(self) -> int:
        """Start the host's Runtime; answers this process's pid."""
        if self._main is None:
            # The host's lifetime, across calls: it ends in `stop`.
            self._main = asyncio.ensure_future(self._serve())
        await self._ready.wait()
        return os.getpid()

    async def _serve(self) -> None:
        runtime = Runtime(transcripts=False, **self._runtime_options)
        async with runtime:
            self._runtime = runtime
            self._ready.set()
            await self._stopping.wait()
        self._reaper.close()

    def _live(self) -> Runtime:
        if self._runtime is None or self._stopping.is_set():
            raise CorralError(ErrorKind.SESSION_CLOSED, "this Ray host is stopping")
        return self._runtime

    async def open(self, session_id: str, spec: SessionOptions) -> Reply:
        outbox = Outbox()
        try:
            runtime = self._live()
            session_dir = await asyncio.to_thread(checked_dir, spec.dir)
            session, _ = await runtime._start(spec, app_sink=outbox, session_id=session_id)
        except CorralError as error:
            return Reply(error=error)
        self._outboxes[session_id] = outbox
        self._agents[session_id] = session.agent_pid
        self._reaper.keep(session.agent_pid)
        opening = Opening(info=session.info(), dir=session_dir, agent_pid=session.agent_pid)
        return Reply(value=opening)

    async def next_batch(self, session_id: str, limit: int) -> list[SinkItem]:
        outbox = self._outboxes.get(session_id)
        if outbox is None:
            return []
        batch = await outbox.take(limit)
        if not batch or isinstance(batch[-1], Closed):
            del self._outboxes[session_id]
            self._reaper.forget(self._agents.pop(session_id, None))
        return batch

    async def command(self, session_id: str, name: str, args: tuple[object, ...]) -> Reply:
        if name not in COMMANDS:
            raise ValueError(f"not a session command: {name!r}")
        try:
            session = self._live().session(session_id)
            value = await getattr(session, name)(*args)
            info = None if session.ended else session.info()
        except CorralError as error:
            return Reply(error=error)
        return Reply(value=value, info=info)

    async def wait_idle(self, session_id: str) -> int:
        """Once the session's engine is idle (or it has ended): the events it numbered."""
        try:
            session = self._live().session(session_id)
        except CorralError:
            return 0
        await session.wait_idle()
        return session.events_made

    def load(self) -> int:
        """How many sessions this host runs."""
        return len(self._outboxes)

    async def stop(self) -> None:
        """Close every session and end. The front has pulled every session's end
        before it stops its hosts; what is left has nobody to pull it."""
        for outbox in self._outboxes.values():
            outbox.drop()
        self._stopping.set()
        if self._main is not None:
            await self._main
