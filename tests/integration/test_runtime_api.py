"""The in-process Python API: open, prompt, events, close (also of a stuck agent);
the mock's script flags as a session sees them; discovery; isolation."""

from __future__ import annotations

import asyncio
import os
import stat
from pathlib import Path

import pytest
from corral.actors.engine import EngineSettings
from corral.actors.runtime import Runtime, RuntimeSettings
from corral.actors.session import ActorSettings
from corral.pipeline.driver import DriverCommand, EventSink, Handshake, LaunchSpec
from corral.pipeline.errors import CorralError, ErrorKind
from corral.pipeline.events import (
    AgentDetails,
    AgentInstallation,
    AgentOrigin,
    Cancelled,
    Capability,
    Completed,
    CompletionSource,
    ContextCompacted,
    Diagnostic,
    Event,
    InstallationSource,
    Queued,
    SessionStatus,
    StatusChanged,
    TextDelta,
    TurnEnded,
    TurnStarted,
)
from corral.pipeline.telemetry import SessionTelemetry
from corral.sources.catalog import Catalog, CatalogEntry
from corral.sources.mock import MockDriver, parse_script

from tests.support.waiting import idle, until

from .helpers import GateSink, text_turn


async def collect(session: object) -> list[Event]:
    return [event async for event in session.events()]  # type: ignore[attr-defined]


async def test_open_prompt_and_read_events_until_close() -> None:
    async with Runtime(mock=parse_script({})) as rt:
        session = await rt.open("mock", dir=".")
        assert session.status is SessionStatus.IDLE
        reader = asyncio.create_task(collect(session))
        await session.prompt("ping")
        await idle(session)
        assert session.info().id == "s1"
        await session.close()
        events = await reader
    texts = [e.kind.text for e in events if isinstance(e.kind, TextDelta)]
    assert texts == ["You said: ping"]
    assert session.failure is None
    with pytest.raises(CorralError) as later:
        await session.prompt("again")
    assert later.value.kind is ErrorKind.SESSION_CLOSED


async def test_an_agent_death_ends_the_stream_and_reports_the_failure() -> None:
    script = parse_script({"turns": [["Die"]]})
    async with Runtime(mock=script) as rt:
        session = await rt.open("mock", dir=".")
        reader = asyncio.create_task(collect(session))
        await session.prompt("go")
        events = await asyncio.wait_for(reader, 10)
    assert isinstance(events[-2].kind, TurnEnded)
    assert session.failure is not None and session.failure.kind is ErrorKind.PROCESS_EXITED


SLEEPY_TURN = [{"Sleep": 60_000}, {"End": {"Completed": {"source": "Protocol"}}}]


async def play(
    script: dict[str, object], scenario: object, settings: RuntimeSettings | None = None
) -> list[Event]:
    """Open a mock session, run `scenario(session)`, close, and return every event."""
    async with Runtime(mock=parse_script(script), settings=settings) as rt:
        session = await rt.open("mock", dir=".")
        reader = asyncio.create_task(collect(session))
        async with asyncio.timeout(10):
            await scenario(session)  # type: ignore[operator]
            await session.close()
            return await reader


def stops(events: list[Event]) -> list[object]:
    return [e.kind.stop for e in events if isinstance(e.kind, TurnEnded)]


async def test_a_mock_with_steer_rejects_sends_the_steered_prompt_to_the_head_of_the_queue() -> (
    None
):
    deliveries = []

    async def scenario(session: object) -> None:
        await session.prompt("long job")  # type: ignore[attr-defined]
        deliveries.append(await session.prompt("also this"))  # type: ignore[attr-defined]
        await session.cancel()  # type: ignore[attr-defined]
        await idle(session)  # type: ignore[arg-type]

    events = await play({"steer": True, "steer_rejects": True, "turns": [SLEEPY_TURN]}, scenario)
    assert deliveries[0].kind == Queued(0)
    texts = [e.kind.text for e in events if isinstance(e.kind, TextDelta)]
    assert texts == ["You said: also this"]  # the rejected steer ran as the next turn


