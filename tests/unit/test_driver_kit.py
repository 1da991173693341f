"""The JSON-RPC driver kit: typed wire problems, the inbox, the handshake exit, the base driver.

The base driver is exercised with a real subprocess (a few lines of Python
that write a JSON-RPC wire), since its subject is the process.
"""

from __future__ import annotations

import asyncio
import sys
from collections.abc import Sequence
from typing import Any, cast

import pytest
from corral.pipeline.decoding import NotJson, Oversized
from corral.pipeline.driver import (
    AgentExited,
    DriverCommand,
    DriverEvent,
    Emitted,
    LaunchSpec,
    SteerVerdict,
    TurnBegan,
)
from corral.pipeline.errors import CorralError, ErrorKind
from corral.pipeline.events import Diagnostic, DiagnosticLevel
from corral.pipeline.telemetry import SessionTelemetry
from corral.sources._jsonrpc import Incoming, JsonRpcPeer, RpcNotification
from corral.sources._kit.driver import JsonRpcDriver
from corral.sources._kit.inbox import Inbox, Local
from corral.sources._kit.problems import ProblemKind, WireProblem, tally
from corral.sources._process import AgentProcess

from tests.support.waiting import settled


class _Counts:
    """An observer that keeps what the telemetry was told."""

    def __init__(self) -> None:
        self.decode_errors: list[str] = []
        self.unknown_frames = 0

    def process_started(self, agent: str) -> None: ...

    def process_exited(self, agent: str, status: str) -> None: ...

    def process_restarted(self, agent: str) -> None: ...

    def decode_error(self, agent: str, kind: str) -> None:
        self.decode_errors.append(kind)

    def unknown_frame(self, agent: str) -> None:
        self.unknown_frames += 1

    def wire_line(self, session_id: str, direction: str, line: bytes) -> None: ...


def _telemetry() -> tuple[SessionTelemetry, _Counts]:
    counts = _Counts()
    return SessionTelemetry([counts], "s1", "kit-agent"), counts


# ---- wire problems -------------------------------------------------------------------


def test_an_oversized_line_is_oversized_whatever_its_reason_says() -> None:
    problem = WireProblem.from_decoder(Oversized(length=99))
    assert problem.kind is ProblemKind.OVERSIZED
    event = problem.event(speaker="X", wire="JSON-RPC", raw_key="x/raw_line")
    assert event.problem == "oversized"


def test_a_line_that_is_not_json_keeps_its_prefix_and_the_request_id() -> None:
    problem = WireProblem.from_decoder(NotJson(prefix="{oops", reason="bad", length=5), 7)
    assert (problem.kind, problem.raw, problem.request_id) == (ProblemKind.NOT_JSON, "{oops", 7)


def test_the_kinds_are_the_metric_labels() -> None:
    from corral.sinks.metrics._observer import _DECODE_KINDS

    assert {kind.value for kind in ProblemKind} == set(_DECODE_KINDS)


def test_tally_counts_problems_and_unknown_frames_once_each() -> None:
    telemetry, counts = _telemetry()
    problem = WireProblem(kind=ProblemKind.BAD_SHAPE, reason="r")
    tally(telemetry, problem.event(speaker="X", wire="Y", raw_key="k"))
    info = Diagnostic(level=DiagnosticLevel.INFO, message="?")
    unknown = Emitted(kind=info, unknown_frame="x/y")
    tally(telemetry, unknown)
    tally(telemetry, TurnBegan())
    assert (counts.decode_errors, counts.unknown_frames) == (["bad_shape"], 1)
    tally(telemetry, TurnBegan(), unknown, problem.event(speaker="X", wire="Y", raw_key="k"))
    assert (counts.decode_errors, counts.unknown_frames) == (["bad_shape"] * 2, 2)


class _Lines:
    """A process whose output is the given bytes, then EOF."""

    def __init__(self, *chunks: bytes) -> None:
        self._chunks = list(chunks)

    async def read(self) -> bytes:
        return self._chunks.pop(0) if self._chunks else b""


