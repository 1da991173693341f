"""A live session's records reach every sink once each, as the engine made them:
`Opened` first, one `Prompted` per accepted prompt before its turn, the
session error when it failed, and one `Closed` last. (The actor only carries
the engine's outbox; before, it made these records itself, next to the engine.)"""

from __future__ import annotations

from pathlib import Path

from corral.actors.runtime import Runtime
from corral.actors.session import SessionActor
from corral.pipeline.events import Event, TurnStarted
from corral.pipeline.records import Closed, Opened, Prompted, SessionFailed
from corral.sources.mock import parse_script

from tests.support.recording import Recorders


async def test_a_session_s_records_come_once_each_in_order(tmp_path: Path) -> None:
    recorders = Recorders()
    async with Runtime(mock=parse_script({}), sinks=[recorders], transcripts=False) as rt:
        session = await rt.open("mock", str(tmp_path))
        await session.prompt("one")
        await session.prompt("two")
        await session.wait_idle()
        await session.close()
        await session.wait_closed()
    items = recorders.by_session[session.id].items
    assert isinstance(items[0], Opened) and items[0].info.id == session.id
    assert isinstance(items[-1], Closed) and items[-1].reason == "closed"
    assert sum(isinstance(item, Opened | Closed | SessionFailed) for item in items) == 2
    prompted = [(i, item) for i, item in enumerate(items) if isinstance(item, Prompted)]
    assert [item.text for _, item in prompted] == ["one", "two"]
    started = [
        item.kind.origin
        for item in items
        if isinstance(item, Event) and isinstance(item.kind, TurnStarted)
    ]
    assert [getattr(origin, "prompt_id", None) for origin in started] == ["p1", "p2"]
    # `Closed` counts what went before it.
    events = [item for item in items if isinstance(item, Event)]
    assert items[-1].events == len(events) == events[-1].sequence and items[-1].turns == 2


async def test_the_handle_is_all_a_caller_holds_and_says_what_they_observe(tmp_path: Path) -> None:
    async with Runtime(mock=parse_script({}), transcripts=False) as rt:
        session = await rt.open("mock", str(tmp_path))
        public = [getattr(session, name) for name in dir(session) if not name.startswith("_")]
        assert not [value for value in public if isinstance(value, SessionActor)]
        names = [channel.name for channel in session.channels()]
        assert names[:2] == [f"{session.id}/driver", f"{session.id}/engine"]
        await session.prompt("ping")
        await session.wait_idle()
        made = session.events_made
        await session.close()
        await session.wait_closed()
    assert made > 0 and session.events_made >= made  # readable after the end too
    assert session.agent_pid is None  # the in-process mock runs no process
