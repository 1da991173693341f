"""The engine makes every session record (`pipeline/records.py`), in order:
`Opened` first, a `Prompted` before what each prompt caused, then at the end
at most one `SessionFailed` and exactly one `Closed`. Neither the actor nor
the replay makes any of them."""

from __future__ import annotations

import pytest
from corral.actors.engine import EngineBug
from corral.pipeline.driver import AgentExited, TurnBegan, TurnFinished
from corral.pipeline.errors import ErrorKind
from corral.pipeline.events import Completed, Delivery, Event, PromptOrigin, TurnStarted
from corral.pipeline.records import Closed, Opened, Prompted, SessionFailed, SinkItem

from .harness import make_engine


def drain(engine: object) -> list[SinkItem]:
    outbox = engine.outbox  # type: ignore[attr-defined]
    items = list(outbox)
    outbox.clear()
    return items


def test_the_outbox_opens_with_opened_carrying_the_info_and_the_session_dir() -> None:
    engine, _ = make_engine()
    [opened] = drain(engine)
    assert isinstance(opened, Opened)
    assert opened.info == engine.info() and opened.dir == "/work/project"


def test_a_prompt_is_recorded_with_its_id_just_before_the_turn_it_started() -> None:
    engine, _ = make_engine()
    drain(engine)
    delivery = engine.prompt("hello")
    prompted, started = drain(engine)[:2]
    assert isinstance(prompted, Prompted) and isinstance(delivery, Delivery)
    assert (prompted.prompt_id, prompted.text) == (delivery.prompt_id, "hello")
    assert isinstance(started, Event) and isinstance(started.kind, TurnStarted)
    assert started.kind.origin == PromptOrigin(delivery.prompt_id)


def test_a_queued_prompt_is_recorded_when_it_is_accepted_with_the_next_id() -> None:
    engine, _ = make_engine()
    engine.prompt("one")
    drain(engine)
    engine.prompt("two")
    prompted = [item for item in drain(engine) if isinstance(item, Prompted)]
    assert [(p.prompt_id, p.text) for p in prompted] == [("p2", "two")]


def test_finish_after_close_ends_the_records_with_closed_and_the_counts() -> None:
    engine, _ = make_engine()
    engine.prompt("go")
    engine.on_driver_event(TurnBegan())
    engine.on_driver_event(TurnFinished(stop=Completed()))
    engine.close()
    engine.finish()
    items = drain(engine)
    closed = items[-1]
    assert isinstance(closed, Closed) and closed.reason == "closed"
    assert closed.turns == 1 and closed.events == engine.sequence
    assert not any(isinstance(item, SessionFailed) for item in items)


def test_finish_after_the_agent_died_records_the_error_then_closed_failed() -> None:
    engine, _ = make_engine()
    engine.on_driver_event(AgentExited(status="9", stderr="boom"))
    engine.finish()
    failed, closed = drain(engine)[-2:]
    assert isinstance(failed, SessionFailed) and failed.error.kind is ErrorKind.PROCESS_EXITED
    assert isinstance(closed, Closed) and closed.reason == "failed"


def test_finish_comes_once_and_only_after_the_session_ended() -> None:
    engine, _ = make_engine()
    with pytest.raises(EngineBug):
        engine.finish()  # still open
    engine, _ = make_engine()
    engine.close()
    engine.finish()
    with pytest.raises(EngineBug):
        engine.finish()
