"""Golden wires recorded from the real Claude Code CLI, replayed sans-IO.

Each fixture (tests/fixtures/claude/*.jsonl, recorded by record.py there)
is fed to a fresh `ClaudeProtocol` whole, byte by byte, line by line and
with trailing garbage; the encoder must write exactly the recorded bytes;
every event must be valid on the line protocol; and each scenario's
meaning is checked by its own test. A fixture without a scenario test
fails `test_every_fixture_has_a_scenario_test`.
"""

from __future__ import annotations

import json
import uuid

import orjson
import pytest
from corral.pipeline.driver import (
    ConfigApplied,
    ConfigRefused,
    DriverEvent,
    Emitted,
    InfoChanged,
    RequestAsked,
    StartTurn,
    TurnBegan,
    TurnFinished,
    WireFailed,
)
from corral.pipeline.events import (
    Cancelled,
    Completed,
    ContextCompacted,
    ContextUsage,
    Diagnostic,
    DiagnosticLevel,
    Failed,
    MessageEnded,
    PermissionChoice,
    PermissionRequest,
    QuestionRequest,
    TextDelta,
    ToolKind,
    ToolStatus,
    ToolUpdated,
)
from corral.sources.claude import ClaudeProtocol

from tests.unit.claude.support import check_produced, fixture_names, load, replay

SCENARIOS = {
    "plain",
    "permission_allowed",
    "permission_always",
    "permission_denied",
    "write_file",
    "question",
    "cancel",
    "cancel_permission",
    "cancel_before_start",
    "configure",
    "compact",
    "auth_failure",
}
STOPS = {"Completed", "Cancelled", "Failed", "Refused"}
RESULT = {"type": "result", "subtype": "success", "is_error": False}


def kinds(produced: list[DriverEvent]) -> list[object]:
    return [e.kind if isinstance(e, Emitted) else e for e in produced]


def turn_marks(produced: list[DriverEvent]) -> list[str]:
    marks = []
    for event in produced:
        if isinstance(event, TurnBegan):
            marks.append("began")
        elif isinstance(event, TurnFinished):
            marks.append(type(event.stop).__name__)
    return marks


def text_of(produced: list[DriverEvent]) -> str:
    return "".join(k.text for k in kinds(produced) if isinstance(k, TextDelta))


def tools(produced: list[DriverEvent]) -> list[ToolUpdated]:
    return [k for k in kinds(produced) if isinstance(k, ToolUpdated)]


def requests(produced: list[DriverEvent]) -> list[RequestAsked]:
    return [e for e in produced if isinstance(e, RequestAsked)]


def written(name: str) -> list[dict[str, object]]:
    return [json.loads(r["out"]) for r in load(name) if "out" in r]


# ---- every fixture ---------------------------------------------------------------


def test_every_fixture_has_a_scenario_test() -> None:
    assert set(fixture_names()) == SCENARIOS


@pytest.mark.parametrize("name", sorted(SCENARIOS))
def test_fed_byte_by_byte_gives_the_same_events_as_whole(name: str) -> None:
    assert replay(name, "bytes").produced == replay(name, "whole").produced


@pytest.mark.parametrize("name", sorted(SCENARIOS))
def test_fed_line_by_line_gives_the_same_events_as_whole(name: str) -> None:
    assert replay(name, "lines").produced == replay(name, "whole").produced


@pytest.mark.parametrize("name", sorted(SCENARIOS))
def test_trailing_garbage_adds_one_decode_warning(name: str) -> None:
    clean = replay(name).produced
    dirty = replay(name, trailing=b"\x00not json at all").produced
    assert dirty[: len(clean)] == clean
    (extra,) = dirty[len(clean) :]
    assert isinstance(extra, Emitted)
    assert extra.problem == "not_json"
    assert isinstance(extra.kind, Diagnostic) and extra.kind.level is DiagnosticLevel.WARNING


@pytest.mark.parametrize("name", sorted(SCENARIOS))
def test_every_event_is_valid_on_the_line_protocol(name: str) -> None:
    check_produced(replay(name).produced)


@pytest.mark.parametrize("name", sorted(SCENARIOS))
def test_recorded_wire_has_no_unknown_frames(name: str) -> None:
    unknown = [
        e.unknown_frame
        for e in replay(name).produced
        if isinstance(e, Emitted) and e.unknown_frame is not None
    ]
    assert unknown == []


