"""The typed values between a driver, the engine and the sinks.

A driver names the error a dead wire becomes with an `ErrorKind`, so a
misspelt kind fails where it is written, not later inside the engine; the
records a session leaves (`Decision`, `Closed`) carry enums whose values are
the words the wire and the transcript have always used.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest
from corral.pipeline import extensions
from corral.pipeline.driver import Emitted, ProblemKind, TokenCount, WireFailed
from corral.pipeline.errors import ErrorKind
from corral.pipeline.events import (
    ContextUsage,
    Diagnostic,
    DiagnosticLevel,
    PermissionAnswer,
    PermissionChoice,
    QuestionsAnswer,
    RequestClosed,
    SystemTime,
)
from corral.pipeline.events import Event as AppEvent
from corral.pipeline.extensions import (
    decision_mark,
    marked_decision,
    reported_model,
    reported_tokens,
    wire_extensions,
)
from corral.pipeline.policy import decision_name
from corral.pipeline.records import Closed, CloseReason, Decider, Decision, Outcome


def test_a_wire_failure_names_an_error_kind_and_a_typo_fails_where_it_is_made() -> None:
    failed = WireFailed(kind=ErrorKind.AUTH_REQUIRED, message="the login expired")
    assert failed.kind is ErrorKind.AUTH_REQUIRED
    with pytest.raises(TypeError):
        WireFailed(kind="AuthRequred", message="a typo")  # type: ignore[arg-type]


def test_decisions_are_enums_whose_wire_words_did_not_change() -> None:
    decision = Decision(
        session_id="s1",
        request_id="r1",
        decision=decision_name(PermissionAnswer(PermissionChoice.DENY_ALWAYS)),
        decided_by=Decider.TURN_END,
        at=SystemTime(1, 0),
    )
    assert decision.decision is Outcome.DENY_ALWAYS
    wire = decision.to_wire()
    assert wire["decision"] == "deny_always" and type(wire["decision"]) is str
    assert wire["decided_by"] == "turn_end" and type(wire["decided_by"]) is str
    assert decision_name(QuestionsAnswer(())) is Outcome.ANSWERED


def test_a_closed_record_says_why_with_an_enum() -> None:
    closed = Closed(session_id="s1", reason=CloseReason.SHUTDOWN, at=SystemTime(1, 0))
    assert closed.reason == "shutdown" and {r.value for r in CloseReason} == {
        "closed",
        "exited",
        "failed",
        "shutdown",
    }


def test_token_counts_add_up_by_kind_and_keep_what_was_not_said_unsaid() -> None:
    first = TokenCount.from_counts({"input": 10, "output": 2, "other": 5, "reasoning": True})
    assert first == TokenCount(input=10, output=2)  # unknown names and non-ints left out
    total = first + TokenCount(input=5, reasoning=7)
    assert total.counts() == {"input": 15, "output": 2, "reasoning": 7}
    assert TokenCount().counts() == {}


def test_the_engine_writes_the_typed_fields_as_the_corral_keys_the_app_reads() -> None:
    usage = Emitted(
        kind=ContextUsage(used_tokens=5),
        tokens=TokenCount(output=3, input=4),
        model="m1",
        extensions={"x/raw": 1},
    )
    assert wire_extensions(usage, None) == {
        "corral/tokens": {"input": 4, "output": 3},
        "corral/model": "m1",
        "x/raw": 1,
    }
    note = Diagnostic(level=DiagnosticLevel.WARNING, message="?")
    problem = Emitted(kind=note, problem=ProblemKind.OVERSIZED, unknown_frame="a/b")
    assert wire_extensions(problem, {"corral/late": True}) == {
        "corral/decode_error": "oversized",
        "corral/late": True,
        "corral/unknown_frame": "a/b",
    }
    assert wire_extensions(None, None) == {}


def test_the_sinks_read_back_what_the_engine_wrote_and_nothing_malformed() -> None:
    said = Emitted(kind=ContextUsage(used_tokens=5), tokens=TokenCount(input=4), model="m1")
    event = _event(ContextUsage(used_tokens=5), wire_extensions(said, None))
    assert reported_tokens(event) == TokenCount(input=4)
    assert reported_model(event) == "m1"
    assert marked_decision(event) is None
    # read back from a file written by anything: wrong shapes are not numbers
    odd = _event(
        ContextUsage(used_tokens=5),
        {"corral/tokens": {"input": "4", "output": True, "reasoning": 2}, "corral/model": ""},
    )
    assert reported_tokens(odd) == TokenCount(reasoning=2)
    assert reported_model(odd) is None
    assert reported_tokens(_event(ContextUsage(used_tokens=5), {"corral/tokens": [4]})) is None
    decided = _event(RequestClosed("r1"), decision_mark({"decided_by": "app"}))
    assert marked_decision(decided) == {"decided_by": "app"}


def test_no_sink_or_actor_spells_a_corral_key_itself() -> None:
    """The `corral/*` keys are written and read in `pipeline/extensions.py` only."""
    root = Path(extensions.__file__).resolve().parent.parent
    keys = {
        f"corral/{key}" for key in ("tokens", "model", "decision", "unknown_frame", "decode_error")
    }
    spelled = [
        f"{path.relative_to(root)}:{node.lineno}"
        for folder in ("actors", "sinks", "pipeline")
        for path in sorted((root / folder).rglob("*.py"))
        if path.name != "extensions.py"
        for node in ast.walk(ast.parse(path.read_text()))
        if isinstance(node, ast.Constant) and node.value in keys
    ]
    assert spelled == []


def _event(kind: object, extensions: dict[str, object]) -> AppEvent:
    return AppEvent(
        sequence=1,
        session_id="s1",
        kind=kind,  # type: ignore[arg-type]
        occurred_at=SystemTime(0, 0),
        extensions=extensions,
    )
