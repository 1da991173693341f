"""`generate` over the real line protocol: the text as a string, a session the app never sees.

Each test runs `corral serve --mock SCRIPT` as a real process (every line it
writes is checked against the schema by `ServeProcess`). The throwaway
session's records go to the transcript archive under the test's
CORRAL_HOME, which is where the declined requests are checked.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest
from corral.actors.runtime import Runtime
from corral.pipeline.errors import CorralError, ErrorKind
from corral.pipeline.events import (
    Choice,
    PermissionChoice,
    PermissionRequest,
    Question,
    QuestionRequest,
    RequestOpened,
    SessionStatus,
    ToolKind,
    ToolStatus,
    ToolUpdate,
    ToolUpdated,
)
from corral.pipeline.wire import OkReply, read_line
from corral.sinks.transcript import find_transcripts, read_transcript
from corral.sinks.transcript._format import DecisionRecord
from corral.sources.mock import parse_script

from tests.reliability.helpers import alive, children_running
from tests.support.waiting import until

END = {"End": {"Completed": {"source": "Protocol"}}}
TOOL = ToolUpdate(id="t1", kind=ToolKind.EDIT, title="Edit a.py", status=ToolStatus.PENDING)


def say(text: str) -> dict[str, Any]:
    return {"Emit": {"TextDelta": {"message_id": "m1", "text": text}}}


def generate(tmp_path: Path, prompt: str = "hi", **fields: Any) -> dict[str, Any]:
    return {"cmd": "generate", "agent": "mock", "dir": str(tmp_path), "prompt": prompt, **fields}


def session_lines(serve: Any) -> list[dict[str, Any]]:
    """Every line about a session: events, session errors, `closed`."""
    return [line for line in serve.lines if {"event", "closed", "session"} & line.keys()]


def mock_agents(pid: int) -> list[int]:
    """The mock agent processes (`"process": true`) corral runs as children of `pid`."""
    return children_running(pid, b"corral.sources.mock.agent")


def decisions(corral_home: Path) -> list[DecisionRecord]:
    (files,) = find_transcripts(corral_home / "transcripts")
    records = read_transcript(files).records
    return [record for record in records if isinstance(record, DecisionRecord)]


async def test_the_reply_is_the_turns_text_as_a_string(serve_mock: Any, tmp_path: Path) -> None:
    serve = await serve_mock({"turns": [[say("Hello, "), say("world"), END]]})
    frame_id = await serve.send(generate(tmp_path))
    reply = await serve.reply(frame_id)
    assert reply == {"id": frame_id, "ok": "Hello, world"}
    typed = read_line(json.dumps(reply).encode())  # as a client of the codec reads it
    assert isinstance(typed, OkReply) and isinstance(typed.value, str)
    assert typed.value == "Hello, world"
    assert await serve.finish() == 0
    assert session_lines(serve) == []  # no event, no session error, no `closed`


async def test_the_app_cannot_reach_the_generate_session_and_its_own_sessions_work(
    serve_mock: Any, tmp_path: Path
) -> None:
    serve = await serve_mock({"turns": [[say("answer"), END]]})
    assert await serve.ok(generate(tmp_path)) == "answer"
    info = await serve.request({"cmd": "info", "session": "s1"})  # the generate session's id
    assert info["error"]["kind"] == "UnknownSession"
    opened = await serve.ok({"cmd": "open", "agent": "mock", "dir": str(tmp_path)})
    await serve.ok({"cmd": "prompt", "session": opened["id"], "text": "ping"})
    await serve.wait_event(opened["id"], "TurnEnded")
    assert await serve.finish() == 0
    assert {line["event"]["session_id"] for line in serve.lines if "event" in line} == {
        opened["id"]
    }
    assert [line["closed"] for line in serve.lines if "closed" in line] == [opened["id"]]


async def test_a_permission_request_is_declined_by_corral_and_generate_fails_cleanly(
    serve_mock: Any, tmp_path: Path, corral_home: Path
) -> None:
    asking = RequestOpened(
        PermissionRequest(
            id="r1",
            tool=TOOL,
            options=(PermissionChoice.ALLOW_ONCE, PermissionChoice.DENY_ONCE),
        )
    )
    script = {"turns": [[{"Emit": asking.to_wire()}, "AwaitAnswer", say("done"), END]]}
    serve = await serve_mock(script)
    reply = await serve.request(generate(tmp_path))
    assert reply["error"]["kind"] == "ProtocolFailed"  # it showed a tool: not text only
    assert await serve.finish() == 0
    assert session_lines(serve) == []
    (decision,) = decisions(corral_home)
    assert (decision.decision, decision.decided_by) == ("deny_once", "generate")


async def test_a_free_text_question_is_answered_with_empty_text_and_the_answer_completes(
    serve_mock: Any, tmp_path: Path, corral_home: Path
) -> None:
    question = QuestionRequest(
        id="r1", questions=(Question(id="q1", text="Anything to add?", allows_free_text=True),)
    )
    script = {
        "turns": [[{"Emit": RequestOpened(question).to_wire()}, "AwaitAnswer", say("ok"), END]]
    }
    serve = await serve_mock(script)
    assert await serve.ok(generate(tmp_path)) == "ok"
    assert await serve.finish() == 0
    assert session_lines(serve) == []
    (decision,) = decisions(corral_home)
    assert (decision.decision, decision.decided_by) == ("answered", "generate")


async def test_a_question_that_needs_a_choice_fails_instead_of_waiting(
    serve_mock: Any, tmp_path: Path
) -> None:
    choices = (Choice(id="a", label="A"), Choice(id="b", label="B"))
    question = QuestionRequest(
        id="r1", questions=(Question(id="q1", text="A or B?", choices=choices),)
    )
    script = {
        "turns": [[{"Emit": RequestOpened(question).to_wire()}, "AwaitAnswer", say("ok"), END]]
    }
    serve = await serve_mock(script)
    reply = await serve.request(generate(tmp_path))
    assert reply["error"]["kind"] == "ProtocolFailed"
    assert "question" in reply["error"]["message"]
    assert await serve.finish() == 0
    assert session_lines(serve) == []


async def test_a_tool_use_fails_with_protocol_failed(serve_mock: Any, tmp_path: Path) -> None:
    used = ToolUpdated(
        ToolUpdate(id="t1", kind=ToolKind.READ, title="Read a.py", status=ToolStatus.COMPLETED)
    )
    serve = await serve_mock({"turns": [[say("let me look"), {"Emit": used.to_wire()}, END]]})
    reply = await serve.request(generate(tmp_path))
    assert reply["error"]["kind"] == "ProtocolFailed"
    assert "tool" in reply["error"]["message"]
    assert await serve.finish() == 0
    assert session_lines(serve) == []


@pytest.mark.parametrize(
    "stop", ["Cancelled", "Refused", {"Failed": {"message": "the model gave up"}}]
)
async def test_a_turn_that_does_not_complete_fails_with_protocol_failed(
    serve_mock: Any, tmp_path: Path, stop: object
) -> None:
    serve = await serve_mock({"turns": [[say("half an answer"), {"End": stop}]]})
    reply = await serve.request(generate(tmp_path))
    assert reply["error"]["kind"] == "ProtocolFailed"
    assert reply["error"]["stop"] == stop
    assert await serve.finish() == 0
    assert session_lines(serve) == []


async def test_an_agent_that_dies_mid_answer_fails_it_without_a_session_error_line(
    serve_mock: Any, tmp_path: Path
) -> None:
    serve = await serve_mock({"turns": [[say("half"), "Die"]]})
    reply = await serve.request(generate(tmp_path))
    assert reply["error"]["kind"] == "ProtocolFailed"
    assert await serve.finish() == 0
    assert session_lines(serve) == []


async def test_options_a_throwaway_session_cannot_honour_are_invalid_configuration(
    serve_mock: Any, tmp_path: Path
) -> None:
    serve = await serve_mock({"resume": True})
    for fields in (
        {"resume": "token"},
        {"fork": "token"},
        {"fork": "token", "fork_at": "m1"},
        {"permission_mode": "AutoApprove"},
    ):
        reply = await serve.request(generate(tmp_path, **fields))
        assert reply["error"]["kind"] == "InvalidConfiguration", fields
    assert await serve.finish() == 0
    assert session_lines(serve) == []


async def test_a_wire_that_can_neither_disable_tools_nor_ask_is_unsupported(
    serve_mock: Any, tmp_path: Path
) -> None:
    serve = await serve_mock({"permissions": False, "turns": [[say("ran a tool"), END]]})
    reply = await serve.request(generate(tmp_path))
    assert reply["error"]["kind"] == "UnsupportedFeature"
    assert await serve.finish() == 0
    assert session_lines(serve) == []


async def test_a_cancelled_generate_closes_its_session_and_stops_its_agent(
    tmp_path: Path,
) -> None:
    # A real agent process (the mock's process mode) that answers slowly.
    script = parse_script({"process": True, "turns": [[say("slow"), {"Sleep": 60_000}, END]]})
    async with Runtime(mock=script) as runtime, asyncio.TaskGroup() as tasks:
        answer = tasks.create_task(runtime.generate("mock", "hi", dir=str(tmp_path)))
        await until(lambda: any(s.status is SessionStatus.WORKING for s in runtime.sessions()))
        (session,) = runtime.sessions()
        pid = session.agent_pid
        assert pid is not None and alive(pid)
        answer.cancel()
        with pytest.raises(asyncio.CancelledError):
            await answer
        async with asyncio.timeout(10):
            await session.wait_closed()
        await until(lambda: not alive(pid), what="the agent to be gone")
        assert runtime.sessions() == []


async def test_shutdown_during_a_generate_stops_its_agent_and_writes_nothing_for_it(
    serve_mock: Any, tmp_path: Path
) -> None:
    # The mock as a real child process of corral, slow to answer.
    serve = await serve_mock({"process": True, "turns": [[say("slow"), {"Sleep": 600_000}, END]]})
    frame_id = await serve.send(generate(tmp_path))
    await until(lambda: mock_agents(serve.process.pid) != [], timeout=30)
    (agent,) = mock_agents(serve.process.pid)
    assert await serve.finish(timeout=30) == 0  # EOF: shutdown abandons the generate
    assert not alive(agent)
    reply = await serve.reply(frame_id)
    assert "error" in reply  # one reply, never the text of a turn that never ended
    assert session_lines(serve) == []


async def test_the_python_api_returns_the_text(tmp_path: Path) -> None:
    script = parse_script({"turns": [[say("forty-two"), END]]})
    async with Runtime(mock=script, transcripts=False) as runtime:
        assert await runtime.generate("mock", "the answer?", dir=str(tmp_path)) == "forty-two"
        assert runtime.sessions() == []  # closed once answered


async def test_the_python_api_raises_typed_errors(tmp_path: Path) -> None:
    script = parse_script({"turns": [[say("no"), {"End": "Cancelled"}]]})
    async with Runtime(mock=script, transcripts=False) as runtime:
        with pytest.raises(CorralError) as failed:
            await runtime.generate("mock", "the answer?", dir=str(tmp_path))
        assert failed.value.kind is ErrorKind.PROTOCOL_FAILED
