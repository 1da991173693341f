"""An agent killed with SIGKILL mid-turn, mid-line and mid-permission: the turn
fails, open requests close, the session errors with the signal, everything sent
before the kill is kept, and no process of the agent's group survives."""

from __future__ import annotations

import asyncio
from typing import Any

from corral.actors.runtime import Runtime
from corral.pipeline.errors import ErrorKind
from corral.pipeline.events import Event, RequestClosed, RequestOpened, TextDelta, TurnEnded
from corral.sources.mock import parse_script

from .helpers import alive, kill_group, text

ASK = {
    "Emit": {
        "RequestOpened": {
            "Permission": {
                "id": "r1",
                "tool": {
                    "id": "x1",
                    "kind": "Execute",
                    "title": "make",
                    "status": "Pending",
                    "input": {"Command": {"command": "make", "cwd": None}},
                    "diffs": [],
                    "locations": [],
                },
                "options": ["AllowOnce", "DenyOnce"],
            }
        }
    }
}


async def kill_when(steps: list[Any], ready: type) -> tuple[list[Event], Any, int]:
    """Play `steps`, SIGKILL the agent's group once an event of type `ready` arrived."""
    script = parse_script({"process": True, "turns": [steps]})
    async with Runtime(mock=script) as rt:
        session = await rt.open("mock", dir=".")
        pid = session.agent_pid
        assert pid is not None
        events: list[Event] = []
        await session.prompt("go")
        async with asyncio.timeout(30):
            async for event in session.events():
                events.append(event)
                if isinstance(event.kind, ready) and alive(pid):
                    kill_group(pid)
    return events, session, pid


def check_failed(events: list[Event], session: Any, pid: int) -> None:
    ended = [e.kind for e in events if isinstance(e.kind, TurnEnded)]
    assert len(ended) == 1 and "Failed" in repr(ended[0].stop)
    assert session.failure.kind is ErrorKind.PROCESS_EXITED
    assert session.failure.fields["status"] == "signal 9 (SIGKILL)"
    assert [e.sequence for e in events] == list(range(1, len(events) + 1))
    assert not alive(pid)


async def test_killed_mid_turn() -> None:
    events, session, pid = await kill_when([text("working"), {"Sleep": 30_000}], TextDelta)
    assert [e.kind.text for e in events if isinstance(e.kind, TextDelta)] == ["working"]
    check_failed(events, session, pid)


async def test_killed_mid_line() -> None:
    whole = '{"Emitted": {"kind": {"TextDelta": {"message_id": "m1", "text": "whole"}}}}\n'
    half = '{"Emitted": {"kind": {"TextDelta": {"message_id": "m1", "text": "cut he'
    # One write (under PIPE_BUF, so one read): corral holds the torn half
    # before the app sees "whole" and the test kills the agent.
    events, session, pid = await kill_when([{"Raw": whole + half}, {"Sleep": 30_000}], TextDelta)
    diagnostics = [e for e in events if "corral/decode_error" in e.extensions]
    assert [e.extensions["corral/decode_error"] for e in diagnostics] == ["not_json"]
    check_failed(events, session, pid)


async def test_killed_mid_permission() -> None:
    events, session, pid = await kill_when([ASK, "AwaitAnswer", text("never")], RequestOpened)
    closed = [e for e in events if isinstance(e.kind, RequestClosed)]
    assert len(closed) == 1
    assert closed[0].extensions["corral/decision"]["decided_by"] == "shutdown"
    check_failed(events, session, pid)
