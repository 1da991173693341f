"""`Event.json`: the bytes of `orjson.dumps(event.to_wire())`, whatever the events around it.

The encoder shares the JSON of what a batch's events share (the same time,
turn and session objects); each event's bytes must still be its own: a new
time, turn or session (even with an equal time object) is encoded anew.
"""

from __future__ import annotations

import orjson
from corral.pipeline.events import (
    ContextCompacted,
    Diagnostic,
    DiagnosticLevel,
    Event,
    EventKind,
    SystemTime,
    TextDelta,
    TurnContext,
)
from corral.pipeline.wire import event_line, event_lines

from tests.support.schema import check_line

_AT = SystemTime(1_700_000_000, 123_456_789)
_LATER = SystemTime(1_700_000_001, 5)
_TURN = TurnContext(id="turn-1")
_SUBAGENT = TurnContext(id="turn-1", parent_tool_id="tool-7")


def _event(
    sequence: int,
    kind: EventKind,
    *,
    at: SystemTime = _AT,
    turn: TurnContext | None = _TURN,
    session: str = "s-1",
    extensions: dict[str, object] | None = None,
) -> Event:
    return Event(
        sequence=sequence,
        session_id=session,
        kind=kind,
        occurred_at=at,
        turn_info=turn,
        extensions={} if extensions is None else extensions,
    )


def test_each_event_is_its_own_json_through_shared_and_changing_parts() -> None:
    delta = TextDelta(message_id="m-1", text='a "quoted" chunk\nwith é and \u2028')
    events = [
        _event(1, delta),
        _event(2, delta),  # all shared with the one before
        _event(3, delta, turn=_SUBAGENT),  # another turn context, the same time
        _event(4, ContextCompacted(), turn=None),  # no turn: a unit variant
        _event(5, delta, session="s-2", turn=None),  # another session, the same objects
        _event(6, delta, at=_LATER, turn=None, session="s-2"),
        _event(7, delta, at=SystemTime(*_LATER.to_wire().values()), turn=None, session="s-2"),
        _event(8, Diagnostic(level=DiagnosticLevel.INFO, message="x"), extensions={"a/b": [1]}),
        _event(2**40, delta),
    ]
    for event in events:
        assert event.json() == orjson.dumps(event.to_wire())
        check_line(orjson.loads(event_line(event)))


def test_an_event_encoded_after_others_keeps_its_own_time() -> None:
    first = _event(1, TextDelta(message_id="m", text="a"))
    other = _event(2, TextDelta(message_id="m", text="b"), at=_LATER)
    assert other.json() == orjson.dumps(other.to_wire())
    assert first.json() == orjson.dumps(first.to_wire())
    assert orjson.loads(first.json())["occurred_at"]["secs_since_epoch"] == _AT.secs


def test_a_batch_of_event_lines_is_each_event_line_in_turn() -> None:
    delta = TextDelta(message_id="m-1", text='}\n{"event":')  # the joint, as text
    events = [_event(1, delta), _event(2, ContextCompacted(), turn=None), _event(3, delta)]
    joined = event_lines(events)
    assert joined == b"".join(event_line(event) for event in events)
    for line in joined.splitlines():
        check_line(orjson.loads(line))
    assert event_lines([]) == b""
