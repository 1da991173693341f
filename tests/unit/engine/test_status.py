"""ENGINE.md, Status (12-14)."""

from __future__ import annotations

import attrs
from corral.pipeline.driver import Emitted, RequestAsked, StartTurn, TurnBegan, TurnFinished
from corral.pipeline.events import (
    Completed,
    ContextUsage,
    PermissionAnswer,
    PermissionChoice,
    SessionStatus,
    StatusChanged,
    TextDelta,
    ToolStatus,
    ToolUpdated,
)

from .harness import events, make_engine, permission, sent, tool


def statuses(engine: object) -> list[SessionStatus]:
    return [e.kind.status for e in events(engine) if isinstance(e.kind, StatusChanged)]  # type: ignore[arg-type]


def test_a_permission_turn_shows_working_needs_input_working_idle() -> None:
    engine, _ = make_engine()
    engine.prompt("go")
    engine.on_driver_event(TurnBegan())
    engine.on_driver_event(RequestAsked(request=permission()))
    engine.answer("r1", PermissionAnswer(PermissionChoice.ALLOW_ONCE))
    engine.on_driver_event(TurnFinished(stop=Completed()))
    assert statuses(engine) == [
        SessionStatus.WORKING,
        SessionStatus.NEEDS_INPUT,
        SessionStatus.WORKING,
        SessionStatus.IDLE,
    ]


def test_two_queued_turns_show_working_then_idle_once_without_a_flash() -> None:
    engine, _ = make_engine()
    engine.prompt("one")
    engine.on_driver_event(TurnBegan())
    engine.prompt("two")
    engine.on_driver_event(TurnFinished(stop=Completed()))
    engine.on_quiescent()
    engine.on_driver_event(TurnBegan())
    engine.on_driver_event(TurnFinished(stop=Completed()))
    engine.on_quiescent()
    assert statuses(engine) == [SessionStatus.WORKING, SessionStatus.IDLE]


def test_no_idle_flash_between_two_queued_turns_when_trailing_events_defer_the_start() -> None:
    engine, _ = make_engine()
    engine.prompt("one")
    engine.on_driver_event(TurnBegan())
    engine.on_driver_event(Emitted(kind=ToolUpdated(tool())))
    engine.prompt("two")
    engine.on_driver_event(TurnFinished(stop=Completed()))
    # Trailing events, each its own input, before the source goes quiet:
    finished = attrs.evolve(tool(), status=ToolStatus.COMPLETED)
    engine.on_driver_event(Emitted(kind=ToolUpdated(finished)))  # bookkeeping
    engine.on_driver_event(Emitted(kind=ContextUsage(used_tokens=5)))  # bookkeeping
    engine.on_driver_event(Emitted(kind=TextDelta(message_id="late", text="p.s.")))  # agent turn
    engine.on_quiescent()  # the agent turn runs first: "two" waits
    engine.on_driver_event(TurnFinished(stop=Completed()))
    engine.on_quiescent()
    assert [c.prompt_id for c in sent(engine) if isinstance(c, StartTurn)] == ["p1", "p2"]
    engine.on_driver_event(TurnBegan())
    engine.on_driver_event(TurnFinished(stop=Completed()))
    engine.on_quiescent()
    assert statuses(engine) == [SessionStatus.WORKING, SessionStatus.IDLE]


def test_closing_with_a_queued_prompt_ends_idle() -> None:
    engine, _ = make_engine()
    engine.prompt("one")
    engine.on_driver_event(TurnBegan())
    engine.prompt("two")
    engine.close()
    assert statuses(engine)[-1] is SessionStatus.IDLE
    assert engine.info().status is SessionStatus.IDLE


def test_status_is_already_correct_when_prompt_and_answer_return() -> None:
    engine, _ = make_engine()
    engine.prompt("go")
    assert engine.info().status is SessionStatus.WORKING
    engine.on_driver_event(TurnBegan())
    engine.on_driver_event(RequestAsked(request=permission()))
    assert engine.info().status is SessionStatus.NEEDS_INPUT
    engine.answer("r1", PermissionAnswer(PermissionChoice.ALLOW_ONCE))
    assert engine.info().status is SessionStatus.WORKING
