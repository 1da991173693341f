"""The engine's bookkeeping records: turns, queued prompts, open requests.

Plain mutable records owned by one `Engine`; nothing here has behaviour
beyond small derived properties.
"""

from __future__ import annotations

from collections.abc import Callable

import attrs

from ...pipeline.driver import Emitted
from ...pipeline.errors import CorralError
from ...pipeline.events import Request, TurnContext, TurnOrigin
from ...pipeline.policy import Decide

__all__ = [
    "EngineSettings",
    "OpenRequest",
    "Pending",
    "QueuedPrompt",
    "RecentIds",
    "Steer",
    "Turn",
]


class RecentIds:
    """The last `limit` ids added, for membership: the closed requests, bounded.

    A session closes requests for as long as it runs; remembering each id for
    ever grows without bound. An id older than the last `limit` is forgotten:
    an answer to it is refused as unknown rather than as already closed.
    """

    def __init__(self, limit: int) -> None:
        self._limit = limit
        self._ids: dict[str, None] = {}  # in the order added

    def add(self, item: str) -> None:
        self._ids[item] = None
        if len(self._ids) > self._limit:
            del self._ids[next(iter(self._ids))]

    def __contains__(self, item: object) -> bool:
        return item in self._ids

    def __len__(self) -> int:
        return len(self._ids)


@attrs.frozen(kw_only=True)
class EngineSettings:
    """Timing rules; every window in seconds."""

    quiet_prompt_turn: float = 120.0  # inferred end of a prompted turn (unreliable wires)
    quiet_agent_turn: float = 20.0  # inferred end of an agent-origin turn
    stall_after: float = 120.0  # one Warning Diagnostic after this much silence
    cancel_grace: float = 10.0  # the wire has this long to confirm a cancel


@attrs.define(kw_only=True)
class QueuedPrompt:
    prompt_id: str
    text: str
    attachments: tuple[str, ...] = ()


@attrs.define(kw_only=True)
class Turn:
    id: str
    origin: TurnOrigin
    quiet_window: float | None  # None: the wire ends this turn
    last_activity: float
    open_messages: dict[str, None] = attrs.field(factory=dict)  # insertion-ordered set
    running_tools: dict[str, None] = attrs.field(factory=dict)
    usage: Emitted | None = None  # the turn's usage so far, its tokens added up
    stall_warned: bool = False
    cancel_deadline: float | None = None  # set with the CANCEL transition
    contexts: dict[str | None, TurnContext] = attrs.field(factory=dict)

    def context(self, parent_tool_id: str | None) -> TurnContext:
        """The turn_info for this turn (and subagent), shared by its events."""
        found = self.contexts.get(parent_tool_id)
        if found is None:
            found = self.contexts[parent_tool_id] = TurnContext(
                id=self.id, parent_tool_id=parent_tool_id
            )
        return found


@attrs.define(kw_only=True)
class Steer:
    """A prompt offered to the running turn; `reply` settles with the agent's verdict."""

    prompt: QueuedPrompt
    reply: Pending
    sent: bool = False  # sent once the turn is confirmed


@attrs.define(kw_only=True)
class OpenRequest:
    request: Request
    turn_id: str | None
    opened_at: float
    parent_tool_id: str | None = None
    deadline: float | None = None
    on_timeout: Decide | None = None


class Pending:
    """A reply the engine will give later (steer verdict, configure, rollback).

    The actor waits on it; the engine settles it exactly once.
    """

    __slots__ = ("_callbacks", "error", "settled", "value")

    def __init__(self) -> None:
        self.settled = False
        self.value: object = None
        self.error: CorralError | None = None
        self._callbacks: list[Callable[[Pending], None]] = []

    def on_settle(self, callback: Callable[[Pending], None]) -> None:
        if self.settled:
            callback(self)
        else:
            self._callbacks.append(callback)

    def _settle(self) -> None:
        self.settled = True
        callbacks, self._callbacks = self._callbacks, []
        for callback in callbacks:
            callback(self)

    def resolve(self, value: object) -> None:
        if not self.settled:
            self.value = value
            self._settle()

    def fail(self, error: CorralError) -> None:
        if not self.settled:
            self.error = error
            self._settle()
