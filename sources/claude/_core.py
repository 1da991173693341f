"""The protocol's state and its turn bookkeeping (see `_protocol.py`).

One `ProtocolCore` holds everything the inbound handlers and the outgoing
encoder share: the running turn (our prompt's uuid, whether it began,
whether we interrupted it), the turns that ended (so late frames for them
are dropped), the conversation's chain of turns (what a rollback may cut,
`_rollback.py`) and a rollback under way, open `can_use_tool` requests,
our own control requests awaiting a response, and replies waiting to be
written. A turn ends in one
place, `_finish`, which sends `TurnBegan` first if the wire never did.
"""

from __future__ import annotations

import time
import uuid as uuid_module
from collections import deque
from collections.abc import Callable, Iterable, Mapping
from typing import Any

import attrs

from ...pipeline.driver import (
    ConfigRefused,
    DriverEvent,
    RequestWithdrawn,
    RollbackVerdict,
    TurnBegan,
    TurnFinished,
)
from ...pipeline.events import Cancelled, Failed, StopReason
from ...pipeline.framing import LineSplitter
from ._content import Content
from ._encode import control_request, encode
from ._requests import AskedTool
from ._rollback import ForkPoint, History
from ._usage import USAGE_REQUEST, has_plan

__all__ = ["CONFIG_REQUESTS", "Pending", "ProtocolCore", "new_uuid"]

_MEMORY = 256  # ended turns and answered requests remembered, against late frames
CONFIG_REQUESTS = {
    "model": "set_model",
    "mode": "set_permission_mode",
    "effort": "apply_flag_settings",
}


def new_uuid() -> str:
    return str(uuid_module.uuid4())


@attrs.define
class Turn:
    uuid: str
    begun: bool = False
    interrupting: bool = False


@attrs.frozen
class Pending:
    """One of our control requests, awaiting its response."""

    kind: str  # initialize | interrupt | cancel_message | model | mode | effort | usage | rewind
    value: str = ""


class ProtocolCore:
    def __init__(
        self,
        *,
        new_id: Callable[[], str] = new_uuid,
        resume_token: str | None = None,
        model: str = "default",
        mode: str = "default",
        effort: str = "default",
        fresh: bool = True,
        wall_clock_ns: Callable[[], int] = time.time_ns,
    ) -> None:
        self._new_id = new_id
        self.wall_clock_ns = wall_clock_ns  # `fetched_at` of the plan usage read after a turn
        self.reads_usage = True  # until the CLI refuses `get_usage` once
        self.resume_token = resume_token
        self.model = model
        self.mode = mode
        self.effort = effort
        self.history = History(fresh=fresh)
        self.rolling: ForkPoint | None = None  # a rollback waiting for its files' rewind
        self.fork: ForkPoint | None = None  # a rollback ready: the driver forks the process
        self.content = Content()
        self._lines = LineSplitter()
        self._turn: Turn | None = None
        self._ended: deque[str] = deque(maxlen=_MEMORY)
        self._asked: dict[str, AskedTool] = {}
        self._answered: deque[str] = deque(maxlen=_MEMORY)
        self._controls: dict[str, Pending] = {}
        self._count = 0
        self._replies = bytearray()
        self.initialized: Mapping[str, Any] | None = None
        self.init_failure: str | None = None
        self.startup_errors: list[str] = []
        self.interrupted = False  # an interrupt went to this process

    def _control(self, pending: Pending, body: dict[str, Any]) -> bytes:
        self._count += 1
        request_id = f"corral-{self._count}"
        self._controls[request_id] = pending
        return encode(control_request(request_id, body))

    def ask_plan_usage(self) -> None:
        """After a turn on a claude.ai plan: read the plan's usage (`PlanUsageUpdated`)."""
        account = self.initialized.get("account") if self.initialized is not None else None
        if self.reads_usage and has_plan(account):
            self._replies += self._control(Pending("usage"), {**USAGE_REQUEST, "detached": True})

    def data_to_send(self) -> bytes:
        """Replies that frames received so far need (errors for requests we cannot serve)."""
        data, self._replies = bytes(self._replies), bytearray()
        return data

    def _begin(self, mentioned: Iterable[object]) -> list[DriverEvent]:
        turn = self._turn
        if turn is None or turn.begun or turn.uuid not in list(mentioned):
            return []
        turn.begun = True
        return [TurnBegan()]

    def _begun_by(self, frame: Mapping[str, Any]) -> list[DriverEvent]:
        """`_begin` with the prompts `frame` mentions, read only while a turn waits for one."""
        turn = self._turn
        if turn is None or turn.begun:
            return []
        uuids = frame.get("user_message_uuids")
        if frame.get("user_message_uuid") != turn.uuid and not (
            isinstance(uuids, list) and turn.uuid in uuids
        ):
            return []  # what `_mentions` lists, tested without making the list
        turn.begun = True
        return [TurnBegan()]

    def _finish(
        self, stop: StopReason, extensions: dict[str, Any] | None = None
    ) -> list[DriverEvent]:
        turn = self._turn
        if turn is None:
            return []
        self._turn = None
        self._ended.append(turn.uuid)
        if turn.begun:
            self.history.turn_ended(turn.uuid)
        began: list[DriverEvent] = [] if turn.begun else [TurnBegan()]
        return [*began, TurnFinished(stop=stop, extensions=extensions or {})]

    def process_lost(self) -> list[DriverEvent]:
        """The CLI exited: end its turn, drop what it will never answer, reset the stream."""
        events: list[DriverEvent] = []
        turn = self._turn
        if turn is not None:
            stop = Cancelled() if turn.interrupting else Failed("Claude Code exited mid-turn")
            events.extend(self._finish(stop))
        events.extend(RequestWithdrawn(request_id) for request_id in self._asked)
        self._asked.clear()
        for pending in self._controls.values():
            if pending.kind in CONFIG_REQUESTS:
                events.append(ConfigRefused(option=pending.kind, reason="Claude Code exited"))
        self._controls.clear()
        if self.rolling is not None:  # its files' rewind will never be answered
            self.rolling = None
            events.append(RollbackVerdict(accepted=False, reason="Claude Code exited"))
        self._lines = LineSplitter()
        self.content = Content()
        self.initialized = None
        self.interrupted = False
        return events

    def _mentions(self, frame: Mapping[str, Any]) -> list[object]:
        uuids = frame.get("user_message_uuids")
        mentioned: list[object] = list(uuids) if isinstance(uuids, list) else []
        mentioned.append(frame.get("user_message_uuid"))
        return mentioned

    def cancel_message(self, message_uuid: str) -> None:
        body = {"subtype": "cancel_async_message", "message_uuid": message_uuid}
        self._replies += self._control(Pending("cancel_message", message_uuid), body)

    def finish_if_current(self, message_uuid: str) -> list[DriverEvent]:
        turn = self._turn
        if turn is None or turn.uuid != message_uuid:
            return []
        return self._finish(Cancelled())

    def current_uuid(self, *, unbegun: bool = False) -> str | None:
        turn = self._turn
        if turn is None or (unbegun and turn.begun):
            return None
        return turn.uuid
