"""`Cluster`: the Runtime's way to a Ray cluster; Ray is imported only here, lazily.

`Runtime(ray=...)` holds a `Cluster`. Its `hosting` context connects (in a
worker thread: `ray.init` blocks) and, on the way out, stops every host;
`open` places a session (`_hosts.py`), opens it on its host and starts the
pump (`_front.py`) in the Runtime's task group. Nothing here runs without
`--ray` / `ray=`, and importing this module does not import Ray.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable, Sequence
from contextlib import asynccontextmanager
from typing import TYPE_CHECKING, Any

from ...pipeline.channels import Channel
from ...pipeline.commands import SessionOptions
from ...pipeline.stages import Sink
from ...sinks.metrics import Metrics
from ..handle import Session
from ..session import ActorSettings

if TYPE_CHECKING:
    from ._hosts import Host, Hosts

__all__ = ["Cluster"]

SinksFor = Callable[[str, str], list[Sink]]  # (agent id, dir) -> the session's sinks
Forget = Callable[[Session, Sequence[Channel[Any]]], None]


class Cluster:
    """Sessions on the Ray cluster at `address` (`local`: a private instance here)."""

    def __init__(self, *, address: str) -> None:
        self.address = address
        self._hosts: Hosts | None = None
        self._settings = ActorSettings()
        self._metrics: Metrics | None = None

    @asynccontextmanager
    async def hosting(self, metrics: Metrics | None, **runtime_options: Any) -> AsyncIterator[None]:
        """Connected while inside; `runtime_options` are the hosts' Runtime's keywords
        (the front's mock, policy and `settings`); `metrics` counts sessions per node."""
        from ._connect import connect, disconnect
        from ._hosts import Hosts

        await asyncio.to_thread(connect, self.address)
        settings = runtime_options.get("settings")
        self._settings = getattr(settings, "actor", self._settings)  # the pumps' channels
        self._hosts = Hosts(runtime_options)
        self._metrics = metrics
        try:
            yield
        finally:
            await self._hosts.stop()
            await asyncio.to_thread(disconnect)

    def hosts(self) -> list[Host]:
        return [] if self._hosts is None else list(self._hosts)

    async def open(
        self,
        session: Session,
        spec: SessionOptions,
        sinks_for: SinksFor,
        tasks: asyncio.TaskGroup,
        forget: Forget,
    ) -> None:
        """Open `session` on a host; its pump runs in `tasks` until the session ends."""
        from ._front import RemoteActor
        from ._host import Opening

        if self._hosts is None:
            raise RuntimeError("use `async with Runtime(ray=...)`")
        hosts, settings = self._hosts, self._settings
        host = await hosts.place(spec.placement)
        try:
            reply = await _opened(host, session.id, spec)
        finally:
            host.sessions -= 1  # counted from `place` on, so that concurrent opens spread
        assert isinstance(reply, Opening)
        actor = RemoteActor(
            host=host.actor,
            session_id=session.id,
            info=reply.info,
            node=host.node.label,
            agent_pid=reply.agent_pid,
            on_gone=lambda: self._lost(host),
        )
        sinks = sinks_for(reply.info.agent.id, reply.dir)
        session.attach(actor)
        self._count(host, +1)

        async def pump() -> None:
            try:
                await actor.run(sinks, settings)
            finally:
                self._count(host, -1)
                forget(session, actor.channels())

        tasks.create_task(pump(), name=f"session-{session.id}")

    def _count(self, host: Host, change: int) -> None:
        host.sessions += change
        if self._metrics is not None:
            self._metrics.node_sessions(host.node.label, change)

    def _lost(self, host: Host) -> None:
        if not host.gone and self._metrics is not None:
            self._metrics.node_lost(host.node.label)
        assert self._hosts is not None
        self._hosts.lost(host)


async def _opened(host: Host, session_id: str, spec: SessionOptions) -> object:
    """The host's `Opening`, or its error raised; an abandoned open is closed there."""
    from ray.exceptions import RayError

    from ._front import host_gone

    call = host.actor.open.remote(session_id, spec)
    try:
        reply = await asyncio.shield(call)
    except asyncio.CancelledError:
        host.actor.command.remote(session_id, "close", ())  # whenever it gets there
        raise
    except RayError as error:
        raise host_gone(error) from None
    if reply.error is not None:
        raise reply.error
    return reply.value
