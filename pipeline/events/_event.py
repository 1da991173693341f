"""The event envelope: one normalized event of one session.

`sequence` starts at 1 and grows by one per event of the session, in every
sink; the engine assigns it. `turn_info` is present exactly when the event
belongs to a turn. `extensions` holds provider data not (yet) normalized,
namespaced by source (`claude/raw_frame`, `corral/decision`, ...).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import attrs
import orjson

from ..plain import slot_maker
from ._kinds import EventKind, kind_from_wire
from ._session import SystemTime
from ._shape import Fields

__all__ = ["Event", "TurnContext", "encode_kind", "new_event"]

_EPOCH = SystemTime(0, 0)
# The (time, turn, session) last encoded and their JSON: one tuple, replaced whole, so
# a thread encoding meanwhile (the transcript's) sees a consistent one.
_last_shared: list[tuple[SystemTime | None, object, str, bytes]] = [(None, None, "", b"")]


@attrs.frozen(kw_only=True)
class TurnContext:
    id: str
    parent_tool_id: str | None = None  # set for events of a subagent

    def to_wire(self) -> dict[str, object]:
        return {"id": self.id, "parent_tool_id": self.parent_tool_id}


@attrs.frozen(kw_only=True)
class Event:
    sequence: int
    session_id: str
    kind: EventKind
    occurred_at: SystemTime = _EPOCH
    turn_info: TurnContext | None = None
    # Raw provider data, kept verbatim; treat as read-only.
    extensions: dict[str, Any] = attrs.field(factory=dict)
    # The JSON encoding, made once and shared by every sink (see `json`).
    _json: bytes | None = attrs.field(default=None, init=False, eq=False, repr=False)
    # The kind's part of it, if made before the event was (`reuse_kind_json`).
    _kind_json: bytes | None = attrs.field(default=None, init=False, eq=False, repr=False)

    def json(self) -> bytes:
        """This event as JSON bytes; encoded on first use, then shared."""
        encoded = self._json
        if encoded is None:
            encoded = _encode(self)
            object.__setattr__(self, "_json", encoded)
        return encoded

    def reuse_kind_json(self, encoded: bytes) -> None:
        """`encoded`: `encode_kind(self.kind)`, made already (by the driver event this
        event comes from, when a channel measured it), for `json` to reuse."""
        object.__setattr__(self, "_kind_json", encoded)

    def to_wire(self) -> dict[str, object]:
        return {
            "sequence": self.sequence,
            "occurred_at": self.occurred_at.to_wire(),
            "session_id": self.session_id,
            "turn_info": None if self.turn_info is None else self.turn_info.to_wire(),
            "kind": self.kind.to_wire(),
            "extensions": self.extensions,
        }

    @classmethod
    def from_wire(cls, raw: object, path: str = "event") -> Event:
        fields = Fields(raw, path)
        turn = fields.opt_obj("turn_info")
        occurred = fields.opt_obj("occurred_at")
        extensions = fields.obj("extensions").raw
        return cls(
            sequence=fields.integer("sequence"),
            session_id=fields.string("session_id"),
            kind=kind_from_wire(fields.value("kind"), f"{path}.kind"),
            occurred_at=_EPOCH if occurred is None else SystemTime.from_wire(occurred.raw, ""),
            turn_info=None
            if turn is None
            else TurnContext(
                id=turn.string("id"), parent_tool_id=turn.opt_string("parent_tool_id")
            ),
            extensions=extensions,
        )


def encode_kind(kind: EventKind) -> bytes:
    """An event kind as JSON: its part of the event's encoding."""
    return orjson.dumps(kind.to_wire())


def _encode(event: Event) -> bytes:
    """`orjson.dumps(event.to_wire())`, byte for byte; what the events of one batch
    share (their time, turn and session: the same objects) is encoded once for them."""
    at, turn, session = event.occurred_at, event.turn_info, event.session_id
    last = _last_shared[0]
    if last[0] is not at or last[1] is not turn or last[2] != session:
        shared = {
            "occurred_at": at.to_wire(),
            "session_id": session,
            "turn_info": None if turn is None else turn.to_wire(),
        }
        last = (at, turn, session, orjson.dumps(shared)[1:-1])
        _last_shared[0] = last
    extensions = orjson.dumps(event.extensions) if event.extensions else b"{}"
    kind = event._kind_json or encode_kind(event.kind)
    return b'{"sequence":%d,%b,"kind":%b,"extensions":%b}' % (
        event.sequence,
        last[3],
        kind,
        extensions,
    )


# `new_event`: what the engine makes each event with (`actors/engine/_output.py`).
EventMaker = Callable[
    [int, str, EventKind, SystemTime, TurnContext | None, dict[str, Any], bytes | None], Event
]
_FIELDS = (
    "sequence",
    "session_id",
    "kind",
    "occurred_at",
    "turn_info",
    "extensions",
    "_json",
    "_kind_json",
)


def _constructed(
    sequence: int,
    session_id: str,
    kind: EventKind,
    occurred_at: SystemTime,
    turn_info: TurnContext | None,
    extensions: dict[str, Any],
    kind_json: bytes | None,
) -> Event:
    event = Event(
        sequence=sequence,
        session_id=session_id,
        kind=kind,
        occurred_at=occurred_at,
        turn_info=turn_info,
        extensions=extensions,
    )
    if kind_json is not None:
        event.reuse_kind_json(kind_json)
    return event


# `Event(...)`, its kind's JSON reused if given (`reuse_kind_json`); through the slots
# while `Event` is plain (`pipeline/plain.py`), else the constructor.
new_event: EventMaker = slot_maker(Event, _FIELDS, otherwise=_constructed, fixed={"_json": None})
