"""The ACP normalizer, sans-IO: updates, tools, requests, settings, files."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest
from corral.pipeline.driver import (
    ConfigApplied,
    DriverEvent,
    Emitted,
    InfoChanged,
    RequestAsked,
    TurnFinished,
)
from corral.pipeline.events import (
    Cancelled,
    CommandInput,
    Completed,
    ContextUsage,
    Diagnostic,
    DiagnosticLevel,
    Failed,
    PathInput,
    PermissionAnswer,
    PermissionChoice,
    ReasoningDelta,
    Refused,
    SlashCommand,
    TextDelta,
    ToolKind,
    ToolStatus,
    ToolUpdated,
    UserMessage,
)
from corral.sources.acp import Translator
from corral.sources.acp._asks import Reply, ReplyError, WriteFile
from corral.sources.acp._driver import prompt_blocks
from corral.sources.acp._fs import (
    FsRefused,
    confine,
    judge_read,
    judge_write,
    read_text,
    write_text,
)
from corral.sources.acp._settings import Settings
from corral.sources.acp._translate import stop_reason

from tests.support.schema import check


def update(session_update: str, /, **fields: Any) -> list[DriverEvent]:
    return TRANSLATOR.update({"sessionUpdate": session_update, **fields})


TRANSLATOR = Translator()


@pytest.fixture(autouse=True)
def fresh() -> None:
    global TRANSLATOR
    TRANSLATOR = Translator()


def kinds_of(events: list[DriverEvent]) -> list[object]:
    out = []
    for event in events:
        assert isinstance(event, Emitted)
        check("line-protocol.schema.json", "EventKind", event.kind.to_wire())
        out.append(event.kind)
    return out


def chunk(kind: str, text: str, **extra: Any) -> list[DriverEvent]:
    return update(kind, content={"type": "text", "text": text}, **extra)


def test_chunks_without_message_ids_get_one_per_run_of_the_same_stream() -> None:
    events = (
        chunk("agent_thought_chunk", "hm")
        + chunk("agent_message_chunk", "a")
        + chunk("agent_message_chunk", "b")
        + update("tool_call", toolCallId="t", title="ls", kind="execute")
        + chunk("agent_message_chunk", "c")
    )
    ids = [(type(k).__name__, getattr(k, "message_id", None)) for k in kinds_of(events)]
    assert ids[0][0] == "ReasoningDelta"
    assert ids[1][1] == ids[2][1] != ids[4][1]
    assert ids[0][1] != ids[1][1]


def test_a_given_message_id_is_kept_and_user_chunks_are_user_messages() -> None:
    [text] = kinds_of(chunk("agent_message_chunk", "x", messageId="m-9"))
    [user] = kinds_of(chunk("user_message_chunk", "q", messageId="m-9"))
    assert text == TextDelta(message_id="m-9", text="x")
    assert isinstance(user, UserMessage) and user.message_id != "m-9"
    [thought] = kinds_of(chunk("agent_thought_chunk", "t"))
    assert isinstance(thought, ReasoningDelta)


def test_a_non_text_block_is_an_info_diagnostic_with_the_raw_update() -> None:
    [event] = update("agent_message_chunk", content={"type": "image", "data": "", "mimeType": "x"})
    assert isinstance(event, Emitted) and isinstance(event.kind, Diagnostic)
    assert event.extensions["acp/raw_frame"]["content"]["type"] == "image"


def test_tool_updates_merge_into_cumulative_snapshots() -> None:
    update(
        "tool_call",
        toolCallId="t1",
        title="Edit a",
        kind="edit",
        status="pending",
        locations=[{"path": "/w/a", "line": 2}],
        rawInput={"path": "/w/a"},
    )
    [tool] = kinds_of(
        update(
            "tool_call_update",
            toolCallId="t1",
            status="completed",
            content=[
                {"type": "diff", "path": "/w/a", "oldText": "o", "newText": "n"},
                {"type": "content", "content": {"type": "text", "text": "done"}},
            ],
        )
    )
    assert isinstance(tool, ToolUpdated)
    snap = tool.tool
    assert (snap.kind, snap.status, snap.title) == (ToolKind.EDIT, ToolStatus.COMPLETED, "Edit a")
    assert snap.locations == ("/w/a:2",) and snap.input == PathInput("/w/a")
    assert snap.output == "done" and snap.diffs[0].old_text == "o"


@pytest.mark.parametrize(
    ("raw_input", "title", "expected"),
    [
        ({"command": ["ls", "-l"], "cwd": "/w"}, "x", CommandInput(command="ls -l", cwd="/w")),
        (None, "touch x", CommandInput(command="touch x")),  # Gemini: the title is the command
    ],
)
def test_execute_inputs(raw_input: object, title: str, expected: object) -> None:
    fields = {"toolCallId": "t", "title": title, "kind": "execute", "rawInput": raw_input}
    [tool] = kinds_of(update("tool_call", **fields))
    assert isinstance(tool, ToolUpdated) and tool.tool.input == expected


def permission(**extra: Any) -> RequestAsked:
    params = {
        "sessionId": "s",
        "toolCall": {"toolCallId": "t1", "title": "rm x", "kind": "execute"},
        "options": [
            {"optionId": "a1", "name": "Allow", "kind": "allow_once"},
            {"optionId": "a2", "name": "Allow too", "kind": "allow_once"},
            {"optionId": "r1", "name": "Reject", "kind": "reject_once"},
        ],
        **extra,
    }
    [asked] = TRANSLATOR.asks.permission(7, params)
    assert isinstance(asked, RequestAsked)
    return asked


def test_permission_options_map_by_kind_first_of_each_wins() -> None:
    asked = permission()
    assert asked.request.options == (PermissionChoice.ALLOW_ONCE, PermissionChoice.DENY_ONCE)
    answer = TRANSLATOR.asks.answer(asked.request.id, PermissionAnswer(PermissionChoice.ALLOW_ONCE))
    assert answer == Reply(7, {"outcome": {"outcome": "selected", "optionId": "a1"}})
    assert (
        TRANSLATOR.asks.answer(asked.request.id, PermissionAnswer(PermissionChoice.ALLOW_ONCE))
        is None
    )


def test_a_withdrawn_permission_is_cancelled_and_its_tool_ends_cancelled() -> None:
    asked = permission()
    assert TRANSLATOR.asks.withdraw(asked.request.id) == Reply(
        7, {"outcome": {"outcome": "cancelled"}}
    )
    events = TRANSLATOR.prompt_done({"stopReason": "end_turn"})
    tool = events[0]
    assert isinstance(tool, Emitted) and isinstance(tool.kind, ToolUpdated)
    assert tool.kind.tool.status is ToolStatus.CANCELLED
    assert events[-1] == TurnFinished(stop=Completed())


def test_a_write_is_an_edit_request_and_only_an_allow_writes() -> None:
    [asked] = TRANSLATOR.asks.write(3, path="/w/f", content="new", old_text="old")
    assert isinstance(asked, RequestAsked)
    assert (
        asked.request.tool.kind is ToolKind.EDIT and asked.request.tool.diffs[0].old_text == "old"
    )
    denied = TRANSLATOR.asks.answer(asked.request.id, PermissionAnswer(PermissionChoice.DENY_ONCE))
    assert isinstance(denied, ReplyError) and denied.tool is not None
    [again] = TRANSLATOR.asks.write(4, path="/w/f", content="new", old_text=None)
    assert isinstance(again, RequestAsked)
    allowed = TRANSLATOR.asks.answer(
        again.request.id, PermissionAnswer(PermissionChoice.ALLOW_ONCE)
    )
    assert isinstance(allowed, WriteFile) and allowed.content == "new"


@pytest.mark.parametrize(
    ("raw", "stop"),
    [
        ("end_turn", Completed()),
        ("cancelled", Cancelled()),
        ("refusal", Refused()),
        ("max_tokens", Failed("the agent stopped: max_tokens (the model's output limit)")),
        (
            "max_turn_requests",
            Failed("the agent stopped: max_turn_requests (too many model requests)"),
        ),
        ("weird", Failed("the agent stopped with an unknown stop reason 'weird'")),
    ],
)
def test_stop_reasons(raw: str, stop: object) -> None:
    assert stop_reason(raw) == stop


def test_a_cancelled_turn_shows_unfinished_tools_cancelled() -> None:
    update("tool_call", toolCallId="t1", title="sleep", kind="execute", status="in_progress")
    events = TRANSLATOR.prompt_done({"stopReason": "cancelled"})
    [tool] = kinds_of(events[:-1])
    assert isinstance(tool, ToolUpdated) and tool.tool.status is ToolStatus.CANCELLED


def test_usage_updates_and_turn_usage() -> None:
    [usage] = kinds_of(
        update("usage_update", used=10, size=100, cost={"amount": 0.5, "currency": "USD"})
    )
    assert usage == ContextUsage(used_tokens=10, window_tokens=100, cost_usd=0.5)
    events = TRANSLATOR.prompt_done(
        {"stopReason": "end_turn", "usage": {"totalTokens": 9, "inputTokens": 7, "outputTokens": 2}}
    )
    turn_usage = events[0]
    assert isinstance(turn_usage, Emitted)
    assert turn_usage.kind == ContextUsage(used_tokens=10, window_tokens=100)
    assert turn_usage.tokens.counts() == {"input": 7, "output": 2}


def test_gemini_meta_quota_is_turn_usage_with_the_model() -> None:
    meta = {
        "quota": {
            "token_count": {"input_tokens": 5, "output_tokens": 1},
            "model_usage": [{"model": "g"}],
        }
    }
    usage = TRANSLATOR.prompt_done({"stopReason": "end_turn", "_meta": meta})[0]
    assert isinstance(usage, Emitted) and usage.model == "g"


def test_commands_title_and_unknown_updates() -> None:
    [commands] = update(
        "available_commands_update",
        availableCommands=[{"name": "plan", "description": "Plan", "input": {"hint": "what"}}],
    )
    assert commands == InfoChanged(
        commands=(SlashCommand(name="plan", description="Plan", input_hint="what"),)
    )
    assert update("session_info_update", title="T") == [InfoChanged(title="T")]
    [unknown] = update("brand_new", x=1)
    assert isinstance(unknown, Emitted) and isinstance(unknown.kind, Diagnostic)
    assert unknown.kind.level is DiagnosticLevel.INFO
    assert unknown.unknown_frame == "update:brand_new"


SESSION = {
    "modes": {
        "currentModeId": "ask",
        "availableModes": [{"id": "ask", "name": "Ask"}, {"id": "code", "name": "Code"}],
    },
    "configOptions": [
        {"id": "fast", "name": "Fast", "type": "boolean", "currentValue": False},
        {
            "id": "model",
            "name": "Model",
            "type": "select",
            "currentValue": "a",
            "options": [
                {
                    "group": "g",
                    "name": "G",
                    "options": [{"value": "a", "name": "A"}, {"value": "b", "name": "B"}],
                }
            ],
        },
    ],
}


def test_modes_and_config_options_become_options() -> None:
    settings = Settings.from_session(SESSION)
    assert [o.id for o in settings.config_options()] == ["mode", "fast", "model"]
    assert dict(settings.current()) == {"mode": "ask", "fast": False, "model": "a"}
    assert settings.set_call("s", "mode", "code") == (
        "session/set_mode",
        {"sessionId": "s", "modeId": "code"},
    )
    method, params = settings.set_call("s", "fast", True)
    assert method == "session/set_config_option" and params == {
        "sessionId": "s",
        "configId": "fast",
        "value": True,
        "type": "boolean",
    }


def test_a_config_option_that_is_the_mode_replaces_the_legacy_modes() -> None:
    raw = {
        **SESSION,
        "configOptions": [
            {
                "id": "m",
                "name": "M",
                "type": "select",
                "category": "mode",
                "currentValue": "x",
                "options": [{"value": "x", "name": "X"}],
            }
        ],
    }
    assert [o.id for o in Settings.from_session(raw).config_options()] == ["m"]


def test_agent_side_changes_report_each_changed_value() -> None:
    settings = Settings.from_session(SESSION)
    assert settings.mode_changed("code") == [ConfigApplied(option="mode", value="code")]
    assert settings.mode_changed("code") == []
    changed = [{**SESSION["configOptions"][0], "currentValue": True}, SESSION["configOptions"][1]]  # type: ignore[index]
    events = settings.replaced(changed)
    assert isinstance(events[0], InfoChanged)
    assert events[1:] == [ConfigApplied(option="fast", value=True)]


def test_files_are_confined_to_the_session_dir(tmp_path: Path) -> None:
    outside = tmp_path.parent / f"{tmp_path.name}-outside"
    outside.mkdir()
    os.symlink(outside, tmp_path / "link")
    with pytest.raises(FsRefused, match="symbolic link"):
        judge_read(str(tmp_path), str(tmp_path / "link" / "f"))
    with pytest.raises(FsRefused, match="outside the session directory"):
        confine(str(tmp_path), "../x")
    assert confine(str(tmp_path), "sub/../sub/f") == str(tmp_path / "sub" / "f")


def test_reads_take_line_and_limit_and_writes_make_folders(tmp_path: Path) -> None:
    root = str(tmp_path)
    write_text(root, judge_write(root, "d/f.txt"), "one\ntwo\nthree\n")
    assert read_text(root, judge_read(root, "d/f.txt"), line=2, limit=1) == "two\n"
    whole = judge_read(root, str(tmp_path / "d" / "f.txt"))
    assert read_text(root, whole) == "one\ntwo\nthree\n"
    with pytest.raises(FsRefused) as missing:
        judge_read(root, "nope.txt")
    assert missing.value.code == -32002


def test_prompt_blocks_link_attachments() -> None:
    blocks = prompt_blocks("hi", ["a/b.py", "https://x/y"], "/w")
    assert blocks == [
        {"type": "text", "text": "hi"},
        {"type": "resource_link", "uri": "file:///w/a/b.py", "name": "b.py"},
        {"type": "resource_link", "uri": "https://x/y", "name": "y"},
    ]
