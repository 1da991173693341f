"""ENGINE.md, Requests (15-18)."""

from __future__ import annotations

import pytest
from corral.pipeline.commands import PermissionMode
from corral.pipeline.driver import RequestAsked, Respond, TurnBegan, TurnFinished, Withdraw
from corral.pipeline.errors import CorralError, ErrorKind
from corral.pipeline.events import (
    Cancelled,
    ChoicesAnswer,
    Completed,
    PermissionAnswer,
    PermissionChoice,
    QuestionsAnswer,
    RequestClosed,
    RequestOpened,
    TextAnswer,
    ToolKind,
)
from corral.pipeline.records import Decision

from .harness import decisions, events, kinds, make_engine, permission, question, sent

ALLOW = PermissionAnswer(PermissionChoice.ALLOW_ONCE)


def running(**kwargs: object) -> object:
    engine, _ = make_engine(**kwargs)  # type: ignore[arg-type]
    engine.prompt("go")
    engine.on_driver_event(TurnBegan())
    sent(engine)
    events(engine)
    return engine


def refused(engine: object, request_id: str, answer: object) -> CorralError:
    with pytest.raises(CorralError) as raised:
        engine.answer(request_id, answer)  # type: ignore[attr-defined]
    assert raised.value.kind is ErrorKind.INVALID_REQUEST
    return raised.value


def test_an_answer_to_an_unknown_request_is_invalid_request() -> None:
    engine = running()
    assert "no request" in refused(engine, "r404", ALLOW).message


def test_an_answer_to_a_closed_request_is_invalid_request() -> None:
    engine = running()
    engine.on_driver_event(RequestAsked(request=permission()))
    engine.answer("r1", ALLOW)
    assert "already closed" in refused(engine, "r1", ALLOW).message


def test_a_choice_that_was_not_offered_is_refused_and_the_request_stays_open() -> None:
    engine = running()
    engine.on_driver_event(RequestAsked(request=permission()))
    refused(engine, "r1", PermissionAnswer(PermissionChoice.ALLOW_ALWAYS))
    assert "r1" in engine.requests
    engine.answer("r1", ALLOW)


def test_a_wrong_count_of_question_answers_is_refused() -> None:
    engine = running()
    engine.on_driver_event(RequestAsked(request=question()))
    refused(engine, "q1", QuestionsAnswer(()))
    assert "q1" in engine.requests


def test_free_text_where_not_allowed_is_refused() -> None:
    engine = running()
    engine.on_driver_event(RequestAsked(request=question()))
    refused(engine, "q1", QuestionsAnswer((TextAnswer("green"),)))


def test_several_choices_on_a_single_select_question_are_refused() -> None:
    engine = running()
    engine.on_driver_event(RequestAsked(request=question()))
    refused(engine, "q1", QuestionsAnswer((ChoicesAnswer(("red", "blue")),)))


def test_a_valid_answer_is_forwarded_then_closed_and_a_second_answer_refused() -> None:
    engine = running()
    engine.on_driver_event(RequestAsked(request=question(multi=True)))
    events(engine)
    answer = QuestionsAnswer((ChoicesAnswer(("red", "blue")),))
    engine.answer("q1", answer)
    assert sent(engine) == [Respond(request_id="q1", answer=answer)]
    produced = events(engine)
    assert produced[0].kind == RequestClosed("q1")
    assert produced[0].extensions["corral/decision"]["decided_by"] == "app"
    refused(engine, "q1", answer)


def test_cancel_closes_every_open_request_before_the_turn_ends_cancelled() -> None:
    engine = running()
    engine.on_driver_event(RequestAsked(request=permission("r1", tool_id="a")))
    engine.on_driver_event(RequestAsked(request=permission("r2", tool_id="b")))
    events(engine)
    engine.cancel()
    assert [c for c in sent(engine) if isinstance(c, Withdraw)] == [Withdraw("r1"), Withdraw("r2")]
    engine.on_driver_event(TurnFinished(stop=Cancelled()))
    names = kinds(events(engine))
    assert names.index("RequestClosed") < names.index("TurnEnded")
    assert names.count("RequestClosed") == 2
    assert {d.decided_by for d in decisions(engine)} == {"cancel"}


