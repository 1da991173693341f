"""`JsonRpcDriver`: the process, pump, inbox, reading loop and stop of a JSON-RPC source.

```
agent stdout ─► JsonRpcPeer.pump ─► inbox.frames (bounded) ─┐  (a read's worth per batch)
                                                             ├─► run ─► _translate ─► events_out
driver's own events ─► inbox.put_local ──────────────────────┘  (a batch's events, one send)
engine ─► send (the provider's encoder) ─► requests, answers ─► agent stdin
```

A provider subclasses it and supplies `_translate` (one agent frame or
wire problem in, its `DriverEvent`s out; the provider's translator) and
`send` (the engine's commands onto its wire). `_launch` spawns the agent
and starts the pump; `_handshaking` runs the opening requests and turns
the agent's death meanwhile into the one `handshake_exit` error. What
several encoders said alike is here once: `_perform` (one command's
requests as a task; a refusal is a Warning), `_prompt_refused` (a turn
that begins and fails at once), `_decline` (-32601 for a request corral
does not serve), `unsupported` (no live options, rollback or compact).

Invariants: `run` is the only task that sends the driver's events, and
every one of them passes `tally` on its way out (so wire problems and
unknown frames are counted once, wherever they were found). `send` never
waits on the agent: work that needs an answer runs as a task of the
session (`_spawn`) and reports through the inbox. `stop` is idempotent:
it aborts the local channel (a task reporting into it is released; with
`abort_frames_on_stop`, the frames channel too), lets the provider
release what it holds (`_release`), then ends the process group (EOF,
SIGTERM, SIGKILL). The pump then sees EOF and fails our waiting requests;
`run` reports `AgentExited` with the status and the stderr tail.
"""

from __future__ import annotations

import abc
import asyncio
import contextlib
from collections.abc import Awaitable, Callable, Coroutine, Mapping, Sequence
from typing import Any, ClassVar, Generic, TypeVar

import attrs

from ...pipeline.channels import BrokenChannel
from ...pipeline.driver import (
    AgentExited,
    Compact,
    ConfigRefused,
    Configure,
    DriverCommand,
    DriverEvent,
    Emitted,
    EventSink,
    LaunchSpec,
    Rollback,
    RollbackVerdict,
    TurnBegan,
    TurnFinished,
)
from ...pipeline.errors import AgentGone
from ...pipeline.events import Diagnostic, DiagnosticLevel, Failed
from ...pipeline.telemetry import SessionTelemetry
from .._jsonrpc import JsonRpcPeer, RpcError, RpcRequest
from .._process import AgentProcess
from .handshake import exit_status, handshake_exit
from .inbox import Inbox, Local
from .problems import tally

__all__ = ["METHOD_NOT_FOUND", "JsonRpcDriver", "note", "spawn_agent", "unknown", "unsupported"]

F = TypeVar("F")
T = TypeVar("T")
PeerFactory = Callable[[AgentProcess, SessionTelemetry], JsonRpcPeer]
METHOD_NOT_FOUND = -32601


async def spawn_agent(
    spec: LaunchSpec,
    argv: Sequence[str],
    env: Mapping[str, str],
    tasks: asyncio.TaskGroup,
    telemetry: SessionTelemetry,
) -> AgentProcess:
    """The agent's process, in the session's directory and sandbox, watched in `tasks`."""
    return await AgentProcess.spawn(
        argv, cwd=spec.dir, env=env, tasks=tasks, telemetry=telemetry, sandbox=spec.sandbox
    )


def note(level: DiagnosticLevel, message: str, **extensions: Any) -> Emitted:
    """A Diagnostic event, with the source's extensions."""
    return Emitted(kind=Diagnostic(level=level, message=message), extensions=extensions)


def unknown(frame_type: str, message: str, **extensions: Any) -> Emitted:
    """The Info Diagnostic of a frame the source does not know, named by its type."""
    return attrs.evolve(note(DiagnosticLevel.INFO, message, **extensions), unknown_frame=frame_type)


def unsupported(command: DriverCommand) -> tuple[DriverEvent, ...]:
    """The answer of a wire with no live options, no rollback and no compact."""
    match command:
        case Configure(option=option):
            return (ConfigRefused(option=option, reason="no live options"),)
        case Rollback():
            return (RollbackVerdict(accepted=False, reason="not supported"),)
        case Compact():
            return (TurnBegan(), TurnFinished(stop=Failed("compact is not supported")))
    return ()


def _line_peer(process: AgentProcess, telemetry: SessionTelemetry) -> JsonRpcPeer:
    return JsonRpcPeer(process, telemetry=telemetry)


