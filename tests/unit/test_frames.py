"""Frames from the app: every command reads; every bad frame says why."""

from __future__ import annotations

import orjson
import pytest
from corral.pipeline.commands import (
    AcpRef,
    AnswerCmd,
    CancelCmd,
    OpenCmd,
    PermissionMode,
    RollbackCmd,
    RollbackScope,
)
from corral.pipeline.events import ChoicesAnswer, QuestionsAnswer, TextAnswer
from corral.pipeline.wire import FrameError, parse_frame

from tests.support.schema import check


def frame(obj: dict[str, object]) -> bytes:
    return orjson.dumps(obj)


def test_every_schema_frame_kind_parses() -> None:
    frames = [
        {"id": 1, "cmd": "discover"},
        {"id": 2, "cmd": "probe", "agent": "claude"},
        {"id": 3, "cmd": "plan_usage", "agent": "claude"},
        {"id": 4, "cmd": "generate", "agent": "mock", "dir": ".", "prompt": "hi"},
        {"id": 5, "cmd": "open", "agent": {"acp": {"name": "x", "path": "/x"}}, "dir": "."},
        {"id": 6, "cmd": "prompt", "session": "s1", "text": "hi", "attachments": ["a.png"]},
        {"id": 7, "cmd": "dequeue", "session": "s1", "prompt": "p2"},
        {
            "id": 8,
            "cmd": "answer",
            "session": "s1",
            "request": "r1",
            "answer": {"Permission": "AllowOnce"},
        },
        {"id": 9, "cmd": "configure", "session": "s1", "option": "fast", "value": True},
        {"id": 10, "cmd": "rollback", "session": "s1", "turns": 1, "scope": "Conversation"},
        {"id": 11, "cmd": "compact", "session": "s1"},
        {"id": 12, "cmd": "cancel", "session": "s1", "clear_queue": True},
        {"id": 13, "cmd": "info", "session": "s1"},
        {"id": 14, "cmd": "close", "session": "s1"},
    ]
    for raw in frames:
        check("line-protocol.schema.json", "Frame", raw)
        frame_id, _ = parse_frame(frame(raw))
        assert frame_id == raw["id"]


def test_open_reads_every_session_option() -> None:
    _, command = parse_frame(
        frame(
            {
                "id": 1,
                "cmd": "open",
                "agent": {"acp": {"name": "mine", "path": "/bin/mine", "args": ["--acp"]}},
                "dir": "/work",
                "resume": "tok",
                "permission_mode": "AutoApprove",
                "mcp_servers": [
                    {
                        "name": "fs",
                        "connection": {"Stdio": {"command": "mcp", "args": [], "env": {}}},
                    }
                ],
                "configure": {"model": "opus", "fast": True},
                "env": {"FOO": "1"},
                "args": ["--verbose"],
            }
        )
    )
    assert isinstance(command, OpenCmd)
    options = command.options
    assert options.agent == AcpRef(name="mine", path="/bin/mine", args=("--acp",))
    assert options.permission_mode is PermissionMode.AUTO_APPROVE
    assert options.configure == (("model", "opus"), ("fast", True))
    assert options.mcp_servers[0].transport == "Stdio"
    assert (options.env, options.args) == ((("FOO", "1"),), ("--verbose",))


def test_question_answers_read_in_order() -> None:
    _, command = parse_frame(
        frame(
            {
                "id": 1,
                "cmd": "answer",
                "session": "s1",
                "request": "q1",
                "answer": {"Question": [{"Choices": ["a", "b"]}, {"Text": "free"}]},
            }
        )
    )
    assert isinstance(command, AnswerCmd)
    assert command.answer == QuestionsAnswer((ChoicesAnswer(("a", "b")), TextAnswer("free")))


def test_defaults_apply_when_optional_fields_are_absent() -> None:
    _, cancel = parse_frame(frame({"id": 1, "cmd": "cancel", "session": "s1"}))
    assert cancel == CancelCmd(session="s1", clear_queue=False)
    _, rollback = parse_frame(
        frame(
            {
                "id": 2,
                "cmd": "rollback",
                "session": "s1",
                "turns": 2,
                "scope": "ConversationAndFiles",
            }
        )
    )
    assert rollback == RollbackCmd(
        session="s1", turns=2, scope=RollbackScope.CONVERSATION_AND_FILES
    )


@pytest.mark.parametrize(
    ("raw", "frame_id", "needle"),
    [
        (b"{not json", None, "not JSON"),
        (b"[1, 2]", None, "JSON object"),
        (b'{"cmd": "discover"}', None, '"id"'),
        (b'{"id": -1, "cmd": "discover"}', None, '"id"'),
        (b'{"id": 4, "cmd": "fly"}', 4, "unknown command 'fly'"),
        (b'{"id": 5, "cmd": "prompt", "session": "s1"}', 5, "text: missing"),
        (
            b'{"id": 6, "cmd": "rollback", "session": "s1", "turns": 0, "scope": "Conversation"}',
            6,
            "at least 1",
        ),
        (
            b'{"id": 7, "cmd": "answer", "session": "s", "request": "r", "answer": {"Permission": "Maybe"}}',
            7,
            "answer.Permission",
        ),
        (
            b'{"id": 8, "cmd": "open", "agent": "x", "dir": ".", "permission_mode": "Yolo"}',
            8,
            "permission_mode",
        ),
    ],
)
def test_a_bad_frame_names_its_id_and_what_is_wrong(
    raw: bytes, frame_id: int | None, needle: str
) -> None:
    with pytest.raises(FrameError) as raised:
        parse_frame(raw)
    assert raised.value.frame_id == frame_id
    assert needle in raised.value.message
