"""ENGINE.md, Turns (1–11): one behaviour per test, on virtual time."""

from __future__ import annotations

from collections.abc import Callable

import attrs
import pytest
from corral.actors.engine import Engine, EngineSettings
from corral.pipeline.driver import (
    Emitted,
    RequestAsked,
    StartTurn,
    SteerTurn,
    SteerVerdict,
    TokenCount,
    TurnBegan,
    TurnFinished,
)
from corral.pipeline.events import (
    AgentOrigin,
    Capability,
    ChoicesAnswer,
    Completed,
    CompletionSource,
    ContextUsage,
    Delivery,
    Diagnostic,
    DiagnosticLevel,
    EventKind,
    MessageEnded,
    PermissionAnswer,
    PermissionChoice,
    PlanEntry,
    PlanStatus,
    PlanUpdated,
    PromptOrigin,
    QuestionsAnswer,
    Queued,
    ReasoningDelta,
    Started,
    Steered,
    TextDelta,
    ToolStatus,
    ToolUpdated,
    TurnEnded,
    TurnStarted,
    UserMessage,
)

from .harness import events, kinds, make_engine, permission, question, sent, tool


def text(message_id: str = "m1", body: str = "hi") -> Emitted:
    return Emitted(kind=TextDelta(message_id=message_id, text=body))


def test_prompt_on_idle_session_starts_a_turn_that_completes_with_its_request_answered() -> None:
    engine, _ = make_engine()
    delivery = engine.prompt("hello")
    assert isinstance(delivery, Delivery) and delivery.kind == Started("t1")
    engine.on_driver_event(TurnBegan())
    engine.on_driver_event(RequestAsked(request=permission()))
    engine.answer("r1", PermissionAnswer(PermissionChoice.ALLOW_ONCE))
    engine.on_driver_event(TurnFinished(stop=Completed()))
    produced = events(engine)
    started = produced[0]
    assert started.kind == TurnStarted(PromptOrigin(delivery.prompt_id))
    assert kinds(produced).count("RequestClosed") == 1
    ended = [e for e in produced if isinstance(e.kind, TurnEnded)]
    assert [e.kind.stop for e in ended] == [Completed()]  # type: ignore[union-attr]


def test_second_prompt_while_running_is_queued_and_starts_fifo_after_the_first() -> None:
    engine, _ = make_engine()
    engine.prompt("one")
    engine.on_driver_event(TurnBegan())
    second = engine.prompt("two")
    third = engine.prompt("three")
    assert isinstance(second, Delivery) and second.kind == Queued(0)
    assert isinstance(third, Delivery) and third.kind == Queued(1)
    sent(engine)
    engine.on_driver_event(TurnFinished(stop=Completed()))
    engine.on_quiescent()
    started = [c for c in sent(engine) if isinstance(c, StartTurn)]
    assert [(c.turn_id, c.prompt_id, c.text) for c in started] == [("t2", second.prompt_id, "two")]
    turn_starts = [e.kind for e in events(engine) if isinstance(e.kind, TurnStarted)]
    assert turn_starts[-1] == TurnStarted(PromptOrigin(second.prompt_id))


def test_a_prompt_to_a_steerable_agent_is_steered_into_the_running_turn() -> None:
    engine, _ = make_engine(Capability.STEER)
    engine.prompt("one")
    engine.on_driver_event(TurnBegan())
    pending = engine.prompt("also this")
    steer = [c for c in sent(engine) if isinstance(c, SteerTurn)]
    assert len(steer) == 1 and steer[0].turn_id == "t1"
    engine.on_driver_event(SteerVerdict(prompt_id=steer[0].prompt_id, accepted=True))
    assert pending.settled and pending.value == Delivery(prompt_id="p2", kind=Steered("t1"))  # type: ignore[union-attr]


