"""Rollout files and EventMsg frames, behaviour by behaviour."""

from __future__ import annotations

import base64
import json
from pathlib import Path
from typing import Any

from corral.pipeline.driver import Emitted, InfoChanged, PromptSent, TurnBegan, TurnFinished
from corral.pipeline.events import (
    Completed,
    ContextUsage,
    Diagnostic,
    DiagnosticLevel,
    Failed,
    TextDelta,
    ToolOutputDelta,
    ToolUpdated,
    UserMessage,
)
from corral.sources.codex import EventMsgNormalizer, RolloutReader, read_native_transcript
from corral.sources.codex._eventmsg_tools import decode_chunk

from tests.unit.codex.golden import EVENTMSG, run_engine


def _line(payload: dict[str, Any], kind: str = "event_msg") -> bytes:
    entry = {"timestamp": "2026-01-02T03:04:05.250Z", "type": kind, "payload": payload}
    return json.dumps(entry).encode() + b"\n"


def _read(*lines: bytes) -> list[Any]:
    reader = RolloutReader()
    return [*reader.feed(b"".join(lines)), *reader.end()]


START = _line({"type": "task_started", "turn_id": "t1"})
DONE = _line({"type": "task_complete", "turn_id": "t1"})


def _user_item(text: str, item_id: str = "u1") -> bytes:
    item = {"type": "UserMessage", "id": item_id, "content": [{"type": "text", "text": text}]}
    return _line({"type": "item_completed", "thread_id": "th", "turn_id": "t1", "item": item})


def test_the_prompt_comes_before_the_turn_it_began() -> None:
    items = _read(START, _user_item("hello"), DONE)
    assert items == [
        PromptSent(text="hello", at_ns=1_767_323_045_250_000_000),
        TurnBegan(),
        TurnFinished(stop=items[2].stop),
    ]


def test_a_task_complete_with_an_error_is_a_failed_turn() -> None:
    error = {
        "message": "Missing environment variable: `MOCK_API_KEY`.",
        "codex_error_info": "other",
    }
    failed = _line({"type": "task_complete", "turn_id": "t1", "error": error})
    *_, end = _read(START, failed)
    assert end == TurnFinished(stop=Failed("Missing environment variable: `MOCK_API_KEY`."))
    *_, end = _read(START, DONE)
    assert end == TurnFinished(stop=Completed())


def test_a_legacy_user_message_is_a_prompt_too() -> None:
    items = _read(START, _line({"type": "user_message", "message": "old style"}), DONE)
    assert isinstance(items[0], PromptSent) and items[0].text == "old style"


def test_the_legacy_copy_of_an_item_prompt_is_not_a_second_prompt() -> None:
    legacy = _line({"type": "user_message", "message": "hello"})
    items = _read(START, _user_item("hello"), legacy, DONE)
    assert sum(isinstance(i, PromptSent) for i in items) == 1


def test_a_second_user_message_in_a_turn_was_a_steer() -> None:
    items = _read(START, _user_item("first"), _user_item("more", "u2"), DONE)
    steer = items[2]
    assert isinstance(steer, Emitted) and steer.kind == UserMessage(
        message_id="steer-1", text="more"
    )
    assert steer.extensions == {"codex/steer": True}


def test_a_turn_without_a_prompt_begins_with_its_first_content() -> None:
    compaction = _line(
        {
            "type": "item_completed",
            "thread_id": "th",
            "turn_id": "t1",
            "item": {"type": "ContextCompaction", "id": "c"},
        }
    )
    usage = _line({"type": "token_count", "info": None, "rate_limits": None})
    items = _read(START, usage, compaction, DONE)
    assert items[0] == TurnBegan()
    assert isinstance(items[1], Emitted)


def test_bookkeeping_does_not_release_a_held_turn() -> None:
    info = {
        "total_token_usage": {
            "input_tokens": 5,
            "cached_input_tokens": 0,
            "output_tokens": 1,
            "reasoning_output_tokens": 0,
            "total_tokens": 6,
        },
        "last_token_usage": {
            "input_tokens": 5,
            "cached_input_tokens": 0,
            "output_tokens": 1,
            "reasoning_output_tokens": 0,
            "total_tokens": 6,
        },
    }
    usage = _line({"type": "token_count", "info": info})
    items = _read(START, usage, _user_item("hi"), DONE)
    assert isinstance(items[0], Emitted) and isinstance(items[0].kind, ContextUsage)
    assert isinstance(items[1], PromptSent) and items[2] == TurnBegan()


def test_session_meta_gives_the_resume_token_and_other_lines_are_skipped() -> None:
    meta = _line({"id": "thread-9", "cwd": "/w"}, kind="session_meta")
    skipped = _line({"type": "message", "role": "user", "content": []}, kind="response_item")
    assert _read(meta, skipped) == [InfoChanged(resume_token="thread-9")]


def test_an_unknown_line_type_is_an_info_diagnostic() -> None:
    (item,) = _read(_line({"x": 1}, kind="hologram"))
    assert isinstance(item, Emitted) and item.unknown_frame == "rollout/hologram"


