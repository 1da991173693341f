"""Rollback and effort on the sans-IO protocol: what goes on the wire, when.

A turn here is the frames the CLI sends for one prompt: the prompt replayed
(its uuid is the one corral minted), an `assistant` chain entry, the
`result`. A rollback drops the last turns: with files, `rewind_files` to
the first dropped prompt; then a fork at the last kept chain entry.
"""

from __future__ import annotations

import itertools
from typing import Any

import orjson
from corral.pipeline.commands import RollbackScope
from corral.pipeline.driver import (
    ConfigApplied,
    Configure,
    DriverEvent,
    InfoChanged,
    Interrupt,
    Rollback,
    RollbackVerdict,
    StartTurn,
)
from corral.sources.claude import ClaudeProtocol
from corral.sources.claude._rollback import ForkPoint

from tests.unit.claude.support import check_produced


def protocol_with(turns: int, *, fresh: bool = True) -> ClaudeProtocol:
    minted = (f"prompt-{n}" for n in itertools.count(1))
    protocol = ClaudeProtocol(new_id=lambda: next(minted), fresh=fresh)
    protocol.initialized = {}
    for _ in range(turns):
        run_turn(protocol)
    return protocol


def take(protocol: ClaudeProtocol, *frames: dict[str, Any]) -> list[DriverEvent]:
    produced: list[DriverEvent] = []
    for frame in frames:
        produced.extend(protocol.feed(orjson.dumps(frame) + b"\n"))
    check_produced(produced)
    return produced


def run_turn(protocol: ClaudeProtocol, *, subagent: bool = False) -> str:
    protocol.send(StartTurn(turn_id="t", prompt_id="p", text="hi"))
    prompt = protocol.current_uuid()
    assert prompt is not None
    message = {"id": f"m-{prompt}", "role": "assistant", "content": []}
    frames: list[dict[str, Any]] = [
        {"type": "user", "isReplay": True, "uuid": prompt, "message": {"role": "user"}},
        {"type": "assistant", "uuid": f"entry-{prompt}", "message": message},
    ]
    if subagent:  # a subagent's messages are on its own chain, not the conversation's
        frames.append({**frames[1], "uuid": "side", "parent_tool_use_id": "task-1"})
    frames.append({"type": "result", "subtype": "success", "is_error": False})
    take(protocol, *frames)
    return prompt


def decoded(data: bytes) -> dict[str, Any]:
    frame = orjson.loads(data)
    assert isinstance(frame, dict)
    return frame


def test_conversation_rollback_forks_at_the_last_kept_entry_without_wire_bytes() -> None:
    protocol = protocol_with(3)
    data, events = protocol.send(Rollback(turns=1, scope=RollbackScope.CONVERSATION))
    assert (data, events) == (b"", [])
    assert protocol.fork == ForkPoint(prompt="prompt-3", at="entry-prompt-2", turns=1)


def test_forked_accepts_the_rollback_with_the_new_resume_token() -> None:
    protocol = protocol_with(3)
    protocol.send(Rollback(turns=2, scope=RollbackScope.CONVERSATION))
    point = protocol.fork
    assert point == ForkPoint(prompt="prompt-2", at="entry-prompt-1", turns=2)
    events = protocol.forked(point, "new-session")
    assert events == [RollbackVerdict(accepted=True), InfoChanged(resume_token="new-session")]
    assert protocol.fork is None and protocol.resume_token == "new-session"
    run_turn(protocol)  # prompt-4, on the fork
    protocol.send(Rollback(turns=1, scope=RollbackScope.CONVERSATION))
    assert protocol.fork == ForkPoint(prompt="prompt-4", at="entry-prompt-1", turns=1)


def test_files_scope_rewinds_to_the_first_dropped_prompt_then_forks() -> None:
    protocol = protocol_with(2)
    data, events = protocol.send(Rollback(turns=1, scope=RollbackScope.CONVERSATION_AND_FILES))
    assert events == [] and protocol.fork is None
    request = decoded(data)
    assert request["request"] == {"subtype": "rewind_files", "user_message_id": "prompt-2"}
    answer = {"subtype": "success", "request_id": request["request_id"]}
    answer["response"] = {"canRewind": True, "filesChanged": ["/w/a.txt"]}
    assert take(protocol, {"type": "control_response", "response": answer}) == []
    assert protocol.fork == ForkPoint(prompt="prompt-2", at="entry-prompt-1", turns=1)


