"""The short way for a stream's deltas (`Turns.on_streamed`) decides as the long way does.

The engine hands each driver event to `on_streamed` first; a text or
reasoning delta of the confirmed turn goes out there, skipping the rest of
the dispatch, `on_content`'s rules and the status check. Each script below
runs twice: as the engine runs it, and with `on_streamed` declining every
event, so that `on_content` decides each delta the long way. Both must make
the same records, the same turn state, the same commands and deadlines,
whether the events come one by one or in batches.
"""

from __future__ import annotations

from collections.abc import Callable

import pytest
from corral.actors.engine import Engine, EngineBug, EngineSettings, Phase
from corral.pipeline.driver import (
    DriverEvent,
    Emitted,
    RequestAsked,
    TurnBegan,
    TurnFinished,
)
from corral.pipeline.events import (
    Completed,
    MessageEnded,
    ReasoningDelta,
    TextDelta,
    ToolOutputDelta,
    ToolUpdated,
)

from .harness import FakeClock, make_engine, permission, tool

Step = Callable[[Engine, FakeClock, bool], None]  # the flag: events in one batch


def _feed(*events: DriverEvent) -> Step:
    def step(engine: Engine, clock: FakeClock, batched: bool) -> None:
        for batch in [events] if batched else [[event] for event in events]:
            engine.on_driver_events(batch)
        clock.advance(1)

    return step


def _delta(message: str = "m1", text: str = "hi", parent: str | None = None) -> Emitted:
    return Emitted(kind=TextDelta(message_id=message, text=text), parent_tool_id=parent)


def _thought(message: str = "r1") -> Emitted:
    return Emitted(kind=ReasoningDelta(message_id=message, text="hmm"))


def _prompt(engine: Engine, clock: FakeClock, batched: bool) -> None:
    engine.prompt("go")


def _cancel(engine: Engine, clock: FakeClock, batched: bool) -> None:
    engine.cancel()


def _close(engine: Engine, clock: FakeClock, batched: bool) -> None:
    engine.close()


def _time(engine: Engine, clock: FakeClock, batched: bool) -> None:
    clock.advance(30)
    engine.on_time()


_SCRIPTS: dict[str, list[Step]] = {
    "a prompted turn, deltas of two messages and a subagent": [
        _prompt,
        _feed(TurnBegan(), _delta(), _delta(text="there")),
        _feed(_thought(), _delta("m2"), _delta("m3", parent="task-1"), _delta()),
        _feed(Emitted(kind=MessageEnded("m2"))),
        _feed(_delta(), TurnFinished(stop=Completed())),
    ],
    "deltas before the turn is confirmed, then after": [
        _prompt,
        _feed(_delta("old"), _thought("old-r")),
        _feed(TurnBegan(), _delta("new")),
        _feed(TurnFinished(stop=Completed())),
    ],
    "deltas while idle open an agent turn; its quiet window ends it": [
        _feed(_delta("m9"), _delta("m9")),
        _feed(_thought()),
        _time,
        _time,
        _time,
        _time,
        _time,
    ],
    "deltas while cancelling, a tool's output, a request in between": [
        _prompt,
        _feed(TurnBegan(), _delta(), Emitted(kind=ToolUpdated(tool()))),
        _feed(
            Emitted(kind=ToolOutputDelta(tool_id=tool().id, text="out")),
            RequestAsked(request=permission("r1")),
            _delta(),
        ),
        _cancel,
        _feed(_delta(), _thought()),
        _feed(TurnFinished(stop=Completed()), _delta("late")),
    ],
    "a stall is warned once; a delta re-arms the warning": [
        _prompt,
        _feed(TurnBegan(), _delta()),
        _time,
        _feed(_delta(), _thought()),
        _time,
        _time,
    ],
    "deltas after the session closed are dropped": [
        _prompt,
        _feed(TurnBegan(), _delta()),
        _close,
        _feed(_delta(), _thought()),
    ],
}


def _run(steps: list[Step], *, short_way: bool, batched: bool) -> list[object]:
    settings = EngineSettings(quiet_agent_turn=100, quiet_prompt_turn=100, stall_after=20)
    engine, clock = make_engine(reliable=False, settings=settings)
    if not short_way:
        engine._turns.on_streamed = lambda event: False  # type: ignore[method-assign]
    seen: list[object] = []
    for step in steps:
        step(engine, clock, batched)
        turn = engine.turn
        seen.append(
            (
                list(engine.outbox),
                list(engine.to_driver),
                engine.status,
                engine.phase,
                engine.next_deadline(),
                None
                if turn is None
                else (turn.last_activity, turn.stall_warned, list(turn.open_messages)),
            )
        )
        engine.outbox.clear()
        engine.to_driver.clear()
    return seen


@pytest.mark.parametrize("batched", [True, False], ids=["batched", "one-by-one"])
@pytest.mark.parametrize("script", list(_SCRIPTS))
def test_the_short_way_makes_what_the_long_way_makes(script: str, batched: bool) -> None:
    steps = _SCRIPTS[script]
    short = _run(steps, short_way=True, batched=batched)
    assert short == _run(steps, short_way=False, batched=batched)
    assert any(outbox for outbox, *_ in short)  # the script produced something


def test_a_delta_after_the_engine_broke_is_refused_not_emitted() -> None:
    engine, _ = make_engine()
    engine.prompt("go")
    engine.on_driver_events([TurnBegan()])
    engine._machine.phase = Phase.BROKEN  # as a bad transition leaves it
    engine.outbox.clear()
    with pytest.raises(EngineBug):
        engine.on_driver_events([_delta()])
    assert not engine.outbox