async def _pumped(*chunks: bytes) -> list[Incoming]:
    from corral.pipeline.channels import Channel

    incoming: Channel[Incoming] = Channel(8, name="incoming")
    await JsonRpcPeer(cast(AgentProcess, _Lines(*chunks))).pump(incoming)
    return [item async for item in incoming]


async def test_a_response_to_no_request_of_ours_is_bad_shape_not_not_json() -> None:
    (item,) = await _pumped(b'{"jsonrpc":"2.0","id":41,"result":{}}\n')
    assert isinstance(item, WireProblem) and item.kind is ProblemKind.BAD_SHAPE


async def test_an_unreadable_request_is_not_json_with_its_id() -> None:
    (item,) = await _pumped(b'{"jsonrpc":"2.0","id":3,"method":"x","params":"\\ud800 \n')
    assert isinstance(item, WireProblem)
    assert (item.kind, item.request_id) == (ProblemKind.NOT_JSON, 3)


def _notification(text: str) -> bytes:
    return b'{"jsonrpc":"2.0","method":"n","params":{"t":"%s"}}\n' % text.encode()


async def test_a_message_carries_the_bytes_read_for_it_across_chunks() -> None:
    line = _notification("x" * 1_000_000)
    chunks = [line[i : i + 65_536] for i in range(0, len(line), 65_536)]
    small = _notification("hi")
    (big, little) = await _pumped(*chunks, small)
    assert isinstance(big, RpcNotification) and isinstance(little, RpcNotification)
    assert big.size == len(line) and little.size == len(small)


async def test_the_inbox_holds_the_agent_s_messages_in_bytes_not_only_in_count() -> None:
    line = _notification("x" * 1_000_000)
    inbox: Inbox[Incoming] = Inbox(name="t", frames=64, max_bytes=2_500_000)
    frames: Any = inbox.frames
    pump = asyncio.ensure_future(JsonRpcPeer(cast(AgentProcess, _Lines(*[line] * 6))).pump(frames))
    await settled()
    held = inbox.frames.statistics()
    assert not pump.done()  # the reading waits: two megabytes are held, not 64 messages
    assert held.depth == 2 and held.bytes <= 2_500_000 + len(line)
    got: list[object] = []
    while (batch := await inbox.next_batch()) is not None:
        got += batch
    assert [type(item) for item in got] == [RpcNotification] * 6
    await pump


# ---- the inbox -----------------------------------------------------------------------


async def test_local_events_are_served_before_waiting_frames() -> None:
    inbox: Inbox[str] = Inbox(name="t", frames=4)
    await inbox.frames.send("frame 1")
    verdict = SteerVerdict(prompt_id="p1", accepted=True)
    await inbox.put_local(verdict)
    assert await inbox.next_batch() == [Local((verdict,))]
    assert await inbox.next_batch() == ["frame 1"]


async def test_an_item_put_behind_keeps_its_place_after_earlier_frames() -> None:
    inbox: Inbox[str] = Inbox(name="t", frames=4)
    await inbox.frames.send("frame 1")
    await inbox.put_behind(Local((TurnBegan(),)))
    await inbox.frames.send("frame 2")
    inbox.frames.close()
    # One batch: what the frames channel holds, in order, the item put behind among them.
    assert await inbox.next_batch() == ["frame 1", Local((TurnBegan(),)), "frame 2"]
    assert await inbox.next_batch() is None


async def test_a_stopped_inbox_takes_nothing_and_releases_a_waiting_putter() -> None:
    inbox: Inbox[str] = Inbox(name="t", frames=1, local=1)
    await inbox.put_local(TurnBegan())
    async with asyncio.timeout(5), asyncio.TaskGroup() as tasks:
        blocked = tasks.create_task(inbox.put_local(TurnBegan()))  # the local channel is full
        while inbox._local.statistics().waiting_senders == 0:  # wait until it is blocked
            await asyncio.sleep(0)
        inbox.abort()
    assert blocked.done()
    await inbox.put_behind("late")  # no error: the session is over
    assert await inbox.next_batch() is None


