"""ENGINE.md, Cancel, close, failure (19-24). #21 and #22 need the actor: see
tests/integration/test_backpressure.py (#21) and tests/integration/test_runtime_api.py
(#22, a close of a stuck agent process behind a slow consumer)."""

from __future__ import annotations

import pytest
from corral.actors.engine import EngineSettings
from corral.pipeline.driver import (
    AgentExited,
    Emitted,
    Interrupt,
    RequestAsked,
    StartTurn,
    SteerVerdict,
    TurnBegan,
    TurnFinished,
    WireFailed,
)
from corral.pipeline.errors import CorralError, ErrorKind
from corral.pipeline.events import (
    Cancelled,
    Capability,
    Completed,
    Diagnostic,
    Failed,
    TextDelta,
    TurnEnded,
)

from .harness import events, kinds, make_engine, permission, sent


def ended(engine: object) -> list[TurnEnded]:
    return [e.kind for e in events(engine) if isinstance(e.kind, TurnEnded)]  # type: ignore[arg-type]


def test_cancel_keeping_the_queue_starts_the_next_prompt_after_the_cancelled_turn() -> None:
    engine, _ = make_engine()
    engine.prompt("one")
    engine.on_driver_event(TurnBegan())
    engine.prompt("two")
    engine.cancel(clear_queue=False)
    assert Interrupt("t1") in sent(engine)
    engine.on_driver_event(TurnFinished(stop=Cancelled()))
    engine.on_quiescent()
    assert [c.prompt_id for c in sent(engine) if isinstance(c, StartTurn)] == ["p2"]


def test_cancel_clearing_the_queue_drops_queued_prompts_and_a_pending_steer() -> None:
    engine, _ = make_engine(Capability.STEER)
    engine.prompt("one")
    engine.on_driver_event(TurnBegan())
    steer = engine.prompt("steer")
    engine.prompt("queued")
    engine.cancel(clear_queue=True)
    assert steer.settled and steer.error is not None  # type: ignore[union-attr]
    assert steer.error.kind is ErrorKind.INVALID_REQUEST  # type: ignore[union-attr]
    engine.on_driver_event(SteerVerdict(prompt_id="p2", accepted=True))  # too late: ignored
    engine.on_driver_event(TurnFinished(stop=Cancelled()))
    engine.on_quiescent()
    assert not [c for c in sent(engine) if isinstance(c, StartTurn) and c.prompt_id != "p1"]
    assert not engine.queue


def test_cancel_on_an_idle_session_is_a_no_op_success() -> None:
    engine, _ = make_engine()
    engine.cancel()
    assert not sent(engine) and not events(engine)


def test_dequeue_removes_a_queued_prompt_once_and_it_never_starts() -> None:
    engine, _ = make_engine()
    engine.prompt("one")
    engine.on_driver_event(TurnBegan())
    engine.prompt("two")
    engine.dequeue("p2")
    with pytest.raises(CorralError) as again:
        engine.dequeue("p2")
    assert again.value.kind is ErrorKind.INVALID_REQUEST
    engine.on_driver_event(TurnFinished(stop=Completed()))
    engine.on_quiescent()
    assert not [c for c in sent(engine) if isinstance(c, StartTurn) and c.prompt_id == "p2"]


def test_the_agent_dying_mid_turn_fails_the_turn_and_the_session() -> None:
    engine, _ = make_engine()
    engine.prompt("one")
    engine.on_driver_event(TurnBegan())
    engine.on_driver_event(RequestAsked(request=permission()))
    engine.on_driver_event(AgentExited(status="9", stderr="mock died"))
    produced = events(engine)
    assert kinds(produced)[-3:] == ["RequestClosed", "TurnEnded", "StatusChanged"]
    assert isinstance(produced[-2].kind, TurnEnded)
    assert isinstance(produced[-2].kind.stop, Failed)
    assert engine.failure is not None
    assert engine.failure.kind is ErrorKind.PROCESS_EXITED
    assert engine.failure.fields == {"status": "9", "stderr": "mock died"}
    with pytest.raises(CorralError) as later:
        engine.prompt("again")
    assert later.value.kind is ErrorKind.SESSION_CLOSED


def test_a_long_silence_mid_turn_earns_exactly_one_stall_warning() -> None:
    engine, clock = make_engine(settings=EngineSettings(stall_after=60))
    engine.prompt("one")
    engine.on_driver_event(TurnBegan())
    for _ in range(3):
        clock.advance(60)
        engine.on_time()
    stalls = [e for e in events(engine) if isinstance(e.kind, Diagnostic)]
    assert len(stalls) == 1
    assert stalls[0].extensions["corral/stall"]["silent_seconds"] == 60


def test_no_stall_warning_while_the_turn_waits_on_the_app() -> None:
    engine, clock = make_engine(settings=EngineSettings(stall_after=60))
    engine.prompt("one")
    engine.on_driver_event(TurnBegan())
    engine.on_driver_event(RequestAsked(request=permission()))
    clock.advance(600)
    engine.on_time()
    assert "Diagnostic" not in kinds(events(engine))


def test_activity_after_a_stall_re_arms_the_warning_for_the_next_silence() -> None:
    engine, clock = make_engine(settings=EngineSettings(stall_after=60))
    engine.prompt("one")
    engine.on_driver_event(TurnBegan())
    clock.advance(60)
    engine.on_time()
    engine.on_driver_event(Emitted(kind=TextDelta(message_id="m", text="back")))
    clock.advance(60)
    engine.on_time()
    assert kinds(events(engine)).count("Diagnostic") == 2


def test_an_agent_that_never_confirms_a_cancel_has_its_turn_ended_after_the_grace() -> None:
    engine, clock = make_engine(settings=EngineSettings(cancel_grace=5))
    engine.prompt("one")
    engine.on_driver_event(TurnBegan())
    engine.cancel()
    clock.advance(5)
    engine.on_time()
    assert ended(engine) == [TurnEnded(stop=Cancelled())]


def test_close_ends_the_running_turn_cancelled_and_refuses_later_commands() -> None:
    engine, _ = make_engine()
    engine.prompt("one")
    engine.on_driver_event(TurnBegan())
    engine.close()
    assert ended(engine) == [TurnEnded(stop=Cancelled())]
    with pytest.raises(CorralError) as later:
        engine.cancel()
    assert later.value.kind is ErrorKind.SESSION_CLOSED


def test_losing_auth_mid_turn_ends_the_turn_failed_once_and_errors_the_session() -> None:
    engine, _ = make_engine()
    engine.prompt("one")
    engine.on_driver_event(TurnBegan())
    engine.on_driver_event(WireFailed(kind=ErrorKind.AUTH_REQUIRED, message="the login expired"))
    engine.on_driver_event(TurnFinished(stop=Completed()))  # whatever the wire says after
    produced = events(engine)
    ends = [e.kind for e in produced if isinstance(e.kind, TurnEnded)]
    assert ends == [TurnEnded(stop=Failed("the login expired"))]
    assert engine.failure is not None
    assert engine.failure.kind is ErrorKind.AUTH_REQUIRED
    assert engine.failure.message == "the login expired"
    with pytest.raises(CorralError) as later:
        engine.prompt("again")
    assert later.value.kind is ErrorKind.SESSION_CLOSED
