"""The host ↔ front seam of `serve --ray`, in one process: no Ray cluster.

A `SessionHost` (the Ray actor's class) is called through `LocalHandle`,
which does what Ray's actor handle does to a call: its arguments and its
answer are pickled and unpickled, and `.remote(...)` returns an awaitable.
The front's `RemoteActor` drives it and pumps its records into a recording
sink, as `Cluster.open` does. A handle that starts failing like a dead
node shows how the front ends the session on its own.
"""

from __future__ import annotations

import asyncio
import pickle
from collections.abc import AsyncIterator, Callable
from typing import Any

import pytest
from corral.pipeline.channels import Channel
from corral.pipeline.commands import SessionOptions
from corral.pipeline.events import Event, SessionStatus, TurnEnded
from corral.pipeline.records import Closed, SessionFailed, SinkItem
from corral.sources.mock import parse_script

ray_exceptions = pytest.importorskip("ray.exceptions")
from corral.actors.cluster._front import RemoteActor  # noqa: E402  (needs Ray)
from corral.actors.cluster._host import Opening, SessionHost  # noqa: E402
from corral.actors.session import ActorSettings  # noqa: E402

from tests.support.recording import RecordingSink  # noqa: E402
from tests.support.waiting import settled, until  # noqa: E402

SCRIPT = parse_script(
    {
        "turns": [
            [
                *(
                    {"Emit": {"TextDelta": {"message_id": "m1", "text": f"{index} "}}}
                    for index in range(600)  # more than two batches
                ),
                {"Sleep": 60_000},
                {"End": {"Completed": {"source": "Protocol"}}},
            ]
        ]
    }
)


class _Call:
    def __init__(self, method: Callable[..., Any], died: asyncio.Event) -> None:
        self._method = method
        self._died = died

    async def _answer(self, args: tuple[object, ...]) -> Any:
        answer = self._method(*pickle.loads(pickle.dumps(args)))
        if asyncio.iscoroutine(answer):
            answer = await answer
        return pickle.loads(pickle.dumps(answer))

    def remote(self, *args: object) -> asyncio.Future[Any]:
        async def call() -> Any:
            answering = asyncio.ensure_future(self._answer(args))
            dying = asyncio.ensure_future(self._died.wait())
            await asyncio.wait({answering, dying}, return_when=asyncio.FIRST_COMPLETED)
            dying.cancel()
            if self._died.is_set():  # in flight or not, a call to a dead actor fails
                answering.cancel()
                raise ray_exceptions.ActorDiedError()
            return answering.result()

        return asyncio.ensure_future(call())


class LocalHandle:
    """A SessionHost called as through Ray: pickled both ways; after `kill` every call fails."""

    def __init__(self, host: SessionHost) -> None:
        self._host = host
        self._died = asyncio.Event()

    def kill(self) -> None:
        self._died.set()

    def __getattr__(self, name: str) -> _Call:
        return _Call(getattr(self._host, name), self._died)


def _events(sink: RecordingSink) -> list[Event]:
    return [item for item in sink.items if isinstance(item, Event)]


@pytest.fixture
async def host() -> AsyncIterator[SessionHost]:
    hosted = SessionHost({"mock": SCRIPT})
    await hosted.start()
    yield hosted
    await hosted.stop()


async def _opened(host: SessionHost, handle: LocalHandle, tmp: str) -> RemoteActor:
    reply = await handle.open.remote("s7", SessionOptions(agent="mock", dir=tmp))
    assert isinstance(reply.value, Opening) and reply.error is None
    return RemoteActor(
        host=handle,
        session_id="s7",
        info=reply.value.info,
        node="here",
        agent_pid=reply.value.agent_pid,
        on_gone=lambda: None,
    )


async def _streaming(actor: RemoteActor, sink: RecordingSink, tasks: asyncio.TaskGroup) -> Any:
    """The pump running, a turn prompted, its first 600 events at the front."""
    pump = tasks.create_task(actor.run([sink], ActorSettings()))
    await actor.prompt("go")
    await until(lambda: len(_events(sink)) >= 600)
    return pump


async def test_a_hosted_session_reaches_the_front_sinks_in_order_and_ends_with_closed(
    host: SessionHost, tmp_path: Any
) -> None:
    actor = await _opened(host, LocalHandle(host), str(tmp_path))
    sink = RecordingSink()
    async with asyncio.TaskGroup() as tasks:
        pump = await _streaming(actor, sink, tasks)
        assert actor.info().status is SessionStatus.WORKING
        await actor.close()
        await pump
    events = _events(sink)
    assert [event.sequence for event in events] == list(range(1, len(events) + 1))
    assert actor.engine.sequence == len(events)
    assert isinstance(sink.items[-1], Closed) and sink.items[-1].session_id == "s7"
    assert host.load() == 0


async def test_a_host_that_dies_mid_turn_ends_its_session_at_the_front_without_a_gap(
    host: SessionHost, tmp_path: Any
) -> None:
    handle = LocalHandle(host)
    actor = await _opened(host, handle, str(tmp_path))
    sink = RecordingSink()
    async with asyncio.TaskGroup() as tasks:
        pump = await _streaming(actor, sink, tasks)
        handle.kill()  # the node is gone: every call fails from now on
        await pump
    events = _events(sink)
    assert [event.sequence for event in events] == list(range(1, len(events) + 1))
    failed, closed = sink.items[-2:]
    assert isinstance(failed, SessionFailed) and failed.error.kind.value == "ProcessExited"
    assert isinstance(closed, Closed) and closed.events == len(events)
    turn_end = [e for e in events if isinstance(e.kind, TurnEnded)]
    assert len(turn_end) == 1 and "Failed" in str(turn_end[0].kind.stop)
    assert actor.engine.failure is failed.error
    with pytest.raises(Exception, match="has ended"):
        await actor.prompt("again")


class Stalled:
    """An app that reads nothing."""

    name = "stalled"

    async def run(self, items_in: Channel[SinkItem]) -> None:
        await asyncio.Event().wait()


async def test_a_front_that_stops_reading_stops_the_hosted_session(tmp_path: Any) -> None:
    flood = {"Emit": {"TextDelta": {"message_id": "m1", "text": "x"}}}
    script = parse_script({"turns": [[{"Repeat": {"times": 100_000, "steps": [flood]}}]]})
    host = SessionHost({"mock": script})
    await host.start()
    actor = await _opened(host, LocalHandle(host), str(tmp_path))
    hosted = host._live().session("s7")
    async with asyncio.TaskGroup() as tasks:
        pump = tasks.create_task(actor.run([Stalled()], ActorSettings()))
        await actor.prompt("go")
        await settled()
        made = hosted.events_made
        await settled()
        assert hosted.events_made == made < 5_000  # held, bounded: nothing dropped, nothing grows
        pump.cancel()
    await host.stop()
