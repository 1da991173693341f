"""The Python API through its front door, `import corral`, as a user holds it.

What the package exports and ships (`__all__`, `py.typed`, one module name
per file); errors that come out as themselves (no `ExceptionGroup`, a
missing agent is `NotInstalled` with its hint); a session as an async
context manager and `turn()`; the one-shot `query`; typed open options; the
stream operators on aiostream (`Runtime.events()` merges every session, the
later ones too; `only`, `batches`). Each runs the mock agent in-process.
"""

from __future__ import annotations

import asyncio
import sys
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import corral
import pytest
from corral import (
    CorralError,
    ErrorKind,
    Event,
    PermissionAnswer,
    PermissionChoice,
    PermissionRequest,
    RequestClosed,
    RequestOpened,
    Runtime,
    SessionOptions,
    TextDelta,
    TurnEnded,
    TurnStarted,
    batches,
    only,
    query,
)
from corral.sources.mock import parse_script

from tests.support.recording import Recorders
from tests.support.waiting import idle

ASKS_THEN_ANSWERS = [
    {
        "Emit": {
            "RequestOpened": {
                "Permission": {
                    "id": "edit1",
                    "tool": {
                        "id": "edit1",
                        "kind": "Edit",
                        "title": "Edit a.py",
                        "status": "Pending",
                        "input": {"Path": "a.py"},
                        "diffs": [],
                        "locations": ["a.py"],
                    },
                    "options": ["AllowOnce", "DenyOnce"],
                }
            }
        }
    },
    "AwaitAnswer",
    {"Emit": {"TextDelta": {"message_id": "m1", "text": "done"}}},
    {"Emit": {"MessageEnded": {"message_id": "m1"}}},
    {"End": {"Completed": {"source": "Protocol"}}},
]


def _runtime(script: dict[str, Any] | None = None) -> Runtime:
    return Runtime(mock=parse_script(script or {}), transcripts=False)


def _texts(events: list[Event]) -> list[str]:
    return [event.kind.text for event in events if isinstance(event.kind, TextDelta)]


# ---- the front door ---------------------------------------------------------------------


def test_every_name_in_all_is_exported_and_the_core_ones_are_there() -> None:
    missing = [name for name in corral.__all__ if not hasattr(corral, name)]
    assert not missing
    assert {"Runtime", "Session", "CorralError", "ErrorKind", "TurnEnded", "query"} <= set(
        corral.__all__
    )
    assert sorted(corral.__all__) == corral.__all__


def test_the_package_ships_py_typed_beside_its_init() -> None:
    assert (Path(corral.__file__).parent / "py.typed").is_file()


def test_the_front_module_is_imported_under_one_name_only() -> None:
    front = Path(corral.__file__).resolve()
    names = [
        name
        for name, module in list(sys.modules.items())
        if getattr(module, "__file__", None) and Path(module.__file__).resolve() == front
    ]
    assert names == ["corral"]


# ---- errors come out as themselves ----------------------------------------------------------


async def test_a_user_exception_inside_the_runtime_propagates_unchanged() -> None:
    mine = ValueError("mine")
    with pytest.raises(ValueError) as raised:
        async with _runtime():
            raise mine
    assert raised.value is mine


async def test_a_corral_error_inside_the_runtime_propagates_unchanged() -> None:
    with pytest.raises(CorralError) as raised:
        async with _runtime() as rt:
            await rt.open("nonexistent-agent-binary", dir=".")
    assert raised.value.kind is ErrorKind.NOT_INSTALLED


async def test_an_uninstalled_catalog_agent_is_not_installed_with_its_install_hint(
    tmp_path: Path,
) -> None:
    environ = {"PATH": str(tmp_path), "HOME": str(tmp_path)}
    with pytest.raises(CorralError) as raised:
        async with Runtime(environ=environ, transcripts=False) as rt:
            await rt.open("gemini", dir=str(tmp_path))
    assert raised.value.kind is ErrorKind.NOT_INSTALLED
    assert "npm install" in str(raised.value)


# ---- sessions and turns -------------------------------------------------------------------------


async def test_a_session_block_closes_the_session_also_when_it_raises() -> None:
    async with _runtime() as rt:
        with pytest.raises(KeyError):
            async with await rt.open("mock", dir=".") as session:
                await idle(session)
                raise KeyError("inside")
        assert session.ended
        assert rt.sessions() == []


async def test_turn_yields_one_turn_ending_with_its_turn_ended_and_the_session_goes_on() -> None:
    async with _runtime() as rt, await rt.open("mock", dir=".") as session:
        first = [event async for event in session.turn("one")]
        second = [event async for event in session.turn("two")]
        assert isinstance(first[-1].kind, TurnEnded) and isinstance(second[-1].kind, TurnEnded)
        assert _texts(first) == ["You said: one"] and _texts(second) == ["You said: two"]
        assert first[-1].turn_info != second[-1].turn_info
        assert not session.ended


async def test_a_turn_queued_behind_another_ends_with_its_own_turn_ended() -> None:
    slow = [{"Sleep": 200}, {"Emit": {"TextDelta": {"message_id": "m", "text": "slow"}}}]
    slow.append({"End": {"Completed": {"source": "Protocol"}}})
    async with _runtime({"turns": [slow]}) as rt, await rt.open("mock", dir=".") as session:
        await session.prompt("one")
        events = [event async for event in session.turn("two")]
    ended = [event for event in events if isinstance(event.kind, TurnEnded)]
    started = [event for event in events if isinstance(event.kind, TurnStarted)]
    assert len(ended) == 2 and ended[-1] is events[-1]
    assert events[-1].turn_info == started[-1].turn_info != started[0].turn_info