def test_a_turn_the_rollout_never_finished_still_begins() -> None:
    assert _read(START) == [TurnBegan()]


def test_a_torn_last_line_is_a_warning() -> None:
    (item,) = _read(b'{"timestamp": "2026')
    assert isinstance(item, Emitted) and isinstance(item.kind, Diagnostic)
    assert item.kind.level is DiagnosticLevel.WARNING


def test_read_native_transcript_reads_a_legacy_rollout_file(tmp_path: Path) -> None:
    frames = (EVENTMSG / "legacy_turn.jsonl").read_text().splitlines()
    path = tmp_path / "rollout-2025-01-01T00-00-00-x.jsonl"
    path.write_bytes(b"".join(_line(json.loads(frame)) for frame in frames))
    items = list(read_native_transcript(path))
    assert items[0] == InfoChanged(resume_token="thread-1", title="Fix the build")
    assert isinstance(items[1], PromptSent) and items[1].text == "run the tests"
    assert items[2] == TurnBegan()
    events = run_engine(items)
    texts = [e.kind.text for e in events if isinstance(e.kind, TextDelta)]
    assert "".join(texts) == "Running the tests."


# ---- EventMsg odds and ends ------------------------------------------------------


def test_unknown_and_untyped_event_msgs_are_info_diagnostics() -> None:
    normalizer = EventMsgNormalizer()
    (unknown,) = normalizer.feed({"type": "hologram", "x": 1})
    (untyped,) = normalizer.feed({"x": 1})
    assert isinstance(unknown, Emitted) and unknown.unknown_frame == "hologram"
    assert isinstance(untyped, Emitted) and untyped.unknown_frame == "(untyped)"


def test_an_event_msg_of_the_wrong_shape_is_a_warning() -> None:
    (event,) = EventMsgNormalizer().feed({"type": "exec_command_begin"})
    assert isinstance(event, Emitted) and event.problem == "bad_shape"


def test_output_chunks_are_always_base64_bytes() -> None:
    assert decode_chunk("aGkK") == "hi\n"
    assert decode_chunk("YWJjZA==") == "abcd"  # a command printing "abcd"
    # "abcd" on the wire is base64 too: the bytes 69 b7 1d, never the text "abcd".
    assert decode_chunk("abcd") == "i\ufffd\x1d"
    assert decode_chunk("/w==") == "\ufffd"


def test_an_output_chunk_that_is_not_base64_is_a_bad_shape() -> None:
    delta = {"type": "exec_command_output_delta", "call_id": "c1", "stream": "stdout"}
    (event,) = EventMsgNormalizer().feed({**delta, "chunk": "not base64!"})
    assert isinstance(event, Emitted) and event.problem == "bad_shape"
    assert isinstance(event.kind, Diagnostic) and "chunk: not base64" in event.kind.message


def test_item_events_silence_the_legacy_copies() -> None:
    normalizer = EventMsgNormalizer()
    normalizer.feed(
        {
            "type": "agent_message_content_delta",
            "thread_id": "t",
            "turn_id": "u",
            "item_id": "m",
            "delta": "a",
        }
    )
    assert normalizer.feed({"type": "agent_message_delta", "delta": "a"}) == []
    assert normalizer.feed({"type": "agent_message", "message": "a"}) == []
    assert normalizer.feed({"type": "user_message", "message": "hi"}) == []


def _chunk(call_id: str, raw: bytes) -> dict[str, object]:
    encoded = base64.b64encode(raw).decode()
    return {"type": "exec_command_output_delta", "call_id": call_id, "stream": "stdout",
            "chunk": encoded}  # fmt: skip


def _output_texts(events: list[object]) -> list[str]:
    return [
        e.kind.text
        for e in events
        if isinstance(e, Emitted) and isinstance(e.kind, ToolOutputDelta)
    ]


def test_a_character_cut_between_two_chunks_arrives_whole() -> None:
    normalizer = EventMsgNormalizer()
    begin = {"type": "exec_command_begin", "call_id": "c1", "command": ["printf", "café"]}
    events = normalizer.feed(begin)
    # "é" is c3 a9; each command's bytes are one stream, cut anywhere.
    events += normalizer.feed(_chunk("c1", b"caf\xc3"))
    events += normalizer.feed(_chunk("c2", b"\xa9 other command"))
    events += normalizer.feed(_chunk("c1", b"\xa9!\n"))
    assert _output_texts(events) == ["caf", "\ufffd other command", "é!\n"]


def test_a_command_ending_inside_a_character_shows_it_as_a_replacement() -> None:
    normalizer = EventMsgNormalizer()
    normalizer.feed({"type": "exec_command_begin", "call_id": "c1", "command": ["cat", "x"]})
    events = normalizer.feed(_chunk("c1", b"ok \xe2\x82"))
    events += normalizer.feed(
        {"type": "exec_command_end", "call_id": "c1", "command": ["cat", "x"], "exit_code": 0}
    )
    assert _output_texts(events) == ["ok ", "\ufffd"]
    assert isinstance(events[-1], Emitted) and isinstance(events[-1].kind, ToolUpdated)
