"""The Runtime: opens sessions, finds agents, isolates failures.

One Runtime supervises many sessions. Each session runs in its own task
inside the Runtime's task group, with its own task group inside that: a
session that fails (its agent died, its wire broke, or corral hit a bug in
it) ends alone, with a session error and its `closed`, and never cancels
another session. The same Runtime backs `corral serve` (the app's sink is a
`LineSink`) and the Python API (a `StreamSink` behind `Session.events()`).

Every session is kept in the transcript archive unless told otherwise:
by default under `$CORRAL_HOME/transcripts` (`~/.local/share/corral/...`,
read from corral's own environment, not the agents' `environ`);
`transcripts=TranscriptSettings(...)` chooses where and how, an `Archive`
shares one the caller owns (and closes), `False` keeps none.

    async with Runtime() as rt, await rt.open("claude", dir=".") as session:
        async for event in session.turn("hello"): ...

What the body of `async with Runtime()` raises leaves it unchanged (the
Runtime's task group would wrap it in an `ExceptionGroup`; `unwrapped` (in
`_runtime_scope.py`) takes it back out), so a caller catches `CorralError` as itself.

`ray=` (a `ray.init` address, `local`, or a `Cluster`) runs every opened session on a
Ray cluster's node (`actors/cluster/`), its records coming back to this Runtime's sinks.
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import AsyncIterator, Callable, Mapping, Sequence
from contextlib import AsyncExitStack
from types import TracebackType
from typing import Any, Unpack

import attrs
from aiostream.core import Streamer

from ..pipeline.channels import Channel
from ..pipeline.commands import AgentRef, PermissionMode, SessionOptions
from ..pipeline.driver import Driver
from ..pipeline.errors import CorralError, ErrorKind
from ..pipeline.events import AgentDetails, DiscoveryReport, Event, PlanUsage
from ..pipeline.fidelity import refuse_unhonoured
from ..pipeline.policy import Policy
from ..pipeline.rules import load_policy
from ..pipeline.stages import Sink
from ..pipeline.telemetry import Telemetry
from ..sinks.metrics import Metrics
from ..sinks.transcript import Archive, TranscriptSettings
from ..sources._reaper import become_subreaper
from ..sources._sandbox import Sandboxes
from ..sources.catalog import Catalog, CatalogEntry
from ..sources.mock import MockScript
from ..sources.mock import catalog_entry as mock_entry
from ._agents import AgentFinder
from ._generate import generate_text
from ._runtime_open import (
    SessionOver,
    abandon_open,
    checked_dir,
    contain_crash,
    engine_builder,
    handshaken,
    launch_of,
    sandbox_mode,
    session_policy,
    session_sinks,
)
from ._runtime_scope import owned_archive, unwrapped
from ._usage_cache import PlanUsageCache
from .cluster import Cluster
from .engine import Engine, EngineSettings
from .handle import Session
from .options import OpenOptions, session_options
from .session import ActorSettings, SessionActor
from .streams import Joined, merged

__all__ = ["Runtime", "RuntimeSettings", "SinkFactory"]

SinkFactory = Callable[[str, str, str], Sink]  # (session id, agent id, dir) -> sink


@attrs.frozen(kw_only=True)
class RuntimeSettings:
    actor: ActorSettings = attrs.field(factory=ActorSettings)
    engine: EngineSettings = attrs.field(factory=EngineSettings)
    handshake_timeout: float = 30.0  # as the reference sidecar; `serve --handshake-timeout`
    default_mode: PermissionMode = PermissionMode.ASK


PolicyLoader = Callable[[str], Policy]


class Runtime:
    def __init__(
        self,
        *,
        catalog: Catalog | None = None,
        mock: MockScript | None = None,
        environ: Mapping[str, str] | None = None,
        settings: RuntimeSettings | None = None,
        sinks: Sequence[SinkFactory] = (),
        policy: Policy | None = None,
        policy_loader: PolicyLoader | None = None,
        telemetry: Telemetry | None = None,
        metrics: Metrics | None = None,
        transcripts: TranscriptSettings | Archive | bool = True,
        ray: str | Cluster | None = None,
    ) -> None:
        self.settings = settings if settings is not None else RuntimeSettings()
        self._mock = mock  # what the cluster's hosts offer too
        if mock is not None:  # `--mock SCRIPT` offers exactly one agent: the script
            catalog = Catalog([mock_entry(mock)])
        self.agents = AgentFinder(
            catalog=catalog, environ=dict(os.environ if environ is None else environ)
        )
        self._sink_factories = tuple(sinks)
        self.telemetry = telemetry if telemetry is not None else Telemetry()
        self.metrics = metrics
        if metrics is not None:  # one registry per Runtime: every session reports to it
            self._sink_factories += (metrics.sink,)
            self.telemetry.add(metrics.observer)
            metrics.set_channels(self.channels)
            # Every labelled series at zero from the start: dashboards show 0, not "No data".
            metrics.zero(e.id for e in self.agents.catalog.entries() if not e.wire_only)
        self.archive, self._owns_archive = owned_archive(transcripts, metrics)
        if self.archive is not None:
            self._sink_factories += (self.archive.sink_factory,)
            for observer in self.archive.observers:  # the raw wire, when recorded
                self.telemetry.add(observer)
        self._policy = policy
        self._policy_loader = policy_loader if policy_loader is not None else load_policy
        self.sandboxes = Sandboxes(self.agents.environ)  # probed once, on first use
        self._sessions: dict[str, Session] = {}
        self._ending: set[str] = set()  # their last records are on the way to the sinks
        self._ended: set[str] = set()
        # Handshakes in flight: the session's task, and what its opener awaits.
        self._opening: dict[str, tuple[asyncio.Task[None], asyncio.Future[SessionActor]]] = {}
        self._hidden: set[str] = set()  # throwaway sessions of `generate`
        self._joined = Joined(self._streams_now)  # what `events()` merges
        self._count = 0
        self._plan_usage = PlanUsageCache()
        self._stack = AsyncExitStack()
        self._tasks: asyncio.TaskGroup | None = None
        self._cluster = ray if isinstance(ray, Cluster) or ray is None else Cluster(address=ray)

    async def __aenter__(self) -> Runtime:
        become_subreaper()  # orphans of every session's agent stay ours to end
        self._tasks = await self._stack.enter_async_context(asyncio.TaskGroup())
        if self._cluster is not None:  # stopped after every session has closed
            hosting = self._cluster.hosting(
                self.metrics, mock=self._mock, policy=self._policy, settings=self.settings
            )
            await self._stack.enter_async_context(hosting)
        return self

    async def __aexit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        trace: TracebackType | None,
    ) -> None:
        try:
            await self.close_all()
        finally:
            self._joined.close()
            try:
                await unwrapped(self._stack.__aexit__(kind, error, trace), error)
            finally:
                if self.archive is not None and self._owns_archive:
                    await asyncio.to_thread(self.archive.close)  # pending writes land

    # ---- agents ----------------------------------------------------------------

    async def discover(self) -> DiscoveryReport:
        return await self.agents.discover()

    async def probe(self, agent: AgentRef) -> AgentDetails:
        details = await self.agents.probe(agent)
        mode = sandbox_mode(self._policy)
        status = await self.sandboxes.status(await self.sandboxes.plan(mode, False))
        return attrs.evolve(details, sandbox=status)

    async def plan_usage(self, agent: AgentRef) -> PlanUsage:
        """The plan's quota, read on a short-lived agent process; kept 60 s per executable."""
        entry, installation = await self.agents.resolve(agent)  # NotInstalled first
        read = entry.plan_usage
        if read is None:
            raise CorralError(
                ErrorKind.UNSUPPORTED_FEATURE,
                f"{installation.name} has no plan quota corral can read",
                feature="PlanUsage",
            )
        environ = self.agents.environ
        key = (installation.id, installation.executable_path)
        return await self._plan_usage.get(key, lambda: read(installation, environ))

    # ---- sessions --------------------------------------------------------------

    def session(self, session_id: str) -> Session:
        if session_id in self._hidden:  # a `generate` session: not the app's
            raise CorralError(ErrorKind.UNKNOWN_SESSION, f"no session {session_id!r}")
        found = self._sessions.get(session_id)
        if found is not None and session_id not in self._ending:
            return found
        if session_id in self._ended or session_id in self._ending:
            raise CorralError(ErrorKind.SESSION_CLOSED, f"session {session_id} has ended")
        raise CorralError(ErrorKind.UNKNOWN_SESSION, f"no session {session_id!r}")

    def sessions(self) -> list[Session]:
        return list(self._sessions.values())

    def _streams_now(self) -> list[AsyncIterator[Event]]:
        return [s.events() for s in self._sessions.values() if s.has_stream]

    def channels(self) -> list[Channel[Any]]:
        """Every channel of every live session (read by the metrics at scrape time)."""
        return [channel for session in self._sessions.values() for channel in session.channels()]

    async def open(
        self,
        agent: AgentRef | SessionOptions,
        dir: str = ".",
        *,
        app_sink: Sink | None = None,
        extra_sinks: Sequence[Sink] = (),
        **options: Unpack[OpenOptions],
    ) -> Session:
        """Start a session; `agent` is an id, an ad-hoc ref, or full SessionOptions.

        The session is an async context manager too: `async with await
        rt.open(...) as session:` closes it on the way out.
        """
        spec = session_options(agent, dir, options)
        if self._cluster is not None:
            return await self._open_remote(spec, app_sink, extra_sinks)
        session, _ = await self._start(spec, app_sink=app_sink, extra_sinks=extra_sinks)
        return session

    async def _open_remote(
        self, spec: SessionOptions, app_sink: Sink | None, extra_sinks: Sequence[Sink]
    ) -> Session:
        """The session runs on a Ray host; its records come back to this Runtime's sinks."""
        assert self._tasks is not None and self._cluster is not None
        self._count += 1
        session = Session(session_id=f"s{self._count}", app_sink=app_sink)
        sinks = session_sinks(session, spec, extra_sinks, self._sink_factories, self.archive)
        await self._cluster.open(session, spec, sinks, self._tasks, self._forget)
        self._sessions[session.id] = session
        if session.has_stream:
            await self._joined.add(session.events())
        return session

    async def generate(
        self,
        agent: AgentRef | SessionOptions,
        prompt: str,
        dir: str = ".",
        **options: Unpack[OpenOptions],
    ) -> str:
        """One prompt, one answer: the text of a throwaway session's turn.

        The session runs with no tools where the wire allows, declines every
        permission itself, and never reaches the app (see `actors/_generate.py`).
        """
        spec = session_options(agent, dir, options)
        return await generate_text(self, spec, prompt)

    def events(self) -> Streamer[Event]:
        """Every session's events as they come, sessions opened later included.

        `async with rt.events() as events: async for event in events: ...`
        (see `actors/streams.py`); it ends once the Runtime has closed.
        """
        return merged(self._joined).stream()

    async def _start(
        self,
        spec: SessionOptions,
        *,
        app_sink: Sink | None,
        extra_sinks: Sequence[Sink] = (),
        policy: Policy | None = None,
        tools: bool = True,
        hidden: bool = False,
        session_id: str | None = None,
    ) -> tuple[Session, CatalogEntry]:
        """Start a session; `hidden` keeps its id from `session()` (the app never opened it);
        a Ray host starts it with the front's `session_id` (`actors/cluster/`)."""
        if self._tasks is None:
            raise RuntimeError("use `async with Runtime() as rt`")
        session_dir = await asyncio.to_thread(checked_dir, spec.dir)
        entry, installation = await self.agents.resolve(spec.agent)
        if policy is None:
            policy = await session_policy(spec, self._policy_loader, self._policy)
        sandbox = await self.sandboxes.plan(sandbox_mode(policy), spec.sandbox)
        self._count += 1
        session_id = session_id or f"s{self._count}"
        if hidden:
            self._hidden.add(session_id)
        mode = spec.permission_mode or self.settings.default_mode
        launch = launch_of(
            spec, session_id, installation.executable_path, session_dir, mode, tools, sandbox
        )
        driver = self.agents.driver(
            entry, installation, launch, self.telemetry.for_session(session_id, installation.id)
        )
        sandbox_status = await self.sandboxes.status(sandbox)
        session = Session(session_id=session_id, app_sink=app_sink)
        sinks = session_sinks(session, spec, extra_sinks, self._sink_factories, self.archive)(
            installation.id, session_dir
        )
        opened: asyncio.Future[SessionActor] = asyncio.get_running_loop().create_future()

        build_engine = engine_builder(
            launch,
            installation,
            policy,
            spec.show_auto_decisions,
            self.settings.engine,
            sandbox_status,
        )

        def check(details: AgentDetails) -> None:  # nothing the agent cannot honour
            refuse_unhonoured(launch, details, installation.name)

        running = self._tasks.create_task(
            self._run_session(session, driver, build_engine, check, sinks, opened),
            name=f"session-{session_id}",
        )
        self._opening[session_id] = (running, opened)
        try:
            session.attach(await opened)
        except asyncio.CancelledError:
            abandon_open(running, opened, session, self._sessions)
            raise
        finally:
            self._opening.pop(session_id, None)
        self._sessions[session_id] = session
        if session.has_stream:  # a merge running (`events()`) joins its events
            await self._joined.add(session.events())
        return session, entry

    async def _run_session(
        self,
        session: Session,
        driver: Driver,
        build_engine: Callable[[object], Engine],
        check: Callable[[AgentDetails], None],
        sinks: list[Sink],
        opened: asyncio.Future[SessionActor],
    ) -> None:
        actor: SessionActor | None = None
        try:
            async with asyncio.TaskGroup() as tasks:
                timeout, grace = self.settings.handshake_timeout, self.settings.actor.close_grace
                handshake = await handshaken(driver, tasks, check, opened, timeout, grace)
                actor = SessionActor(
                    engine=build_engine(handshake),
                    driver=driver,
                    sinks=sinks,
                    settings=self.settings.actor,
                    on_ending=lambda: self._ending.add(session.id),
                )
                opened.set_result(actor)
                await actor.run(tasks)
                raise SessionOver
        except* SessionOver:
            pass
        except* Exception as group:  # a bug in corral, contained to this session
            await contain_crash(group, session, driver, opened, self.settings.actor.close_grace)
        finally:
            self._forget(session, [] if actor is None else actor.channels())

    def _forget(self, session: Session, channels: Sequence[Channel[Any]]) -> None:
        """The session has ended: its channels' final totals kept, its id taken back."""
        if self.metrics is not None:
            self.metrics.retire_channels(channels)
        self._sessions.pop(session.id, None)
        self._ending.discard(session.id)
        self._ended.add(session.id)
        session.mark_ended()

    async def close_all(self) -> None:
        """Close every session; abandon every handshake still in flight."""
        for running, opened in self._opening.values():
            if not opened.done():  # done: its opener registers it in a moment
                running.cancel()
        closed: set[str] = set()
        # Until no session is left: one that finished its handshake just now joins late.
        while sessions := [s for s in self._sessions.values() if s.id not in closed]:
            async with asyncio.TaskGroup() as closing:
                for session in sessions:
                    closing.create_task(session.close())
            for session in sessions:
                await session.wait_closed()
            closed.update(session.id for session in sessions)
