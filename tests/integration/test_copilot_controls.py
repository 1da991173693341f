"""Copilot-native's live settings, compact, plan and todos, against the fake Copilot.

The fake (`tests/support/fake_copilot.py`, a real subprocess on the SDK
server's framed JSON-RPC) answers the calls as Copilot 1.0.102 does:
`session.model.list`, `session.model.switchTo` and `session.mode.set` emit
their change events before answering, `session.history.compact` emits the
compaction events before answering, and the plan and todo signals carry no
content (`session.plan.read` / `session.plan.readSqlTodos` hold it). Every
corral event is checked against the line-protocol schema by the watcher.
"""

from __future__ import annotations

import sys
from collections.abc import AsyncIterator
from pathlib import Path
from typing import TypeVar

import pytest
from corral.actors.runtime import Runtime
from corral.pipeline.errors import CorralError, ErrorKind
from corral.pipeline.events import (
    Capability,
    Completed,
    ContextCompacted,
    Diagnostic,
    DiagnosticLevel,
    Event,
    Failed,
    PlanEntry,
    PlanStatus,
    PlanUpdated,
    TurnEnded,
)
from corral.sources.catalog import Catalog
from corral.sources.copilot import catalog_entry

from tests.support.fake_appserver.drive import REPO_ROOT, Watcher

ENV = (("PYTHONPATH", str(REPO_ROOT)),)
K = TypeVar("K")


@pytest.fixture
async def runtime(tmp_path: Path) -> AsyncIterator[Runtime]:
    launcher = tmp_path / "fake-copilot"
    launcher.write_text(f'#!/bin/sh\nexec "{sys.executable}" -m tests.support.fake_copilot\n')
    launcher.chmod(0o755)
    environ = {"CORRAL_COPILOT_NATIVE_BIN": str(launcher), "PATH": "/usr/bin:/bin"}
    catalog = Catalog([catalog_entry()])
    async with Runtime(catalog=catalog, environ=environ, transcripts=False) as rt:
        yield rt


async def open_copilot(runtime: Runtime, tmp_path: Path, **options: object) -> Watcher:
    work = tmp_path / "work"
    work.mkdir(exist_ok=True)
    return Watcher(await runtime.open("copilot-native", str(work), env=ENV, **options))


def kinds(events: list[Event], kind: type[K]) -> list[K]:
    return [e.kind for e in events if isinstance(e.kind, kind)]


async def test_model_and_mode_are_live_options(runtime: Runtime, tmp_path: Path) -> None:
    copilot = await open_copilot(runtime, tmp_path)
    info = copilot.session.info()
    options = {o.id: o for o in info.details.config_options}
    assert [c.value for c in options["model"].choices] == ["fake-model", "fake-other"]
    assert [c.value for c in options["mode"].choices] == ["interactive", "plan"]
    assert options["model"].live and options["mode"].live
    assert dict(info.options) == {"model": "fake-model", "mode": "interactive"}
    assert Capability.COMPACT in info.details.capabilities.features
    await copilot.session.close()


async def test_configure_switches_the_model_and_the_mode(runtime: Runtime, tmp_path: Path) -> None:
    copilot = await open_copilot(runtime, tmp_path)
    info = await copilot.session.configure("model", "fake-other")
    assert dict(info.options)["model"] == "fake-other"
    info = await copilot.session.configure("mode", "plan")
    assert dict(info.options)["mode"] == "plan"
    await copilot.session.prompt("OPENED")  # the session goes on
    await copilot.until("TurnEnded")
    assert dict(copilot.session.info().options) == {"model": "fake-other", "mode": "plan"}
    await copilot.session.close()