async def test_a_waiting_inbox_wakes_on_either_channel_with_no_task_per_channel() -> None:
    inbox: Inbox[str] = Inbox(name="t", frames=4)
    for put in (inbox.put_local(TurnBegan()), inbox.frames.send("frame 1")):
        waiting = asyncio.create_task(inbox.next_batch())
        await settled()
        # One wait on both channels (a Wakeup), not a helper task per channel.
        assert asyncio.all_tasks() == {asyncio.current_task(), waiting}
        await put
        async with asyncio.timeout(5):
            assert await waiting in ([Local((TurnBegan(),))], ["frame 1"])


# ---- the base driver on a real process -------------------------------------------------

_AGENT = """
import sys
sys.stdout.write("not json\\n")
sys.stdout.write('{"jsonrpc":"2.0","id":99,"result":1}\\n')
sys.stdout.write('{"jsonrpc":"2.0","method":"hello","params":{}}\\n')
sys.stdout.flush()
sys.stderr.write("bye\\n")
sys.exit(3)
"""


class _EchoDriver(JsonRpcDriver[Incoming]):
    """The least a provider supplies: a translator (and a `send`, unused here)."""

    async def start(self, tasks: asyncio.TaskGroup) -> None:
        await self._launch(tasks, [sys.executable, "-c", _AGENT], {"PATH": "/usr/bin:/bin"})

    async def send(self, command: DriverCommand) -> None:
        raise AssertionError("no command is sent in these tests")

    async def _translate(self, item: Incoming) -> list[DriverEvent]:
        match item:
            case WireProblem():
                return [item.event(speaker="it", wire="JSON-RPC", raw_key="kit/raw_line")]
            case RpcNotification(method=method):
                return [Emitted(kind=Diagnostic(level=DiagnosticLevel.INFO, message=method))]
        return []


class _Events:
    def __init__(self) -> None:
        self.events: list[DriverEvent] = []

    async def send(self, event: DriverEvent) -> None:
        self.events.append(event)

    async def send_batch(self, batch: Sequence[DriverEvent]) -> None:
        self.events.extend(batch)


def _spec(tmp_path: object) -> LaunchSpec:
    return LaunchSpec(session_id="kit", executable=sys.executable, dir=str(tmp_path))


async def test_the_base_driver_counts_each_problem_once_and_reports_the_exit(
    tmp_path: object,
) -> None:
    telemetry, counts = _telemetry()
    driver = _EchoDriver(
        _spec(tmp_path), telemetry, frames=4, inbox_name="kit", agent="Kit", wire="kit"
    )
    events_out = _Events()
    async with asyncio.timeout(20), asyncio.TaskGroup() as tasks:
        await driver.start(tasks)
        await driver.run(events_out)
        await driver.stop(1.0)
    kinds = [e.problem for e in events_out.events[:2]]
    assert kinds == ["not_json", "bad_shape"]
    assert counts.decode_errors == ["not_json", "bad_shape"]
    exited = events_out.events[-1]
    assert isinstance(exited, AgentExited) and exited.status == "3"
    assert "bye" in exited.stderr


async def test_an_exit_during_the_handshake_is_process_exited_with_its_stderr(
    tmp_path: object,
) -> None:
    telemetry, _ = _telemetry()
    driver = _EchoDriver(
        _spec(tmp_path), telemetry, frames=4, inbox_name="kit", agent="Kit", wire="kit"
    )
    async with asyncio.timeout(20), asyncio.TaskGroup() as tasks:
        await driver.start(tasks)
        assert driver._peer is not None
        with pytest.raises(CorralError) as raised:
            await driver._handshaking(driver._peer.request("initialize"))
        await driver.stop(1.0)
    error = raised.value
    assert error.kind is ErrorKind.PROCESS_EXITED
    assert "Kit exited during the kit handshake (status 3)" in str(error)
    assert "bye" in str(error.fields["stderr"])