async def test_a_mock_with_compact_compacts_in_an_agent_turn() -> None:
    async def scenario(session: object) -> None:
        assert Capability.COMPACT in session.info().details.capabilities  # type: ignore[attr-defined]
        await session.compact()  # type: ignore[attr-defined]
        await idle(session)  # type: ignore[arg-type]

    events = await play({"compact": True}, scenario)
    turn = [e.kind for e in events if not isinstance(e.kind, StatusChanged)]
    assert turn == [TurnStarted(AgentOrigin()), ContextCompacted(), TurnEnded(stop=Completed())]


async def test_a_mock_without_permissions_advertises_neither_permissions_nor_questions() -> None:
    async def scenario(session: object) -> None:
        features = session.info().details.capabilities  # type: ignore[attr-defined]
        assert Capability.PERMISSIONS not in features and Capability.QUESTIONS not in features

    await play({"permissions": False}, scenario)


async def test_a_mock_with_resume_offers_a_token_and_keeps_the_one_it_resumes() -> None:
    async with Runtime(mock=parse_script({"resume": True})) as rt:
        fresh = await rt.open("mock", dir=".")
        resumed = await rt.open("mock", dir=".", resume="earlier-token")
        assert Capability.RESUME in fresh.info().details.capabilities
        assert fresh.info().resume_token == "mock-s1"
        assert resumed.info().resume_token == "earlier-token"
        await fresh.close()
        await resumed.close()


async def test_a_non_deterministic_mock_turn_ends_by_inference_after_the_quiet_window() -> None:
    quiet = RuntimeSettings(engine=EngineSettings(quiet_prompt_turn=0.2))

    async def scenario(session: object) -> None:
        await session.prompt("hello")  # type: ignore[attr-defined]
        await idle(session)  # type: ignore[arg-type]

    events = await play({"deterministic": False}, scenario, quiet)
    assert stops(events) == [Completed(CompletionSource.INFERRED)]


async def test_a_mock_that_ignores_cancel_has_its_turn_ended_by_corral_after_the_grace() -> None:
    grace = RuntimeSettings(engine=EngineSettings(cancel_grace=0.2))

    async def scenario(session: object) -> None:
        await session.prompt("long job")  # type: ignore[attr-defined]
        await session.cancel()  # type: ignore[attr-defined]
        await idle(session)  # type: ignore[arg-type]

    events = await play({"ignore_cancel": True, "turns": [SLEEPY_TURN]}, scenario, grace)
    assert stops(events) == [Cancelled()]
    timeouts = [e for e in events if isinstance(e.kind, Diagnostic)]
    assert [e.extensions.get("corral/cancel_timeout") for e in timeouts] == [True]


def group_alive(pgid: int) -> bool:
    """Whether any process of the group is left (zombies count as gone)."""
    try:
        os.killpg(pgid, 0)
    except ProcessLookupError:
        return False
    members = []
    for entry in Path("/proc").iterdir():
        try:
            fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
        except (FileNotFoundError, NotADirectoryError, ProcessLookupError, IndexError):
            continue
        if int(fields[2]) == pgid:  # state, ppid, pgrp
            members.append(fields[0])
    return any(state != "Z" for state in members)


async def test_close_returns_within_its_grace_and_kills_a_stuck_agent_behind_a_slow_consumer() -> (
    None
):
    grace = 1.0
    settings = RuntimeSettings(
        actor=ActorSettings(
            driver_capacity=4, events_capacity=8, sink_capacity=8, close_grace=grace
        )
    )
    script = parse_script({**text_turn(100_000), "process": True, "ignore_close": True})
    gate = GateSink()  # the slow consumer: it takes nothing until the gate opens
    async with Runtime(mock=script, settings=settings) as rt:
        session = await rt.open("mock", dir=".", extra_sinks=[gate])
        agent_pid = session.agent_pid
        assert agent_pid is not None
        driver_events = session.channels()[0]
        await session.prompt("go")
        await until(lambda: driver_events.statistics().waiting_senders == 1)
        loop = asyncio.get_running_loop()
        started = loop.time()
        try:
            async with asyncio.timeout(grace + 1.0):
                await session.close()
        finally:
            gate.gate.set()
        took = loop.time() - started
        await asyncio.wait_for(session.wait_closed(), 10)
    # EOF and SIGTERM are ignored, so only SIGKILL ended it, at the grace.
    assert took >= grace * 0.9
    assert not group_alive(agent_pid)