async def test_each_configure_is_answered_with_its_own_value(
    runtime: Runtime, tmp_path: Path
) -> None:
    copilot = await open_copilot(runtime, tmp_path)
    info = await copilot.session.configure("mode", "interactive")  # the mode it is in
    assert dict(info.options)["mode"] == "interactive"
    for mode in ("plan", "interactive", "interactive", "plan"):
        info = await copilot.session.configure("mode", mode)
        assert dict(info.options)["mode"] == mode
    for model in ("fake-model", "fake-other", "fake-model"):
        info = await copilot.session.configure("model", model)
        assert dict(info.options)["model"] == model
    await copilot.session.close()


async def test_a_model_chosen_at_open_is_switched_to(runtime: Runtime, tmp_path: Path) -> None:
    copilot = await open_copilot(
        runtime, tmp_path, configure=(("model", "fake-other"), ("mode", "plan"))
    )
    assert dict(copilot.session.info().options) == {"model": "fake-other", "mode": "plan"}
    await copilot.session.close()


async def test_a_mode_copilot_does_not_have_is_refused(runtime: Runtime, tmp_path: Path) -> None:
    copilot = await open_copilot(runtime, tmp_path)
    for mode in ("yolo", "autopilot"):  # autopilot: Copilot's, but it acts without asking
        with pytest.raises(CorralError) as failed:
            await copilot.session.configure("mode", mode)
        assert failed.value.kind is ErrorKind.INVALID_CONFIGURATION
    await copilot.session.close()


async def test_compact_is_a_turn_that_compacts_the_context(
    runtime: Runtime, tmp_path: Path
) -> None:
    copilot = await open_copilot(runtime, tmp_path)
    await copilot.session.compact()
    events = await copilot.until("TurnEnded")
    assert len(kinds(events, ContextCompacted)) == 1
    compacted = next(e for e in events if isinstance(e.kind, ContextCompacted))
    assert compacted.extensions["copilot/compaction"]["tokensRemoved"] == 700
    last = events[-1].kind
    assert isinstance(last, TurnEnded) and last.stop == Completed()
    await copilot.session.close()


async def test_a_compact_copilot_refuses_ends_failed(runtime: Runtime, tmp_path: Path) -> None:
    copilot = await open_copilot(runtime, tmp_path)
    await copilot.session.prompt("NOTHING")
    await copilot.until("TurnEnded")
    await copilot.session.compact()
    events = await copilot.until("TurnEnded")
    assert kinds(events, ContextCompacted) == []
    warnings = [d for d in kinds(events, Diagnostic) if d.level is DiagnosticLevel.WARNING]
    assert warnings, "the failed compaction is a Warning"
    last = events[-1].kind
    assert isinstance(last, TurnEnded) and isinstance(last.stop, Failed)
    assert "Nothing to compact" in last.stop.message
    await copilot.session.close()


async def test_plan_and_todo_signals_are_read_into_plan_updates(
    runtime: Runtime, tmp_path: Path
) -> None:
    copilot = await open_copilot(runtime, tmp_path)
    await copilot.session.prompt("PLAN now")
    events = await copilot.until("TurnEnded")
    while len(kinds(events, PlanUpdated)) < 2:  # the reads are answered after the signals
        events.append(await copilot.next())
    plans = [e for e in events if isinstance(e.kind, PlanUpdated)]
    by_source = {("copilot/plan" in e.extensions): e for e in plans}
    plan_file, todos = by_source[True], by_source[False]
    assert plan_file.kind.entries == (
        PlanEntry(text="read the code", status=PlanStatus.COMPLETED),
        PlanEntry(text="write the fix", status=PlanStatus.PENDING),
    )
    assert "some prose" in plan_file.extensions["copilot/plan"]
    assert todos.kind.entries == (
        PlanEntry(text="read the code", status=PlanStatus.COMPLETED),
        PlanEntry(text="write the fix", status=PlanStatus.IN_PROGRESS),
        PlanEntry(text="ship it", status=PlanStatus.PENDING),
    )
    signals = [d for d in kinds(events, Diagnostic) if "changed" in d.message]
    assert signals == [], "the signals are not Info notes any more"
    await copilot.session.close()