def test_a_refused_rewind_refuses_the_rollback_with_the_cli_reason() -> None:
    protocol = protocol_with(1)
    data, _ = protocol.send(Rollback(turns=1, scope=RollbackScope.CONVERSATION_AND_FILES))
    request_id = decoded(data)["request_id"]
    answer = {"subtype": "error", "request_id": request_id, "error": "not enabled"}
    (verdict,) = take(protocol, {"type": "control_response", "response": answer})
    assert isinstance(verdict, RollbackVerdict) and not verdict.accepted
    assert verdict.reason is not None and "not enabled" in verdict.reason
    assert protocol.fork is None


def test_a_rewind_that_cannot_rewind_refuses_too() -> None:
    protocol = protocol_with(1)
    data, _ = protocol.send(Rollback(turns=1, scope=RollbackScope.CONVERSATION_AND_FILES))
    answer = {"subtype": "success", "request_id": decoded(data)["request_id"]}
    answer["response"] = {"canRewind": False, "error": "No file checkpoint found"}
    (verdict,) = take(protocol, {"type": "control_response", "response": answer})
    assert verdict == RollbackVerdict(
        accepted=False, reason="Claude Code cannot rewind the files: No file checkpoint found"
    )


def test_the_cli_exiting_during_the_rewind_refuses_the_rollback() -> None:
    protocol = protocol_with(1)
    protocol.send(Rollback(turns=1, scope=RollbackScope.CONVERSATION_AND_FILES))
    assert RollbackVerdict(accepted=False, reason="Claude Code exited") in protocol.process_lost()


def test_dropping_every_turn_of_a_fresh_session_starts_afresh() -> None:
    protocol = protocol_with(2)
    protocol.send(Rollback(turns=2, scope=RollbackScope.CONVERSATION))
    assert protocol.fork == ForkPoint(prompt="prompt-1", at=None, turns=2)


def test_a_resumed_session_cannot_drop_turns_it_did_not_see() -> None:
    protocol = protocol_with(1, fresh=False)
    _, events = protocol.send(Rollback(turns=1, scope=RollbackScope.CONVERSATION))
    assert isinstance(events[0], RollbackVerdict) and not events[0].accepted
    assert protocol.fork is None


def test_more_turns_than_ran_or_none_are_refused() -> None:
    protocol = protocol_with(2)
    for turns in (0, 3):
        _, events = protocol.send(Rollback(turns=turns, scope=RollbackScope.CONVERSATION))
        (verdict,) = events
        assert isinstance(verdict, RollbackVerdict) and not verdict.accepted
        assert verdict.reason is not None and "1 to 2 turns" in verdict.reason


def test_subagent_messages_and_unstarted_prompts_are_not_turns_of_the_chain() -> None:
    protocol = protocol_with(1)
    run_turn(protocol, subagent=True)
    protocol.send(StartTurn(turn_id="t", prompt_id="p", text="never runs"))
    protocol.send(Interrupt("t"))
    take(protocol, {"type": "command_lifecycle", "command_uuid": "prompt-3", "state": "cancelled"})
    protocol.send(Rollback(turns=1, scope=RollbackScope.CONVERSATION))
    assert protocol.fork == ForkPoint(prompt="prompt-2", at="entry-prompt-1", turns=1)


def test_a_rollback_while_a_turn_runs_is_refused() -> None:
    protocol = protocol_with(1)
    protocol.send(StartTurn(turn_id="t", prompt_id="p", text="busy"))
    _, events = protocol.send(Rollback(turns=1, scope=RollbackScope.CONVERSATION))
    assert isinstance(events[0], RollbackVerdict) and not events[0].accepted


def test_effort_is_set_live_with_apply_flag_settings() -> None:
    protocol = protocol_with(0)
    data, events = protocol.send(Configure(option="effort", value="high"))
    request = decoded(data)
    assert events == []
    assert request["request"] == {
        "subtype": "apply_flag_settings",
        "settings": {"effortLevel": "high"},
    }
    answer = {"subtype": "success", "request_id": request["request_id"]}
    applied = take(protocol, {"type": "control_response", "response": answer})
    assert applied == [ConfigApplied(option="effort", value="high")]
    assert protocol.effort == "high"


def test_effort_default_clears_the_override_with_null() -> None:
    protocol = protocol_with(0)
    data, _ = protocol.send(Configure(option="effort", value="default"))
    assert decoded(data)["request"]["settings"] == {"effortLevel": None}