def test_a_request_left_open_by_the_turn_end_is_closed_with_it() -> None:
    engine = running()
    engine.on_driver_event(RequestAsked(request=permission()))
    engine.on_driver_event(TurnFinished(stop=Completed()))
    assert kinds(events(engine))[-3:] == ["RequestClosed", "TurnEnded", "StatusChanged"]
    assert not engine.requests


def test_auto_approve_answers_allow_once_without_the_app_seeing_the_request() -> None:
    engine = running(mode=PermissionMode.AUTO_APPROVE)
    engine.on_driver_event(RequestAsked(request=permission()))
    assert sent(engine) == [Respond(request_id="r1", answer=ALLOW)]
    names = kinds(events(engine))
    assert names == ["ToolUpdated"]  # the tool, never the request nor NeedsInput
    assert [(d.decision, d.decided_by) for d in decisions(engine)] == [
        ("allow_once", "mode:AutoApprove")
    ]


def test_auto_decisions_are_shown_as_an_opened_closed_pair_when_asked_for() -> None:
    engine = running(mode=PermissionMode.AUTO_APPROVE, show_auto=True)
    engine.on_driver_event(RequestAsked(request=permission()))
    produced = [e for e in events(engine) if isinstance(e.kind, RequestOpened | RequestClosed)]
    assert [type(e.kind).__name__ for e in produced] == ["RequestOpened", "RequestClosed"]
    assert all(
        e.extensions["corral/decision"]["decided_by"] == "mode:AutoApprove" for e in produced
    )


def test_auto_approve_forwards_a_request_that_does_not_offer_allow_once() -> None:
    engine = running(mode=PermissionMode.AUTO_APPROVE)
    only_always = (PermissionChoice.ALLOW_ALWAYS, PermissionChoice.DENY_ONCE)
    engine.on_driver_event(RequestAsked(request=permission(options=only_always)))
    assert "RequestOpened" in kinds(events(engine))
    assert not sent(engine)


def test_questions_are_never_auto_answered() -> None:
    engine = running(mode=PermissionMode.AUTO_APPROVE)
    engine.on_driver_event(RequestAsked(request=question()))
    assert "RequestOpened" in kinds(events(engine))


def test_accept_edits_allows_edits_and_forwards_everything_else() -> None:
    engine = running(mode=PermissionMode.ACCEPT_EDITS)
    engine.on_driver_event(RequestAsked(request=permission("e", tool_id="e", kind=ToolKind.EDIT)))
    engine.on_driver_event(RequestAsked(request=permission("x", tool_id="x")))
    assert sent(engine) == [Respond(request_id="e", answer=ALLOW)]
    opened = [e.kind.request.id for e in events(engine) if isinstance(e.kind, RequestOpened)]
    assert opened == ["x"]


def test_every_request_ends_with_exactly_one_decision_record() -> None:
    engine = running()
    engine.on_driver_event(RequestAsked(request=permission("r1", tool_id="a")))
    engine.on_driver_event(RequestAsked(request=permission("r2", tool_id="b")))
    engine.answer("r1", ALLOW)
    engine.close()
    records = [d for d in engine.outbox if isinstance(d, Decision)]
    assert sorted((d.request_id, d.decided_by) for d in records) == [
        ("r1", "app"),
        ("r2", "shutdown"),
    ]


def test_a_request_arriving_while_a_cancel_is_in_flight_is_withdrawn_at_once() -> None:
    engine = running()
    engine.cancel()
    sent(engine)
    events(engine)
    engine.on_driver_event(RequestAsked(request=permission()))
    assert sent(engine) == [Withdraw("r1")]
    assert "RequestOpened" not in kinds(events(engine))
    assert [(d.request_id, d.decided_by) for d in decisions(engine)] == [("r1", "cancel")]
    assert engine.info().status.value == "Working"