def test_a_rejected_steer_goes_to_the_head_of_the_queue_and_runs_next() -> None:
    engine, _ = make_engine(Capability.STEER)
    engine.prompt("one")
    engine.on_driver_event(TurnBegan())
    steered = engine.prompt("steer me")  # sent as a steer
    queued = engine.prompt("after")  # queued behind
    engine.on_driver_event(SteerVerdict(prompt_id="p2", accepted=False, reason="busy"))
    assert steered.value == Delivery(prompt_id="p2", kind=Queued(0))  # type: ignore[union-attr]
    assert isinstance(queued, Delivery) and queued.kind == Queued(0)
    sent(engine)
    engine.on_driver_event(TurnFinished(stop=Completed()))
    engine.on_quiescent()
    started = [c.prompt_id for c in sent(engine) if isinstance(c, StartTurn)]
    assert started == ["p2"]


def ended_by_inference(engine: Engine) -> bool:
    ends = [e.kind for e in events(engine) if isinstance(e.kind, TurnEnded)]
    assert ends in ([], [TurnEnded(stop=Completed(CompletionSource.INFERRED))])
    return bool(ends)


def test_a_wire_without_turn_end_gets_an_inferred_completion_after_the_quiet_window() -> None:
    engine, clock = make_engine(reliable=False, settings=EngineSettings(quiet_prompt_turn=30))
    engine.prompt("hello")
    engine.on_driver_event(TurnBegan())
    engine.on_driver_event(text())
    clock.advance(29)
    engine.on_time()
    assert not ended_by_inference(engine)
    clock.advance(1)
    assert engine.next_deadline() == clock.now
    engine.on_time()
    assert ended_by_inference(engine)


def prompted_turn(engine: Engine) -> None:
    engine.prompt("hello")
    engine.on_driver_event(TurnBegan())


def agent_turn(engine: Engine) -> None:
    engine.on_driver_event(text())


@pytest.mark.parametrize(
    ("opening", "window"), [(prompted_turn, 120.0), (agent_turn, 20.0)], ids=["prompt", "agent"]
)
def test_the_default_quiet_window_is_120_s_for_prompted_and_20_s_for_agent_turns(
    opening: Callable[[Engine], None], window: float
) -> None:
    engine, clock = make_engine(reliable=False)  # the default EngineSettings
    opening(engine)
    clock.advance(window - 0.5)
    engine.on_time()
    assert not ended_by_inference(engine)
    clock.advance(0.5)
    engine.on_time()
    assert ended_by_inference(engine)


def test_the_quiet_window_pauses_while_a_tool_runs() -> None:
    engine, clock = make_engine(reliable=False, settings=EngineSettings(quiet_prompt_turn=10))
    engine.prompt("hello")
    engine.on_driver_event(TurnBegan())
    engine.on_driver_event(Emitted(kind=ToolUpdated(tool())))  # Pending: running
    clock.advance(100)
    engine.on_time()
    assert not ended_by_inference(engine)
    done = attrs.evolve(tool(), status=ToolStatus.COMPLETED)
    engine.on_driver_event(Emitted(kind=ToolUpdated(done)))  # re-arms the window
    clock.advance(9)
    engine.on_time()
    assert not ended_by_inference(engine)
    clock.advance(1)
    engine.on_time()
    assert ended_by_inference(engine)


def test_the_quiet_window_pauses_while_a_request_is_open_and_the_answer_re_arms_it() -> None:
    engine, clock = make_engine(reliable=False, settings=EngineSettings(quiet_prompt_turn=10))
    engine.prompt("hello")
    engine.on_driver_event(TurnBegan())
    engine.on_driver_event(RequestAsked(request=question()))  # a question runs no tool
    clock.advance(100)
    engine.on_time()
    assert not ended_by_inference(engine)
    engine.answer("q1", QuestionsAnswer((ChoicesAnswer(("red",)),)))  # re-arms the window
    clock.advance(9)
    engine.on_time()
    assert not ended_by_inference(engine)
    clock.advance(1)
    engine.on_time()
    assert ended_by_inference(engine)


