"""`SessionTail.saw_all`: a batch seen at once leaves the tail as seeing each in turn.

The line sink feeds its tail a batch at a time and skips the call for the
bulk of a stream (deltas); the turn, the open requests, the status and the
last sequence must still be what the app was given.
"""

from __future__ import annotations

import pytest
from corral.pipeline.errors import CorralError, ErrorKind
from corral.pipeline.events import (
    Completed,
    Event,
    EventKind,
    PermissionRequest,
    PromptOrigin,
    RequestClosed,
    RequestOpened,
    SessionStatus,
    StatusChanged,
    SystemTime,
    TextDelta,
    ToolKind,
    ToolOutputDelta,
    ToolStatus,
    ToolUpdate,
    TurnContext,
    TurnEnded,
    TurnStarted,
)
from corral.pipeline.records import Closed, CloseReason, SessionFailed, SinkItem
from corral.sinks.lines import SessionTail

_TURN = TurnContext(id="t-1")
_AT = SystemTime(1_700_000_000, 0)


def _event(sequence: int, kind: EventKind, turn: TurnContext | None = _TURN) -> Event:
    return Event(
        sequence=sequence,
        session_id="s-1",
        kind=kind,
        occurred_at=_AT,
        turn_info=turn,
    )


def _stream() -> list[SinkItem]:
    tool = ToolUpdate(id="tool-1", kind=ToolKind.EXECUTE, title="ls", status=ToolStatus.PENDING)
    request = PermissionRequest(id="r-1", tool=tool, options=())
    kinds: list[tuple[EventKind, TurnContext | None]] = [
        (TurnStarted(origin=PromptOrigin(prompt_id="p-1")), _TURN),
        (TextDelta(message_id="m", text="a"), _TURN),
        (RequestOpened(request=request), _TURN),
        (StatusChanged(status=SessionStatus.NEEDS_INPUT), None),
        (ToolOutputDelta(tool_id="tool-1", text="x"), _TURN),
        (RequestClosed(request_id="r-1"), _TURN),
        (TextDelta(message_id="m", text="b"), _TURN),
        (TurnEnded(stop=Completed()), _TURN),
        (TextDelta(message_id="m", text="late"), None),
    ]
    items: list[SinkItem] = [_event(n, kind, turn) for n, (kind, turn) in enumerate(kinds, 1)]
    error = CorralError(ErrorKind.PROCESS_EXITED, "gone")
    return [
        *items,
        SessionFailed(session_id="s-1", error=error),
        Closed(session_id="s-1", reason=CloseReason.FAILED, at=_AT),
    ]


def _state(tail: SessionTail) -> tuple[object, ...]:
    return (tail.sequence, tail.turn, dict(tail.requests), tail.status, tail.failed, tail.closed)


@pytest.mark.parametrize("cut", range(1, 12))
def test_a_stream_seen_in_batches_leaves_the_tail_as_seen_one_by_one(cut: int) -> None:
    items = _stream()
    for end in range(len(items) + 1):
        one_by_one, batched = SessionTail(), SessionTail()
        for item in items[:end]:
            one_by_one.saw(item)
        for start in range(0, end, cut):
            batched.saw_all(items[start : min(start + cut, end)])
        assert _state(batched) == _state(one_by_one), (cut, end)


def test_a_batch_of_deltas_only_moves_the_sequence() -> None:
    tail = SessionTail()
    tail.saw_all([_event(1, TurnStarted(origin=PromptOrigin(prompt_id="p-1")))])
    tail.saw_all([_event(n, TextDelta(message_id="m", text="x")) for n in range(2, 7)])
    assert (tail.sequence, tail.turn) == (6, _TURN)