async def test_a_prompt_that_steers_the_running_turn_ends_with_that_turn() -> None:
    rt = _runtime({"steer": True, "turns": [ASKS_THEN_ANSWERS]})  # runs until answered
    events: list[Event] = []
    async with rt, await rt.open("mock", dir=".") as session:
        await session.prompt("one")
        async with asyncio.timeout(10):  # a turn() that missed the steer would never end
            async for event in session.turn("also this"):
                events.append(event)
                if isinstance(event.kind, RequestOpened):
                    await session.answer("edit1", PermissionAnswer(PermissionChoice.ALLOW_ONCE))
        after = [event async for event in session.turn("three")]
    assert [isinstance(event.kind, TurnEnded) for event in events].count(True) == 1
    assert isinstance(events[-1].kind, TurnEnded)
    assert _texts(after) == ["You said: three"]


async def test_a_turn_on_an_ended_session_says_it_has_ended() -> None:
    async with _runtime() as rt:
        session = await rt.open("mock", dir=".")
        await session.close()
        await session.wait_closed()
        with pytest.raises(CorralError) as raised:
            async for _ in session.turn("late"):
                pass
    assert raised.value.kind is ErrorKind.SESSION_CLOSED


# ---- options --------------------------------------------------------------------------


async def test_options_given_twice_are_refused() -> None:
    async with _runtime() as rt:
        options = SessionOptions(agent="mock", dir=".")
        with pytest.raises(TypeError, match="options given twice"):
            await rt.open(options, sandbox=True)


# ---- query --------------------------------------------------------------------------------


async def test_query_yields_the_turn_then_closes_its_session() -> None:
    async with _runtime() as rt:
        options = SessionOptions(agent="mock", dir=".")
        events = [event async for event in query(prompt="hi", options=options, runtime=rt)]
        assert rt.sessions() == []
    assert isinstance(events[-1].kind, TurnEnded)
    assert _texts(events) == ["You said: hi"]


async def test_query_without_a_runtime_runs_its_own_and_its_errors_come_out_as_themselves(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("CORRAL_HOME", str(tmp_path))  # its Runtime's archive
    options = SessionOptions(agent="nonexistent-agent-binary", dir=str(tmp_path))
    with pytest.raises(CorralError) as raised:
        async for _ in query(prompt="hi", options=options):
            pass
    assert raised.value.kind is ErrorKind.NOT_INSTALLED


async def test_query_declines_a_permission_request_nobody_can_answer() -> None:
    recorders = Recorders()
    script = parse_script({"turns": [ASKS_THEN_ANSWERS]})
    async with Runtime(mock=script, transcripts=False, sinks=[recorders]) as rt:
        options = SessionOptions(agent="mock", dir=".")
        events = [event async for event in query(prompt="edit", options=options, runtime=rt)]
    (opened,) = [e.kind for e in events if isinstance(e.kind, RequestOpened)]
    assert isinstance(opened.request, PermissionRequest)
    assert any(isinstance(e.kind, RequestClosed) for e in events)
    (decision,) = recorders.by_session["s1"].decisions()
    assert (decision.decision, decision.decided_by) == ("deny_once", "app")
    assert isinstance(events[-1].kind, TurnEnded)


# ---- stream operators (aiostream) -----------------------------------------------------------


async def _one_turn(rt: Runtime, text: str) -> None:
    session = await rt.open("mock", dir=".")
    await session.prompt(text)


async def test_events_merges_every_session_and_sessions_opened_later_join() -> None:
    seen: list[Event] = []
    async with _runtime() as rt:
        early = await rt.open("mock", dir=".")
        async with rt.events() as events:
            await early.prompt("early")
            async for event in events:
                seen.append(event)
                if isinstance(event.kind, TurnEnded) and event.session_id == early.id:
                    break
            await _one_turn(rt, "late")
            async for event in events:
                seen.append(event)
                if isinstance(event.kind, TurnEnded):
                    break
    assert sorted(_texts(seen)) == ["You said: early", "You said: late"]
    assert len({event.session_id for event in seen}) == 2


async def test_the_merge_ends_once_the_runtime_has_closed() -> None:
    drained: list[Event] = []

    async def drain(events: AsyncIterator[Event]) -> None:
        async for event in events:
            drained.append(event)

    rt = _runtime()
    async with rt.events() as events, asyncio.TaskGroup() as tasks:
        reading = tasks.create_task(drain(events))
        async with rt:
            await _one_turn(rt, "x")
        async with asyncio.timeout(10):
            await reading
    assert _texts(drained) == ["You said: x"]


async def test_only_keeps_the_kinds_asked_for_and_batches_chunks() -> None:
    async with _runtime(
        {
            "turns": [
                [
                    *[
                        {"Emit": {"TextDelta": {"message_id": "m", "text": str(n)}}}
                        for n in range(5)
                    ],
                    {"End": {"Completed": {"source": "Protocol"}}},
                ]
            ]
        }
    ) as rt:
        session = await rt.open("mock", dir=".")
        turn = session.turn("go")
        async with only(turn, TextDelta, TurnStarted).stream() as kept:
            kinds = [type(event.kind) async for event in kept]
        async with batches(session.turn("again"), 2).stream() as chunks:
            sizes = [len(chunk) async for chunk in chunks]
    assert kinds == [TurnStarted, *[TextDelta] * 5]
    assert all(size == 2 for size in sizes[:-1]) and sum(sizes) > 2


def test_a_batch_of_no_events_is_refused() -> None:
    async def nothing() -> Any:
        yield None

    with pytest.raises(ValueError):
        batches(nothing(), 0)