@pytest.mark.parametrize(
    "content",
    [
        TextDelta(message_id="m1", text="more"),
        ReasoningDelta(message_id="r1", text="thinking"),
        UserMessage(message_id="u1", text="from the agent's side"),
        PlanUpdated(entries=(PlanEntry(text="step", status=PlanStatus.PENDING),)),
        MessageEnded("m1"),
    ],
    ids=lambda kind: type(kind).__name__,
)
def test_every_content_event_re_arms_the_quiet_window(content: EventKind) -> None:
    engine, clock = make_engine(reliable=False, settings=EngineSettings(quiet_prompt_turn=10))
    engine.prompt("hello")
    engine.on_driver_event(TurnBegan())
    engine.on_driver_event(text())
    clock.advance(9)
    engine.on_driver_event(Emitted(kind=content))
    clock.advance(9)  # 18 s after the first delta, 9 s after the last content
    engine.on_time()
    assert not ended_by_inference(engine)
    clock.advance(1)
    engine.on_time()
    assert ended_by_inference(engine)


def test_content_while_idle_opens_an_agent_turn_whose_end_ends_its_messages() -> None:
    engine, clock = make_engine()
    engine.on_driver_event(text("m9"))
    clock.advance(EngineSettings().quiet_agent_turn)
    engine.on_time()
    produced = events(engine)
    assert produced[0].kind == TurnStarted(AgentOrigin())
    assert kinds(produced)[-3:] == ["MessageEnded", "TurnEnded", "StatusChanged"]
    assert produced[-3].kind == MessageEnded("m9")


def test_trailing_agent_content_after_a_turn_end_runs_before_the_queued_prompt() -> None:
    engine, _ = make_engine()
    engine.prompt("one")
    engine.on_driver_event(TurnBegan())
    engine.prompt("two")
    sent(engine)
    engine.on_driver_event(TurnFinished(stop=Completed()))
    engine.on_driver_event(text("late"))  # arrives before the source went quiet
    engine.on_quiescent()
    assert not [c for c in sent(engine) if isinstance(c, StartTurn)]
    engine.on_driver_event(TurnFinished(stop=Completed()))
    engine.on_quiescent()
    assert [c.prompt_id for c in sent(engine) if isinstance(c, StartTurn)] == ["p2"]
    origins = [e.kind.origin for e in events(engine) if isinstance(e.kind, TurnStarted)]
    assert origins == [PromptOrigin("p1"), AgentOrigin(), PromptOrigin("p2")]


def test_bookkeeping_after_a_turn_end_carries_no_turn_info() -> None:
    engine, _ = make_engine()
    engine.prompt("one")
    engine.on_driver_event(TurnBegan())
    engine.on_driver_event(Emitted(kind=ToolUpdated(tool())))
    engine.on_driver_event(TurnFinished(stop=Completed()))
    events(engine)
    finished = attrs.evolve(tool(), status=ToolStatus.COMPLETED)
    engine.on_driver_event(Emitted(kind=ToolUpdated(finished)))
    engine.on_driver_event(Emitted(kind=ContextUsage(used_tokens=5)))
    engine.on_driver_event(Emitted(kind=Diagnostic(level=DiagnosticLevel.INFO, message="note")))
    produced = events(engine)
    assert kinds(produced) == ["ToolUpdated", "ContextUsage", "Diagnostic"]
    assert all(event.turn_info is None for event in produced)


def test_a_second_stop_for_the_same_turn_is_one_late_turn_end_warning() -> None:
    engine, _ = make_engine()
    engine.prompt("one")
    engine.on_driver_event(TurnBegan())
    engine.on_driver_event(TurnFinished(stop=Completed()))
    events(engine)
    engine.on_driver_event(TurnFinished(stop=Completed()))
    produced = events(engine)
    assert kinds(produced) == ["Diagnostic"]
    assert "late turn end" in produced[0].kind.message  # type: ignore[union-attr]


