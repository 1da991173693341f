"""Any interleaving of commands, agent output and time keeps the engine's invariants:
a gapless sequence, exactly one TurnEnded per TurnStarted, every request closed
exactly once, status only on change, turn_info only inside the turn."""

from __future__ import annotations

import attrs
from corral.actors.engine import EngineSettings, Pending
from corral.pipeline.commands import PermissionMode
from corral.pipeline.driver import (
    AgentExited,
    Emitted,
    RequestAsked,
    RequestWithdrawn,
    SteerVerdict,
    TurnBegan,
    TurnFinished,
)
from corral.pipeline.errors import CorralError
from corral.pipeline.events import (
    Cancelled,
    Capability,
    Completed,
    ContextUsage,
    Event,
    MessageEnded,
    PermissionAnswer,
    PermissionChoice,
    RequestClosed,
    RequestOpened,
    StatusChanged,
    TextDelta,
    ToolStatus,
    ToolUpdated,
    TurnEnded,
    TurnStarted,
)
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.unit.engine.harness import make_engine, permission, sent, tool

Step = tuple[str, int]

STEPS = st.lists(
    st.tuples(
        st.sampled_from(
            [
                "prompt",
                "cancel",
                "cancel_clear",
                "answer",
                "answer_bad",
                "dequeue",
                "close",
                "began",
                "text",
                "end_msg",
                "tool_start",
                "tool_done",
                "finished",
                "finished_cancel",
                "ask",
                "withdraw",
                "usage",
                "steer_yes",
                "steer_no",
                "quiet",
                "tick",
                "exit",
            ]
        ),
        st.integers(min_value=0, max_value=3),
    ),
    max_size=60,
)


def apply(engine: object, clock: object, step: Step, pendings: list[Pending]) -> None:
    name, n = step
    e = engine
    try:
        match name:
            case "prompt":
                reply = e.prompt(f"prompt {n}")  # type: ignore[attr-defined]
                if isinstance(reply, Pending):
                    pendings.append(reply)
            case "cancel" | "cancel_clear":
                e.cancel(clear_queue=name == "cancel_clear")  # type: ignore[attr-defined]
            case "answer" | "answer_bad":
                choice = (
                    PermissionChoice.ALLOW_ONCE
                    if name == "answer"
                    else PermissionChoice.ALLOW_ALWAYS
                )
                e.answer(f"r{n}", PermissionAnswer(choice))  # type: ignore[attr-defined]
            case "dequeue":
                e.dequeue(f"p{n}")  # type: ignore[attr-defined]
            case "close":
                e.close()  # type: ignore[attr-defined]
            case "began":
                e.on_driver_event(TurnBegan())  # type: ignore[attr-defined]
            case "text":
                e.on_driver_event(Emitted(kind=TextDelta(message_id=f"m{n}", text="x")))  # type: ignore[attr-defined]
            case "end_msg":
                e.on_driver_event(Emitted(kind=MessageEnded(f"m{n}")))  # type: ignore[attr-defined]
            case "tool_start" | "tool_done":
                status = ToolStatus.RUNNING if name == "tool_start" else ToolStatus.COMPLETED
                update = attrs.evolve(tool(f"tool{n}"), status=status)
                e.on_driver_event(Emitted(kind=ToolUpdated(update)))  # type: ignore[attr-defined]
            case "finished":
                e.on_driver_event(TurnFinished(stop=Completed()))  # type: ignore[attr-defined]
            case "finished_cancel":
                e.on_driver_event(TurnFinished(stop=Cancelled()))  # type: ignore[attr-defined]
            case "ask":
                e.on_driver_event(RequestAsked(request=permission(f"r{n}", tool_id=f"tool{n}")))  # type: ignore[attr-defined]
            case "withdraw":
                e.on_driver_event(RequestWithdrawn(f"r{n}"))  # type: ignore[attr-defined]
            case "usage":
                e.on_driver_event(Emitted(kind=ContextUsage(used_tokens=n)))  # type: ignore[attr-defined]
            case "steer_yes" | "steer_no":
                e.on_driver_event(SteerVerdict(prompt_id=f"p{n}", accepted=name == "steer_yes"))  # type: ignore[attr-defined]
            case "quiet":
                e.on_quiescent()  # type: ignore[attr-defined]
            case "tick":
                clock.advance(30 * (n + 1))  # type: ignore[attr-defined]
                e.on_time()  # type: ignore[attr-defined]
            case "exit":
                e.on_driver_event(AgentExited(status="1", stderr="gone"))  # type: ignore[attr-defined]
    except CorralError:
        pass  # refusals are part of the contract; the invariants must still hold


def check_invariants(produced: list[Event], finished: bool) -> None:
    assert [e.sequence for e in produced] == list(range(1, len(produced) + 1))
    open_turn: str | None = None
    open_requests: set[str] = set()
    closed_requests: set[str] = set()
    last_status = None
    for event in produced:
        match event.kind:
            case TurnStarted():
                assert open_turn is None, "a turn started inside a turn"
                assert event.turn_info is not None
                open_turn = event.turn_info.id
            case TurnEnded():
                assert event.turn_info is not None and event.turn_info.id == open_turn
                open_turn = None
            case RequestOpened(request=request):
                assert request.id not in open_requests | closed_requests
                open_requests.add(request.id)
            case RequestClosed(request_id=request_id):
                assert request_id in open_requests, "closed a request that was not open"
                open_requests.discard(request_id)
                closed_requests.add(request_id)
            case StatusChanged(status=status):
                assert status != last_status, "status emitted without a change"
                last_status = status
        if event.turn_info is not None and not isinstance(event.kind, TurnStarted | TurnEnded):
            assert event.turn_info.id == open_turn, "turn_info outside its turn"
    if finished:
        assert open_turn is None, "the session ended inside a turn"
        assert not open_requests, "a request was never closed"


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(STEPS, st.booleans(), st.booleans())
def test_any_interleaving_keeps_the_engine_invariants(
    steps: list[Step], steerable: bool, reliable: bool
) -> None:
    features = (Capability.STEER,) if steerable else ()
    engine, clock = make_engine(
        *features,
        reliable=reliable,
        mode=PermissionMode.ASK,
        settings=EngineSettings(quiet_prompt_turn=60, quiet_agent_turn=20, stall_after=45),
    )
    pendings: list[Pending] = []
    for step in steps:
        apply(engine, clock, step, pendings)
        sent(engine)
    engine.close()
    produced = [item for item in engine.outbox if isinstance(item, Event)]
    check_invariants(produced, finished=True)
    for pending in pendings:
        assert pending.settled
    # Every steer that was waiting for a verdict got an answer when the session ended.
    assert engine.steer is None
