"""`Session`: the handle callers hold, never the actor itself.

Every method forwards to the session's actor, which stays private (no
caller, bench or test reaches it; what they observe, channels, the count
of events, the agent's pid, the handle says); once the session has ended
the commands raise `SessionClosed`. `events()` yields the session's events in
sequence order and ends after the last one; `failure` then tells whether
the session ended in error (the agent died, the wire failed). `turn(text)`
prompts and yields that prompt's turn: the events read from the prompt on,
up to and including the turn's `TurnEnded`; the stream stays open for the
next turn. `async with session:` closes the session on the way out, however
the block ends, and waits until it has ended.

The handle drives an `Actor`: the local `SessionActor`, or the front's proxy
of a session that runs on a Ray host (`actors/cluster/`); both say the same
facts (the engine's failure and sequence, the driver's pid).
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator, Sequence
from types import TracebackType
from typing import Any, Protocol, runtime_checkable

from ..pipeline.channels import Channel, EndOfChannel
from ..pipeline.commands import RollbackScope
from ..pipeline.errors import CorralError, ErrorKind
from ..pipeline.events import (
    Answer,
    ConfigValue,
    Delivery,
    Event,
    PromptOrigin,
    SessionInfo,
    SessionStatus,
    Started,
    Steered,
    SystemTime,
    TurnEnded,
    TurnStarted,
)
from ..pipeline.stages import Sink
from ..sinks.stream import StreamSink

__all__ = ["AbandonableSink", "Actor", "Session"]


@runtime_checkable
class AbandonableSink(Protocol):
    """An app sink that can end a session's stream after the session's stages died."""

    async def abandon(self, session_id: str, error: CorralError) -> None: ...


class EngineFacts(Protocol):
    @property
    def failure(self) -> CorralError | None: ...
    @property
    def sequence(self) -> int: ...


class Actor(Protocol):
    """What a `Session` drives: the session's commands, its state, its channels."""

    @property
    def engine(self) -> EngineFacts: ...
    @property
    def driver(self) -> object: ...  # its `pid`, where it runs an agent
    def channels(self) -> Sequence[Channel[Any]]: ...
    def info(self) -> SessionInfo: ...
    async def prompt(self, text: str, attachments: tuple[str, ...] = ()) -> Delivery: ...
    async def dequeue(self, prompt_id: str) -> None: ...
    async def answer(self, request_id: str, answer: Answer) -> None: ...
    async def cancel(self, clear_queue: bool = False) -> None: ...
    async def configure(self, option: str, value: ConfigValue) -> SessionInfo: ...
    async def rollback(self, turns: int, scope: RollbackScope) -> None: ...
    async def compact(self) -> None: ...
    async def close(self) -> None: ...
    async def wait_status(self, wanted: SessionStatus) -> None: ...


