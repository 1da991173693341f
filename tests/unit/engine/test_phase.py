"""The turn phase: the engine moves through one table of transitions (`_phase.py`).

Each test states one row (or the absence of one) as the engine shows it;
the last ones state h11's rule: a transition outside the table is our bug,
it raises, and the engine stays broken.
"""

from __future__ import annotations

import pytest
from corral.actors.engine import EngineBug, Phase
from corral.actors.engine._phase import TRANSITIONS, TURN_PHASES, PhaseMachine, Trigger
from corral.pipeline.driver import Emitted, TurnBegan, TurnFinished
from corral.pipeline.events import Cancelled, Completed, TextDelta

from .harness import make_engine


def test_a_prompt_starts_a_turn_that_runs_once_the_wire_confirms_it_and_idles_at_its_end() -> None:
    engine, _ = make_engine()
    assert engine.phase is Phase.IDLE
    engine.prompt("go")
    assert engine.phase is Phase.STARTING
    engine.on_driver_event(TurnBegan())
    assert engine.phase is Phase.RUNNING
    engine.on_driver_event(TurnFinished(stop=Completed()))
    assert engine.phase is Phase.IDLE


def test_agent_content_while_idle_opens_a_turn_that_is_running_at_once() -> None:
    engine, _ = make_engine()
    engine.on_driver_event(Emitted(kind=TextDelta(message_id="m1", text="hi")))
    assert engine.phase is Phase.RUNNING


def test_a_cancel_before_the_confirmation_stays_a_cancel_once_the_turn_is_confirmed() -> None:
    engine, _ = make_engine()
    engine.prompt("go")
    engine.cancel()
    assert engine.phase is Phase.CANCELLING_UNCONFIRMED
    engine.on_driver_event(TurnBegan())
    assert engine.phase is Phase.CANCELLING
    engine.on_driver_event(TurnFinished(stop=Cancelled()))
    assert engine.phase is Phase.IDLE


def test_close_ends_the_running_turn_first_and_then_is_closed_for_good() -> None:
    engine, _ = make_engine()
    engine.prompt("go")
    engine.on_driver_event(TurnBegan())
    engine.close()
    assert engine.phase is Phase.CLOSED and engine.turn is None
    engine.on_driver_event(TurnBegan())  # the agent's last words: ignored
    assert engine.phase is Phase.CLOSED


def test_the_table_never_leaves_closed_and_enters_it_only_from_idle() -> None:
    assert not [pair for pair in TRANSITIONS if pair[0] is Phase.CLOSED]
    into_closed = [pair for pair, target in TRANSITIONS.items() if target is Phase.CLOSED]
    assert into_closed == [(Phase.IDLE, Trigger.CLOSE)]
    assert all((phase, Trigger.END) in TRANSITIONS for phase in TURN_PHASES)


def test_a_transition_outside_the_table_raises_and_the_machine_stays_broken() -> None:
    machine = PhaseMachine()
    with pytest.raises(EngineBug, match="IDLE on END"):
        machine.fire(Trigger.END)
    assert machine.phase is Phase.BROKEN
    with pytest.raises(EngineBug):
        machine.fire(Trigger.START)  # a legal move from IDLE: too late, broken is broken
    with pytest.raises(EngineBug):
        machine.check()


def test_a_broken_engine_takes_no_more_input() -> None:
    engine, _ = make_engine()
    with pytest.raises(EngineBug):
        engine._machine.fire(Trigger.CONFIRM)  # a bug: IDLE has no CONFIRM
    with pytest.raises(EngineBug):
        engine.prompt("go")
    with pytest.raises(EngineBug):
        engine.on_driver_event(TurnBegan())
    with pytest.raises(EngineBug):
        engine.on_time()
    with pytest.raises(EngineBug):
        engine.close()
    assert engine.phase is Phase.BROKEN