class _CrashingDriver(MockDriver):
    """A driver with a bug: its read loop raises."""

    async def run(self, events_out: EventSink) -> None:
        raise RuntimeError("a bug in a source")


def _entry(agent_id: str, crash: bool) -> CatalogEntry:
    script = parse_script({})

    def make(installation: AgentInstallation, spec: LaunchSpec, telemetry: SessionTelemetry):  # type: ignore[no-untyped-def]
        return _CrashingDriver(script, spec) if crash else MockDriver(script, spec)

    return CatalogEntry(
        id=agent_id, name=agent_id, executable="", install_hint="", make_driver=make, builtin=True
    )


async def test_a_session_that_crashes_inside_corral_does_not_disturb_another() -> None:
    catalog = Catalog([_entry("broken", crash=True), _entry("fine", crash=False)])
    async with Runtime(catalog=catalog) as rt:
        healthy = await rt.open("fine", dir=".")
        broken = await rt.open("broken", dir=".")
        await asyncio.wait_for(broken.wait_closed(), 10)
        assert broken.failure is not None and broken.failure.kind is ErrorKind.PROTOCOL_FAILED
        reader = asyncio.create_task(collect(healthy))
        await healthy.prompt("still here?")
        await idle(healthy)
        await healthy.close()
        texts = [e.kind.text for e in await reader if isinstance(e.kind, TextDelta)]
    assert texts == ["You said: still here?"]


def _fake_agent(folder: Path, name: str, version: str) -> Path:
    path = folder / name
    path.write_text(f"#!/bin/sh\necho '{version}'\n")
    path.chmod(path.stat().st_mode | stat.S_IXUSR)
    return path


class _NeverDriver:
    async def start(self, tasks: asyncio.TaskGroup) -> Handshake:
        raise AssertionError("not started in discovery tests")

    async def run(self, events_out: EventSink) -> None: ...

    async def send(self, command: DriverCommand) -> None: ...

    async def stop(self, grace: float) -> None: ...


def _real_entry(agent_id: str) -> CatalogEntry:
    return CatalogEntry(
        id=agent_id,
        name=f"Agent {agent_id}",
        executable=agent_id,
        install_hint=f"npm install -g {agent_id}",
        make_driver=lambda installation, spec, telemetry: _NeverDriver(),
        details=AgentDetails(),
    )


async def test_discover_finds_an_override_and_reports_where_it_looked_for_the_rest(
    tmp_path: Path,
) -> None:
    exe = _fake_agent(tmp_path, "zed-agent", "zed-agent 1.2.3")
    env = {"PATH": "/nonexistent", "HOME": str(tmp_path), "CORRAL_FOUND_BIN": str(exe)}
    catalog = Catalog([_real_entry("found"), _real_entry("lost")])
    async with Runtime(catalog=catalog, environ=env) as rt:
        report = await rt.discover()
        details = await rt.probe("found")
        with pytest.raises(CorralError) as missing:
            await rt.open("lost", dir=str(tmp_path))
    assert [(a.id, a.source) for a in report.agents] == [("found", InstallationSource.ENV_OVERRIDE)]
    lost = report.missing[0]
    assert lost.install_hint == "npm install -g lost"
    assert "$CORRAL_LOST_BIN (not set)" in lost.searched
    assert any(entry.startswith("PATH") for entry in lost.searched)
    assert details.version == "zed-agent 1.2.3"
    assert missing.value.kind is ErrorKind.NOT_INSTALLED
    assert missing.value.fields["install_hint"] == "npm install -g lost"


async def test_discover_finds_an_agent_on_path(tmp_path: Path) -> None:
    _fake_agent(tmp_path, "found", "1.0")
    env = {"PATH": str(tmp_path), "HOME": str(tmp_path)}
    async with Runtime(catalog=Catalog([_real_entry("found")]), environ=env) as rt:
        report = await rt.discover()
    assert report.agents[0].executable_path == os.path.join(str(tmp_path), "found")
    assert report.agents[0].source is InstallationSource.PATH