# ---- every provider labels a problem by its kind, never by its wording -----------------


def _providers(spec: LaunchSpec) -> list[JsonRpcDriver[Incoming]]:
    from corral.pipeline.events import AgentInstallation, InstallationSource
    from corral.pipeline.telemetry import NULL_TELEMETRY
    from corral.sources.acp import AcpDriver, AcpRecipe
    from corral.sources.appserver import AppServerDriver
    from corral.sources.codex import CodexDriver
    from corral.sources.copilot._driver import CopilotDriver

    installation = AgentInstallation(
        id="x", name="X", executable_path=sys.executable, source=InstallationSource.PINNED
    )
    acp = AcpDriver(
        installation=installation, launch=spec, recipe=AcpRecipe(), telemetry=NULL_TELEMETRY
    )
    return [
        cast(JsonRpcDriver[Incoming], acp),
        AppServerDriver(installation, spec, NULL_TELEMETRY),
        CopilotDriver(installation, spec, NULL_TELEMETRY),
        CodexDriver(installation, spec, NULL_TELEMETRY),
    ]


@pytest.mark.parametrize("kind", list(ProblemKind))
async def test_every_json_rpc_source_labels_a_problem_by_its_kind(
    tmp_path: object, kind: ProblemKind
) -> None:
    problem = WireProblem(kind=kind, reason="a field was too long", raw="x")  # wording misleads
    for driver in _providers(_spec(tmp_path)):
        (event,) = await driver._translate(problem)
        assert isinstance(event, Emitted), type(driver).__name__
        assert event.problem == kind.value, type(driver).__name__


async def test_acp_translates_a_notification_now_as_its_translate_would(tmp_path: object) -> None:
    (acp, *_) = _providers(_spec(tmp_path))
    (general, *_) = _providers(_spec(tmp_path))
    chunk = {"sessionUpdate": "agent_message_chunk", "content": {"type": "text", "text": "hi"}}
    notes = [
        RpcNotification("session/update", {"sessionId": "s", "update": chunk}),
        RpcNotification("session/update", {"sessionId": "s", "update": {"sessionUpdate": "?"}}),
        RpcNotification("x/other", None),
    ]
    delivered = _Events()
    await acp._deliver_batch(notes, delivered)
    translated = [event for note in notes for event in await general._translate(note)]
    assert delivered.events == translated and len(translated) == 3
    assert acp._translate_now(WireProblem(kind=ProblemKind.BAD_SHAPE, reason="r")) is None


class _Recorder(_Counts):
    def __init__(self) -> None:
        super().__init__()
        self.lines: list[tuple[str, bytes]] = []

    def wire_lines(self, session_id: str, direction: str, lines: Sequence[bytes]) -> None:
        self.lines += [(direction, line) for line in lines]


async def test_the_wire_recording_keeps_each_message_as_read_and_no_problem() -> None:
    from corral.pipeline.channels import Channel

    recorder = _Recorder()
    telemetry = SessionTelemetry([recorder], "s1", "kit-agent")
    clean = _notification("a") + _notification("b")  # a read with no problem in it
    mixed = b"not json\n" + _notification("c") + b"[1]\n" + _notification("d")
    incoming: Channel[Incoming] = Channel(16, name="incoming")
    process = cast(AgentProcess, _Lines(clean, mixed))
    await JsonRpcPeer(process, telemetry=telemetry).pump(incoming)
    assert [item async for item in incoming][-1] == RpcNotification("n", {"t": "d"})
    wanted = [_notification(text).rstrip(b"\n") for text in "abcd"]
    assert recorder.lines == [("in", line) for line in wanted]