def test_turn_ended_lists_the_tools_still_running_as_background() -> None:
    engine, _ = make_engine()
    engine.prompt("one")
    engine.on_driver_event(TurnBegan())
    engine.on_driver_event(Emitted(kind=ToolUpdated(tool("bg1"))))
    engine.on_driver_event(TurnFinished(stop=Completed()))
    ended = [e.kind for e in events(engine) if isinstance(e.kind, TurnEnded)]
    assert ended[0].background == ("bg1",)


def test_frames_of_the_previous_turn_before_the_new_turn_is_acknowledged_are_dropped() -> None:
    engine, _ = make_engine()
    engine.prompt("one")
    engine.on_driver_event(TurnBegan())
    engine.prompt("two")
    engine.on_driver_event(TurnFinished(stop=Completed()))
    engine.on_quiescent()  # t2 starts, not yet acknowledged
    events(engine)
    engine.on_driver_event(text("old", "tail of t1"))
    assert "TextDelta" not in kinds(events(engine))
    assert engine.stale_dropped == 1
    engine.on_driver_event(TurnBegan())
    engine.on_driver_event(text("new", "t2 speaks"))
    fresh = [e for e in events(engine) if isinstance(e.kind, TextDelta)]
    assert [e.turn_info.id for e in fresh] == ["t2"]  # type: ignore[union-attr]


def test_usage_reported_in_a_turn_rides_on_its_end_and_later_usage_has_no_turn() -> None:
    engine, _ = make_engine()
    engine.prompt("one")
    engine.on_driver_event(TurnBegan())
    engine.on_driver_event(Emitted(kind=ContextUsage(used_tokens=10)))
    engine.on_driver_event(Emitted(kind=ContextUsage(used_tokens=20)))
    engine.on_driver_event(TurnFinished(stop=Completed()))
    produced = events(engine)
    assert kinds(produced)[-3:-1] == ["ContextUsage", "TurnEnded"]
    assert produced[-3].kind == ContextUsage(used_tokens=20)
    assert produced[-3].turn_info is not None and produced[-3].turn_info.id == "t1"
    engine.prompt("two")
    engine.on_driver_event(Emitted(kind=ContextUsage(used_tokens=30)))  # before t2 is acked
    late = [e for e in events(engine) if isinstance(e.kind, ContextUsage)]
    assert [e.turn_info for e in late] == [None]


def test_exactly_one_turn_ended_per_turn_started_across_every_ending() -> None:
    engine, _ = make_engine()
    engine.prompt("completed")
    engine.on_driver_event(TurnBegan())
    engine.on_driver_event(TurnFinished(stop=Completed()))
    engine.prompt("cancelled")
    engine.on_driver_event(TurnBegan())
    engine.cancel()
    engine.on_driver_event(TurnFinished(stop=Completed()))  # whatever the wire says
    engine.on_driver_event(TurnFinished(stop=Completed()))  # and a duplicate
    engine.prompt("closed")
    engine.close()
    names = kinds(events(engine))
    assert names.count("TurnStarted") == names.count("TurnEnded") == 3


def test_the_tokens_of_every_usage_report_in_a_turn_are_added_up() -> None:
    engine, _ = make_engine()
    engine.prompt("one")
    engine.on_driver_event(TurnBegan())
    for used, tokens in ((100, {"input": 10, "output": 2}), (150, {"input": 5, "reasoning": 7})):
        engine.on_driver_event(
            Emitted(kind=ContextUsage(used_tokens=used), tokens=TokenCount.from_counts(tokens))
        )
    engine.on_driver_event(TurnFinished(stop=Completed()))
    usage = [e for e in events(engine) if isinstance(e.kind, ContextUsage)]
    assert [e.kind.used_tokens for e in usage] == [150]
    assert usage[0].extensions["corral/tokens"] == {"input": 15, "output": 2, "reasoning": 7}
