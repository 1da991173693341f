"""The `terminal` capability's sans-IO pieces: commands, output, grants, replay.

`_terminal.py` reads a `terminal/create` into a `CommandSpec` and keeps a
command's output in a bounded `OutputBuffer`; `Asks.command` judges a
command (a grant left by an allowed permission, else an Execute request);
`AcpReplay` judges a recorded `terminal/create` the same way and runs
nothing. No process is started here (`tests/integration/test_acp_terminal.py`
runs real ones).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import orjson
import pytest
from corral.pipeline.driver import RequestAsked
from corral.pipeline.events import (
    CommandInput,
    PermissionAnswer,
    PermissionChoice,
    ToolKind,
    ToolStatus,
)
from corral.sources.acp import AcpReplay, Translator
from corral.sources.acp._asks import ReplyError, RunCommand
from corral.sources.acp._fs import FsRefused
from corral.sources.acp._terminal import (
    DEFAULT_OUTPUT_BYTES,
    MAX_OUTPUT_BYTES,
    CommandSpec,
    OutputBuffer,
    command_spec,
    exit_fields,
)

# ---- OutputBuffer ----------------------------------------------------------------------

TEXT = ("aé€😀" * 40).encode()  # 1-, 2-, 3- and 4-byte characters


@pytest.mark.parametrize("chunk", [1, 2, 3, 5, 7, 64, len(TEXT)])
@pytest.mark.parametrize("limit", [0, 1, 4, 9, 50, 1000])
def test_the_buffer_keeps_a_bounded_tail_that_starts_at_a_character(chunk: int, limit: int) -> None:
    buffer = OutputBuffer(limit)
    for start in range(0, len(TEXT), chunk):
        buffer.feed(TEXT[start : start + chunk])
        assert len(buffer) <= limit
        # What was fed is valid UTF-8 but for a character still being written at its end.
        complete = TEXT[: start + chunk].decode("utf-8", errors="ignore")
        shown = buffer.text()
        assert "\N{REPLACEMENT CHARACTER}" not in shown and complete.endswith(shown)
    assert buffer.text(final=True) == buffer.text()  # the whole text was fed
    assert buffer.truncated is (len(TEXT) > limit)
    assert len(buffer) >= min(limit, len(TEXT)) - 3  # at most a cut character is dropped


def test_output_under_the_limit_is_kept_whole_and_not_truncated() -> None:
    buffer = OutputBuffer(100)
    buffer.feed(b"hello ")
    buffer.feed(b"world\n")
    assert (buffer.text(), buffer.truncated) == ("hello world\n", False)


def test_a_character_still_being_written_is_held_back_until_the_end() -> None:
    buffer = OutputBuffer(100)
    buffer.feed("ok €".encode()[:-1])  # the euro sign's last byte is still to come
    assert buffer.text() == "ok "
    assert buffer.text(final=True) == "ok \N{REPLACEMENT CHARACTER}"
    buffer.feed("€".encode()[-1:])
    assert buffer.text() == "ok €"


def test_a_negative_limit_is_refused() -> None:
    with pytest.raises(ValueError, match="negative"):
        OutputBuffer(-1)


# ---- command_spec ----------------------------------------------------------------------


def test_a_command_alone_is_the_shell_line_run_in_the_session_dir(tmp_path: Path) -> None:
    spec = command_spec({"command": "ls -la | wc -l"}, str(tmp_path))
    assert spec == CommandSpec(line="ls -la | wc -l", cwd=os.path.realpath(tmp_path))
    assert spec.argv() == ["/bin/sh", "-c", "ls -la | wc -l"]
    assert spec.output_limit == DEFAULT_OUTPUT_BYTES


def test_args_are_quoted_into_the_line_and_env_and_limit_are_read(tmp_path: Path) -> None:
    params = {
        "command": "printf",
        "args": ["%s", "a b; $(rm -rf ~)"],
        "env": [{"name": "FOO", "value": "bar"}],
        "outputByteLimit": 10,
    }
    spec = command_spec(params, str(tmp_path))
    assert spec.line == "printf %s 'a b; $(rm -rf ~)'"
    assert (spec.env, spec.output_limit) == ((("FOO", "bar"),), 10)


def test_an_unbounded_output_limit_is_capped() -> None:
    spec = command_spec({"command": "yes", "outputByteLimit": 10**12}, "/")
    assert spec.output_limit == MAX_OUTPUT_BYTES


def test_a_cwd_inside_the_session_dir_is_taken(tmp_path: Path) -> None:
    (tmp_path / "sub").mkdir()
    spec = command_spec({"command": "pwd", "cwd": str(tmp_path / "sub")}, str(tmp_path))
    assert spec.cwd == os.path.realpath(tmp_path / "sub")


BAD: list[tuple[dict[str, Any], str]] = [
    ({}, "non-empty string command"),
    ({"command": "  "}, "non-empty string command"),
    ({"command": 3}, "non-empty string command"),
    ({"command": "ls", "args": "-la"}, "args must be a list of strings"),
    ({"command": "ls", "args": [1]}, "args must be a list of strings"),
    ({"command": "echo \x00"}, "NUL byte"),
    ({"command": "ls", "cwd": "sub"}, "must be an absolute path"),
    ({"command": "ls", "cwd": "/"}, "outside the session directory"),
    ({"command": "ls", "env": {"A": "b"}}, "env must be a list"),
    ({"command": "ls", "env": [{"name": "A=B", "value": "c"}]}, "string name and value"),
    ({"command": "ls", "env": [{"name": "A", "value": 1}]}, "string name and value"),
    ({"command": "ls", "outputByteLimit": -1}, "non-negative integer"),
    ({"command": "ls", "outputByteLimit": True}, "non-negative integer"),
]


@pytest.mark.parametrize(("params", "reason"), BAD)
def test_a_bad_terminal_create_is_refused_with_the_reason(
    params: dict[str, Any], reason: str, tmp_path: Path
) -> None:
    with pytest.raises(FsRefused, match=reason.replace("(", r"\(")) as refused:
        command_spec(params, str(tmp_path))
    assert refused.value.code == -32602


def test_a_cwd_that_escapes_through_a_symlink_is_refused(tmp_path: Path) -> None:
    session = tmp_path / "session"
    session.mkdir()
    (session / "out").symlink_to(tmp_path)
    with pytest.raises(FsRefused, match="is a symbolic link"):
        command_spec({"command": "ls", "cwd": str(session / "out")}, str(session))


def test_a_cwd_that_is_a_file_is_refused(tmp_path: Path) -> None:
    (tmp_path / "f").write_text("x")
    with pytest.raises(FsRefused, match="is not a directory"):
        command_spec({"command": "ls", "cwd": str(tmp_path / "f")}, str(tmp_path))


@pytest.mark.parametrize(
    ("returncode", "status"),
    [
        (0, {"exitCode": 0, "signal": None}),
        (7, {"exitCode": 7, "signal": None}),
        (-9, {"exitCode": None, "signal": "SIGKILL"}),
        (-15, {"exitCode": None, "signal": "SIGTERM"}),
    ],
)
def test_exit_status(returncode: int, status: dict[str, Any]) -> None:
    assert exit_fields(returncode) == status


# ---- judging a command: grants and requests --------------------------------------------

OPTIONS = [
    {"optionId": "ok", "name": "Allow", "kind": "allow_once"},
    {"optionId": "no", "name": "Reject", "kind": "reject_once"},
]


def spec(line: str) -> CommandSpec:
    return CommandSpec(line=line, cwd="/w")


def ask_for(translator: Translator, line: str, rpc_id: int = 1) -> str:
    """The agent asks permission for an execute tool running `line`; the request id."""
    tool = {"toolCallId": f"t{rpc_id}", "title": line, "kind": "execute"}
    translator.update({"sessionUpdate": "tool_call", "rawInput": {"command": line}, **tool})
    *_, asked = translator.asks.permission(rpc_id, {"toolCall": tool, "options": OPTIONS})
    assert isinstance(asked, RequestAsked)
    return asked.request.id


def allow(translator: Translator, request_id: str) -> object:
    return translator.asks.answer(request_id, PermissionAnswer(PermissionChoice.ALLOW_ONCE))


def test_a_command_with_no_grant_is_an_execute_request() -> None:
    translator = Translator()
    [asked] = translator.asks.command(9, spec("make test"))  # type: ignore[misc]
    assert isinstance(asked, RequestAsked)
    tool = asked.request.tool
    assert (tool.kind, tool.status, tool.input) == (
        ToolKind.EXECUTE,
        ToolStatus.PENDING,
        CommandInput(command="make test", cwd="/w"),
    )
    assert asked.request.options == (PermissionChoice.ALLOW_ONCE, PermissionChoice.DENY_ONCE)
    ran = allow(translator, asked.request.id)
    assert isinstance(ran, RunCommand) and ran.rpc_id == 9
    assert ran.tool is not None and ran.tool.status is ToolStatus.RUNNING


def test_a_denied_command_fails_the_request_with_the_policy_message() -> None:
    translator = Translator()
    [asked] = translator.asks.command(9, spec("rm -rf build"))  # type: ignore[misc]
    assert isinstance(asked, RequestAsked)
    refused = translator.asks.answer(
        asked.request.id, PermissionAnswer(PermissionChoice.DENY_ONCE), "no deletes here"
    )
    assert isinstance(refused, ReplyError) and refused.code == -32800
    assert refused.message == "corral did not run `rm -rf build`: no deletes here"
    assert refused.warning == refused.message
    assert refused.tool is not None and refused.tool.status is ToolStatus.CANCELLED


def test_a_withdrawn_command_is_refused_and_never_runs() -> None:
    translator = Translator()
    [asked] = translator.asks.command(9, spec("sleep 9"))  # type: ignore[misc]
    assert isinstance(asked, RequestAsked)
    refused = translator.asks.withdraw(asked.request.id)
    assert isinstance(refused, ReplyError) and "withdrawn" in refused.message
    assert allow(translator, asked.request.id) is None


def test_an_allowed_permission_grants_that_command_line_once() -> None:
    translator = Translator()
    allow(translator, ask_for(translator, "npm test"))
    padded = translator.asks.command(2, spec(" npm test "))  # not byte for byte: asked
    assert isinstance(padded, list) and isinstance(padded[0], RequestAsked)
    ran = translator.asks.command(3, spec("npm test"))
    assert ran == RunCommand(rpc_id=3, spec=spec("npm test"), tool=None)
    again = translator.asks.command(4, spec("npm test"))
    assert isinstance(again, list) and isinstance(again[0], RequestAsked)


def test_a_grant_covers_only_the_very_line_that_was_allowed() -> None:
    translator = Translator()
    allow(translator, ask_for(translator, "npm test"))
    other = translator.asks.command(2, spec("npm test && curl x | sh"))
    assert isinstance(other, list) and isinstance(other[0], RequestAsked)


def test_a_denied_permission_grants_nothing() -> None:
    translator = Translator()
    request_id = ask_for(translator, "npm test")
    translator.asks.answer(request_id, PermissionAnswer(PermissionChoice.DENY_ONCE))
    asked = translator.asks.command(2, spec("npm test"))
    assert isinstance(asked, list) and isinstance(asked[0], RequestAsked)


def test_grants_end_when_the_next_turn_begins() -> None:
    translator = Translator()
    allow(translator, ask_for(translator, "npm test"))
    translator.turn_began()
    asked = translator.asks.command(2, spec("npm test"))
    assert isinstance(asked, list) and isinstance(asked[0], RequestAsked)


# ---- replay ----------------------------------------------------------------------------


def wire(*lines: dict[str, Any]) -> bytes:
    return b"".join(orjson.dumps(line) + b"\n" for line in lines)


def requests_in(data: bytes) -> list[RequestAsked]:
    replay = AcpReplay()
    events = replay.feed(data) + replay.end()
    return [event for event in events if isinstance(event, RequestAsked)]


CREATE = {"in": {"id": 5, "method": "terminal/create", "params": {"command": "npm test"}}}
TOOL = {
    "toolCallId": "t1",
    "title": "npm test",
    "kind": "execute",
    "rawInput": {"command": "npm test"},
}


def test_a_recorded_terminal_create_without_a_grant_replays_as_an_execute_request() -> None:
    [asked] = requests_in(wire(CREATE))
    assert asked.request.tool.input == CommandInput(command="npm test", cwd=None)


def test_a_recorded_terminal_create_after_an_allowed_permission_asks_nothing() -> None:
    permission = {"toolCall": TOOL, "options": OPTIONS}
    data = wire(
        {"in": {"id": 4, "method": "session/request_permission", "params": permission}},
        {"out": {"id": 4, "result": {"outcome": {"outcome": "selected", "optionId": "ok"}}}},
        CREATE,
        {"out": {"id": 5, "result": {"terminalId": "term-1"}}},
        {"in": {"id": 6, "method": "terminal/wait_for_exit", "params": {"terminalId": "term-1"}}},
    )
    assert [asked.request.tool.id for asked in requests_in(data)] == ["t1"]
