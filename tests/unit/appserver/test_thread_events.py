"""Thread notifications update or end the session; they are no longer raw diagnostics."""

from __future__ import annotations

from typing import Any

from corral.pipeline.driver import ConfigApplied, DriverEvent, PromptSent, TurnFinished, WireFailed
from corral.pipeline.events import Failed, SessionUpdated, TurnEnded
from corral.sources.appserver._normalize import AppServerNormalizer

from tests.unit.codex.golden import run_engine


def feed(*frames: tuple[str, dict[str, Any]]) -> list[DriverEvent]:
    normalizer, out = AppServerNormalizer(), []
    for method, params in frames:
        out.extend(normalizer.feed(method, params))
    return out


STARTED = ("turn/started", {"threadId": "th", "turnId": "t1"})
CLOSED = ("thread/closed", {"threadId": "th"})


def test_status_and_archiving_are_applied_options_that_update_the_session() -> None:
    out = feed(
        ("thread/status/changed", {"threadId": "th", "status": "waiting"}),
        ("thread/archived", {"threadId": "th", "archived": True}),
    )
    assert out == [
        ConfigApplied(option="thread_status", value="waiting"),
        ConfigApplied(option="archived", value=True),
    ]
    updates = [e.kind for e in run_engine(out) if isinstance(e.kind, SessionUpdated)]
    assert dict(updates[-1].info.options) == {"thread_status": "waiting", "archived": True}


def test_a_thread_closed_mid_turn_ends_the_turn_then_the_session() -> None:
    out = feed(STARTED, CLOSED)
    assert [type(e) for e in out[1:]] == [TurnFinished, WireFailed]
    finished, failed = out[1:]
    assert isinstance(finished, TurnFinished) and isinstance(finished.stop, Failed)
    assert isinstance(failed, WireFailed) and failed.kind == "SessionClosed"


def test_a_thread_closed_between_turns_ends_only_the_session() -> None:
    out = feed(STARTED, ("turn/completed", {"threadId": "th", "turnId": "t1"}), CLOSED)
    assert isinstance(out[-1], WireFailed) and isinstance(out[-2], TurnFinished)
    assert sum(isinstance(e, TurnFinished) for e in out) == 1


def test_through_an_engine_the_turn_ends_before_the_session_closes() -> None:
    events = run_engine([PromptSent(text="go"), *feed(STARTED, CLOSED)])
    names = [type(e.kind).__name__ for e in events]
    ended = names.index("TurnEnded")
    turn_end = events[ended].kind
    assert isinstance(turn_end, TurnEnded) and isinstance(turn_end.stop, Failed)
    # Ended by the driver's TurnFinished (its extension), not by the engine's shutdown.
    assert events[ended].extensions.get("appserver/status") == "closed"
