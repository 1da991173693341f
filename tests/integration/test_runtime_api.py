"""The in-process Python API: open, prompt, events, close; discovery; isolation."""

from __future__ import annotations

import asyncio
import os
import stat
from pathlib import Path

import pytest
from corral.actors.runtime import Runtime
from corral.pipeline.driver import DriverCommand, EventSink, Handshake, LaunchSpec
from corral.pipeline.errors import CorralError, ErrorKind
from corral.pipeline.events import (
    AgentDetails,
    AgentInstallation,
    Event,
    InstallationSource,
    SessionStatus,
    TextDelta,
    TurnEnded,
)
from corral.pipeline.telemetry import SessionTelemetry
from corral.sources.catalog import Catalog, CatalogEntry
from corral.sources.mock import MockDriver, parse_script

from .helpers import until


async def collect(session: object) -> list[Event]:
    return [event async for event in session.events()]  # type: ignore[attr-defined]


async def test_open_prompt_and_read_events_until_close() -> None:
    async with Runtime(mock=parse_script({})) as rt:
        session = await rt.open("mock", dir=".")
        assert session.status is SessionStatus.IDLE
        reader = asyncio.create_task(collect(session))
        await session.prompt("ping")
        await until(lambda: session.status is SessionStatus.IDLE and session.info().id == "s1")
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
        await until(lambda: healthy.status is SessionStatus.IDLE)
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