@pytest.mark.parametrize("name", sorted(SCENARIOS - {"auth_failure"}))
def test_every_turn_begins_once_and_ends_once(name: str) -> None:
    marks = turn_marks(replay(name).produced)
    assert len(marks) % 2 == 0
    assert marks[::2] == ["began"] * (len(marks) // 2)
    assert all(stop in STOPS for stop in marks[1::2])


# ---- one scenario each -------------------------------------------------------------


def test_plain_answer_streams_text_then_usage_then_completes() -> None:
    produced = replay("plain").produced
    assert turn_marks(produced) == ["began", "Completed"]
    assert text_of(produced) == "You said: CORRAL_ECHO hi"
    (usage,) = [e for e in produced if isinstance(e, Emitted) and isinstance(e.kind, ContextUsage)]
    assert isinstance(usage.kind, ContextUsage)
    assert usage.kind.used_tokens > 0 and usage.kind.window_tokens == 1_000_000
    assert usage.kind.cost_usd is not None and usage.kind.cost_usd > 0
    assert usage.model == "claude-opus-5-5"
    assert set(usage.tokens.counts()) >= {"input", "output", "cache_read"}
    ended = [k for k in kinds(produced) if isinstance(k, MessageEnded)]
    assert len(ended) == 1


def test_the_launch_session_id_is_the_token_so_init_changes_nothing() -> None:
    assert not any(isinstance(e, InfoChanged) for e in replay("plain").produced)


def test_every_prompt_is_sent_with_a_fresh_uuid() -> None:
    recorded = next(w for w in written("plain") if w["type"] == "user")
    protocol = ClaudeProtocol()  # the real uuid source, not the recording's
    protocol.initialized = {}
    prompts = []
    for turn in ("t1", "t2"):
        line, _ = protocol.send(StartTurn(turn_id=turn, prompt_id=turn, text="CORRAL_ECHO hi"))
        prompt = json.loads(line)
        assert prompt["message"] == recorded["message"]
        prompts.append(prompt["uuid"])
        protocol.feed(orjson.dumps(RESULT | {"user_message_uuids": [prompt["uuid"]]}) + b"\n")
    assert all(uuid.UUID(u).version == 4 for u in prompts)
    assert len({*prompts, recorded["uuid"]}) == 3


def test_allowed_permission_shows_the_tool_then_asks_then_completes_it() -> None:
    produced = replay("permission_allowed").produced
    running, done = tools(produced)
    assert running.tool.kind is ToolKind.EXECUTE and running.tool.status is ToolStatus.RUNNING
    assert running.tool.input.to_wire() == {
        "Command": {"command": "touch allowed.txt", "cwd": None}
    }
    (asked,) = requests(produced)
    assert isinstance(asked.request, PermissionRequest)
    assert asked.request.tool == running.tool
    assert asked.request.options == (
        PermissionChoice.ALLOW_ONCE,
        PermissionChoice.ALLOW_ALWAYS,
        PermissionChoice.DENY_ONCE,
    )
    assert done.tool.status is ToolStatus.COMPLETED and done.tool.id == running.tool.id
    assert turn_marks(produced) == ["began", "Completed"]
    reply = next(w for w in written("permission_allowed") if w["type"] == "control_response")
    assert reply["response"]["response"] == {  # type: ignore[index]
        "behavior": "allow",
        "updatedInput": {"command": "touch allowed.txt"},
    }


def test_allow_always_sends_the_cli_rules_but_never_a_mode_change() -> None:
    reply = next(w for w in written("permission_always") if w["type"] == "control_response")
    updates = reply["response"]["response"]["updatedPermissions"]  # type: ignore[index]
    assert updates and all(u["type"] in ("addRules", "addDirectories") for u in updates)
    assert turn_marks(replay("permission_always").produced) == ["began", "Completed"]


def test_denied_permission_sends_the_message_and_fails_the_tool() -> None:
    produced = replay("permission_denied").produced
    reply = next(w for w in written("permission_denied") if w["type"] == "control_response")
    assert reply["response"]["response"] == {"behavior": "deny", "message": "not today"}  # type: ignore[index]
    done = tools(produced)[-1]
    assert done.tool.status is ToolStatus.FAILED and done.tool.output == "not today"
    assert text_of(produced) == "Tool said: not today"
    assert turn_marks(produced) == ["began", "Completed"]


def test_write_is_an_edit_with_the_new_file_as_a_diff() -> None:
    produced = replay("write_file").produced
    running, done = tools(produced)
    assert running.tool.kind is ToolKind.EDIT
    assert running.tool.locations == ("/sandbox/work/hello.txt",)
    (diff,) = done.tool.diffs
    assert diff.path == "/sandbox/work/hello.txt"
    assert diff.old_text is None and diff.new_text == "hello world\n"


def test_ask_user_question_becomes_a_question_answered_with_labels() -> None:
    produced = replay("question").produced
    (asked,) = requests(produced)
    assert isinstance(asked.request, QuestionRequest)
    (question,) = asked.request.questions
    assert question.text == "Proceed?"
    assert [c.label for c in question.choices] == ["Yes", "No"]
    reply = next(w for w in written("question") if w["type"] == "control_response")
    payload = reply["response"]["response"]  # type: ignore[index]
    assert payload["behavior"] == "allow"
    assert payload["updatedInput"]["answers"] == {"Proceed?": "Yes"}
    assert '"Proceed?"="Yes"' in text_of(produced)
    assert turn_marks(produced) == ["began", "Completed"]


def test_interrupt_mid_stream_ends_the_turn_cancelled_and_the_next_runs() -> None:
    produced = replay("cancel").produced
    assert turn_marks(produced) == ["began", "Cancelled", "began", "Completed"]
    interrupt = next(
        w
        for w in written("cancel")
        if w["type"] == "control_request" and w["request"]["subtype"] == "interrupt"
    )  # type: ignore[index]
    assert interrupt["request"]["cancel_queued"] is True  # type: ignore[index]
    assert "slow 1/30." in text_of(produced)


def test_cancel_with_a_permission_open_withdraws_it_and_cancels() -> None:
    produced = replay("cancel_permission").produced
    reply = next(w for w in written("cancel_permission") if w["type"] == "control_response")
    assert reply["response"]["response"]["behavior"] == "deny"  # type: ignore[index]
    assert tools(produced)[-1].tool.status is ToolStatus.FAILED
    assert turn_marks(produced) == ["began", "Cancelled"]


def test_prompt_cancelled_before_it_started_still_begins_and_ends_cancelled() -> None:
    produced = replay("cancel_before_start").produced
    marks = turn_marks(produced)
    assert marks == ["began", "Cancelled", "began", "Completed"]
    first_end = produced.index(next(e for e in produced if isinstance(e, TurnFinished)))
    assert not any(isinstance(k, TextDelta) for k in kinds(produced[:first_end]))
    assert text_of(produced) == "You said: CORRAL_ECHO next"


def test_configure_applies_model_and_mode_and_relays_a_refusal() -> None:
    produced = replay("configure").produced
    verdicts = [e for e in produced if isinstance(e, ConfigApplied | ConfigRefused)]
    applied = [(v.option, v.value) for v in verdicts if isinstance(v, ConfigApplied)]
    assert applied == [("mode", "plan"), ("mode", "default"), ("model", "sonnet")]
    (refused,) = [v for v in verdicts if isinstance(v, ConfigRefused)]
    assert refused.option == "mode" and "must be one of" in refused.reason
    assert turn_marks(produced) == ["began", "Completed"]


def test_compact_is_a_turn_that_compacts_the_context() -> None:
    produced = replay("compact").produced
    assert turn_marks(produced) == ["began", "Completed", "began", "Completed"]
    second = produced[
        produced.index(next(e for e in produced if isinstance(e, TurnFinished))) + 1 :
    ]
    assert any(isinstance(k, ContextCompacted) for k in kinds(second))
    notes = [k for k in kinds(second) if isinstance(k, Diagnostic)]
    assert [n.message for n in notes] == ["Compacted"]
    compact = next(w for w in written("compact")[::-1] if w["type"] == "user")
    assert compact["message"]["content"][0]["text"] == "/compact"  # type: ignore[index]


def test_missing_login_fails_the_wire_as_auth_required() -> None:
    produced = replay("auth_failure").produced
    (failure,) = [e for e in produced if isinstance(e, WireFailed)]
    assert failure.kind == "AuthRequired"
    assert "Not logged in" in failure.message
    end = next(e for e in produced if isinstance(e, TurnFinished))
    assert isinstance(end.stop, Failed)  # subtype says success; is_error is the truth


def test_cancelled_turn_is_never_reported_completed() -> None:
    for name in ("cancel", "cancel_permission", "cancel_before_start"):
        first = next(e for e in replay(name).produced if isinstance(e, TurnFinished))
        assert isinstance(first.stop, Cancelled), name
        assert not isinstance(first.stop, Completed)