class JsonRpcDriver(abc.ABC, Generic[F]):
    """The shared half of a JSON-RPC driver; `F` is what the inbox's frames channel holds."""

    abort_frames_on_stop: ClassVar[bool] = False

    def __init__(
        self,
        spec: LaunchSpec,
        telemetry: SessionTelemetry,
        *,
        frames: int,
        inbox_name: str,
        agent: str,
        wire: str,
        speaker: str = "the agent",
        peer: PeerFactory = _line_peer,
    ) -> None:
        self._spec = spec
        self._agent_name = agent  # both name the exit during the handshake
        self._wire_name = wire
        self._speaker = speaker  # who refused, in the notes of `_perform`
        self._telemetry = telemetry
        self._inbox: Inbox[F] = Inbox(name=f"{spec.session_id}/{inbox_name}", frames=frames)
        self._make_peer = peer
        self._tasks: asyncio.TaskGroup | None = None
        self._process: AgentProcess | None = None
        self._peer: JsonRpcPeer | None = None
        self._stopped = False

    # ---- the provider's part -----------------------------------------------------

    @abc.abstractmethod
    async def _translate(self, item: F) -> list[DriverEvent]:
        """One agent frame (or wire problem) in, its events out."""

    def _translate_now(self, item: F) -> list[DriverEvent] | None:
        """The events of a frame that needs no waiting (the bulk of a stream), else None
        and `_translate` takes it: a coroutine per frame costs more than most frames."""
        return None

    @abc.abstractmethod
    async def send(self, command: DriverCommand) -> None:
        """The engine's command onto the wire; never waits on the agent."""

    async def _release(self) -> None:
        """What the provider holds besides the process (terminals); run at stop."""

    # ---- launching -----------------------------------------------------------------

    async def _launch(
        self, tasks: asyncio.TaskGroup, argv: Sequence[str], env: Mapping[str, str]
    ) -> JsonRpcPeer:
        """Spawn the agent in the session's directory and start reading it."""
        self._tasks = tasks
        self._process = await spawn_agent(self._spec, argv, env, tasks, self._telemetry)
        self._peer = self._make_peer(self._process, self._telemetry)
        tasks.create_task(self._pump(self._peer), name=f"{self._spec.session_id}-pump")
        return self._peer

    async def _pump(self, peer: JsonRpcPeer) -> None:
        frames: Any = self._inbox.frames  # holds `Incoming` among its items (F includes it)
        with contextlib.suppress(BrokenChannel):  # stopped: nobody reads the agent any more
            await peer.pump(frames)

    async def _handshaking(self, work: Awaitable[T]) -> T:
        """Await the opening requests; the agent's exit meanwhile is `ProcessExited`."""
        try:
            return await work
        except AgentGone:
            assert self._process is not None
            raise await handshake_exit(
                self._process, agent=self._agent_name, wire=self._wire_name
            ) from None

    def _spawn(self, work: Coroutine[Any, Any, None], name: str = "request") -> None:
        assert self._tasks is not None, "send before start"
        self._tasks.create_task(work, name=f"{self._spec.session_id}-{name}")

    async def _perform(
        self, command: DriverCommand, send: Callable[[DriverCommand], Awaitable[None]]
    ) -> None:
        """Run one command's requests; a refusal becomes a Warning, an exit nothing."""
        try:
            await send(command)
        except (AgentGone, BrokenChannel):
            pass  # `run` reports the exit; or the session is over
        except RpcError as error:
            message = f"{self._speaker} refused {type(command).__name__}: {error.message}"
            await self._inbox.put_local(note(DiagnosticLevel.WARNING, message))

    async def _prompt_refused(self, reason: str) -> None:
        """A prompt the agent would not take: a turn that begins and fails at once."""
        message = f"{self._speaker} refused the prompt: {reason}"
        failed = TurnFinished(stop=Failed(reason))
        await self._inbox.put_local(TurnBegan(), note(DiagnosticLevel.ERROR, message), failed)

    async def _decline(self, request: RpcRequest) -> None:
        """Answer a request of the agent's that corral does not serve."""
        assert self._peer is not None
        message = f"corral does not serve {request.method}"
        with contextlib.suppress(AgentGone):  # `run` reports the exit
            await self._peer.respond_error(request.id, METHOD_NOT_FOUND, message)

    # ---- reading -------------------------------------------------------------------

    async def run(self, events_out: EventSink) -> None:
        try:
            while (batch := await self._inbox.next_batch()) is not None:
                await self._deliver_batch(batch, events_out)
        finally:
            self._inbox.abort_local()  # tasks still reporting give up
        process = self._process
        assert process is not None
        status = await exit_status(process)
        await events_out.send(AgentExited(status=status, stderr=process.stderr_tail()))

    async def _deliver(self, item: Local | F, events_out: EventSink) -> None:
        await self._deliver_batch((item,), events_out)

    async def _deliver_batch(self, items: Sequence[Local | F], events_out: EventSink) -> None:
        """A batch of frames in, their events out as one batch (in order)."""
        events: list[DriverEvent] = []
        now = self._translate_now
        for item in items:
            if isinstance(item, Local):
                events.extend(item.events)
            elif (done := now(item)) is not None:
                events.extend(done)
            else:
                events.extend(await self._translate(item))
        tally(self._telemetry, *events)
        if events:
            await events_out.send_batch(events)

    # ---- stopping ------------------------------------------------------------------

    async def stop(self, grace: float) -> None:
        if self._stopped:
            return
        self._stopped = True
        if self.abort_frames_on_stop:
            self._inbox.abort()
        else:
            self._inbox.abort_local()  # `run` still reads the agent's output to its end
        await self._release()
        if self._process is not None:
            await self._process.stop(grace)
