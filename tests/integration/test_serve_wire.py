"""The line protocol's guarantees, against `corral serve --mock` as a real process."""

from __future__ import annotations

import subprocess
import sys
from importlib import metadata
from pathlib import Path
from typing import Any

TEXT_TURN = {
    "turns": [
        [
            {"Emit": {"TextDelta": {"message_id": "m1", "text": "hello"}}},
            {"Emit": {"MessageEnded": {"message_id": "m1"}}},
            {"End": {"Completed": {"source": "Protocol"}}},
        ]
    ]
}


async def test_hello_is_the_first_line(serve_mock: Any) -> None:
    serve = await serve_mock(TEXT_TURN)
    assert serve.lines[0] == {"hello": {"protocol": 1, "anyagent": metadata.version("corral")}}
    assert await serve.finish() == 0


# The agent talks the moment its session runs, before any command: its events
# race the open reply, which must still come first. (Here the reply is queued
# before the session's driver runs, and the writer drains replies first; the
# release in `Server._open` is what keeps the order when the reply cannot be
# queued at once, e.g. behind a full reply channel, which this does not force.)
CHATTY_AT_OPEN = {
    "on_open": [
        {"Repeat": {"times": 3000, "steps": [
            {"Emit": {"TextDelta": {"message_id": "m1", "text": "hello "}}}]}},
        {"Emit": {"MessageEnded": {"message_id": "m1"}}},
        {"End": {"Completed": {"source": "Protocol"}}},
    ]
}  # fmt: skip


async def test_open_reply_precedes_every_event_of_the_session(
    serve_mock: Any, tmp_path: Path
) -> None:
    serve = await serve_mock(CHATTY_AT_OPEN)
    opening = await serve.send({"cmd": "open", "agent": "mock", "dir": str(tmp_path)})
    reply = await serve.reply(opening)
    session_id = reply["ok"]["id"]
    await serve.wait_event(session_id, "TurnEnded")
    reply_at = serve.lines.index(reply)
    first_event = next(i for i, line in enumerate(serve.lines) if "event" in line)
    assert reply_at < first_event
    assert len(serve.events(session_id)) > 3000  # the agent did talk at open
    assert await serve.finish() == 0


async def test_eof_closes_every_session_once_and_exits_zero(
    serve_mock: Any, tmp_path: Path
) -> None:
    serve = await serve_mock(TEXT_TURN)
    first = await serve.ok({"cmd": "open", "agent": "mock", "dir": str(tmp_path)})
    second = await serve.ok({"cmd": "open", "agent": "mock", "dir": str(tmp_path)})
    assert await serve.finish() == 0
    closed = [line["closed"] for line in serve.lines if "closed" in line]
    assert sorted(closed) == sorted([first["id"], second["id"]])


async def test_a_line_that_is_not_json_is_a_bad_frame_and_the_loop_goes_on(
    serve_mock: Any,
) -> None:
    serve = await serve_mock(TEXT_TURN)
    await serve.send_raw(b"this is not json\n")
    error = await serve.wait_for(lambda line: "error" in line)
    assert error["id"] is None
    assert error["error"]["kind"] == "BadFrame"
    assert (await serve.ok({"cmd": "discover"}))["agents"][0]["id"] == "mock"
    assert await serve.finish() == 0


async def test_an_unknown_command_is_a_bad_frame_with_its_id(serve_mock: Any) -> None:
    serve = await serve_mock(TEXT_TURN)
    reply = await serve.request({"id": 7, "cmd": "dance"})
    assert reply["id"] == 7
    assert reply["error"]["kind"] == "BadFrame"
    assert "dance" in reply["error"]["message"]
    assert await serve.finish() == 0


async def test_a_command_for_an_unknown_session_is_unknown_session(serve_mock: Any) -> None:
    serve = await serve_mock(TEXT_TURN)
    reply = await serve.request({"cmd": "prompt", "session": "s42", "text": "hi"})
    assert reply["error"]["kind"] == "UnknownSession"
    assert await serve.finish() == 0


def test_version_prints_the_installed_version() -> None:
    script = Path(sys.executable).parent / "corral"  # the console script pip installed
    result = subprocess.run(
        [str(script), "--version"], capture_output=True, text=True, timeout=60, check=True
    )
    assert result.stdout.strip() == f"corral {metadata.version('corral')}"


async def test_a_later_fast_command_is_answered_before_an_earlier_slow_one(
    serve_mock: Any, tmp_path: Path
) -> None:
    # generate's session is the app's to neither see nor answer: its agent is slow.
    serve = await serve_mock({"turns": [[{"Sleep": 600_000}]]})
    slow = await serve.send(
        {"cmd": "generate", "agent": "mock", "dir": str(tmp_path), "prompt": "go"}
    )
    fast = await serve.send({"cmd": "discover"})
    fast_reply = await serve.reply(fast)
    assert fast_reply["ok"]["agents"][0]["id"] == "mock"
    assert not any(line.get("id") == slow for line in serve.lines)  # generate still waits
    assert await serve.finish() == 0  # shutdown abandons the generate
    assert "error" in await serve.reply(slow)  # which still gets its one reply