class Session:
    def __init__(self, *, session_id: str, app_sink: Sink | None) -> None:
        self.id = session_id
        self._stream = StreamSink(session_id=session_id) if app_sink is None else None
        self.app_sink: Sink = app_sink if app_sink is not None else self._stream  # type: ignore[assignment]
        self._actor: Actor | None = None
        self._ended = asyncio.Event()
        self._abandoned: CorralError | None = None

    def attach(self, actor: Actor) -> None:
        self._actor = actor

    def mark_ended(self) -> None:
        if self._stream is not None:
            self._stream.events.close()  # whatever ended the session (a no-op if done)
        self._ended.set()

    async def abandon(self, error: CorralError) -> None:
        """The session crashed inside corral; its stages are gone. End its stream
        as the protocol says: the running turn `Failed`, the error, the end."""
        self._abandoned = error
        if isinstance(self.app_sink, AbandonableSink):
            await self.app_sink.abandon(self.id, error)
        if self._stream is not None and not self._stream.events.closed:
            at = SystemTime.from_ns(time.time_ns())
            for event in self._stream.tail.last_events(self.id, error, at):
                await self._stream.events.send(event)  # the reader's pace, like every event
            self._stream.failure = error
            self._stream.events.close()

    def _live(self) -> Actor:
        """The actor, while the session runs; the actor itself never leaves the handle."""
        if self._actor is None or self._ended.is_set():
            raise CorralError(ErrorKind.SESSION_CLOSED, f"session {self.id} has ended")
        return self._actor

    # ---- state -------------------------------------------------------------------

    def info(self) -> SessionInfo:
        if self._actor is None:
            raise CorralError(ErrorKind.SESSION_CLOSED, f"session {self.id} has ended")
        return self._actor.info()

    @property
    def status(self) -> SessionStatus:
        return self.info().status

    @property
    def failure(self) -> CorralError | None:
        if self._abandoned is not None:
            return self._abandoned
        return None if self._actor is None else self._actor.engine.failure

    @property
    def ended(self) -> bool:
        return self._ended.is_set()

    # ---- observation (metrics, benchmarks, tests) ----------------------------------

    def channels(self) -> list[Channel[Any]]:
        """The session's channels in flow order: driver, engine, then one per sink."""
        return [] if self._actor is None else list(self._actor.channels())

    @property
    def events_made(self) -> int:
        """How many events the session has numbered so far (also after it ended)."""
        return 0 if self._actor is None else self._actor.engine.sequence

    @property
    def agent_pid(self) -> int | None:
        """The agent's process id, for a driver that runs one (None otherwise)."""
        pid = None if self._actor is None else getattr(self._actor.driver, "pid", None)
        return pid if isinstance(pid, int) else None

    # ---- commands ----------------------------------------------------------------

    async def prompt(self, text: str, attachments: tuple[str, ...] = ()) -> Delivery:
        return await self._live().prompt(text, attachments)

    async def dequeue(self, prompt_id: str) -> None:
        await self._live().dequeue(prompt_id)

    async def answer(self, request_id: str, answer: Answer) -> None:
        await self._live().answer(request_id, answer)

    async def cancel(self, clear_queue: bool = False) -> None:
        await self._live().cancel(clear_queue)

    async def configure(self, option: str, value: ConfigValue) -> SessionInfo:
        return await self._live().configure(option, value)

    async def rollback(self, turns: int, scope: RollbackScope) -> None:
        await self._live().rollback(turns, scope)

    async def compact(self) -> None:
        await self._live().compact()

    async def close(self) -> None:
        if self._actor is not None and not self._ended.is_set():
            await self._actor.close()

    async def wait_closed(self) -> None:
        await self._ended.wait()

    async def wait_idle(self) -> None:
        """Return once no turn runs and nothing is queued (or the session ended)."""
        if self._actor is not None and not self._ended.is_set():
            await self._actor.wait_status(SessionStatus.IDLE)

    # ---- the stream -------------------------------------------------------------

    @property
    def has_stream(self) -> bool:
        """Whether `events()` reads this session (its app sink is no other one)."""
        return self._stream is not None

    def events(self) -> AsyncIterator[Event]:
        if self._stream is None:
            raise RuntimeError("this session's events go to another sink (the line protocol)")
        return aiter(self._stream)

    async def turn(self, text: str, attachments: tuple[str, ...] = ()) -> AsyncIterator[Event]:
        """Prompt, then yield the events up to and including this prompt's `TurnEnded`.

        A prompt queued behind a running turn yields that turn's events too,
        then its own. The session ending first raises why (`failure`), or
        `SessionClosed`.
        """
        if self._stream is None:
            raise RuntimeError("this session's events go to another sink (the line protocol)")
        events = self._stream.events
        delivery = await self.prompt(text, attachments)
        match delivery.kind:
            case Started(turn_id=turn_id) | Steered(turn_id=turn_id):
                ours: str | None = turn_id
            case _:
                ours = None  # queued: its `TurnStarted` names the prompt
        while True:
            try:
                event = await events.receive()
            except EndOfChannel:
                break
            yield event
            match event.kind:
                case TurnStarted(origin=PromptOrigin(prompt_id=prompt_id)) if (
                    prompt_id == delivery.prompt_id and event.turn_info is not None
                ):
                    ours = event.turn_info.id
                case TurnEnded() if event.turn_info is not None and event.turn_info.id == ours:
                    return
        raise self.failure or CorralError(
            ErrorKind.SESSION_CLOSED, f"session {self.id} ended before the turn did"
        )

    # ---- as a context manager ----------------------------------------------------------

    async def __aenter__(self) -> Session:
        return self

    async def __aexit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        trace: TracebackType | None,
    ) -> None:
        await self.close()
        await self.wait_closed()
