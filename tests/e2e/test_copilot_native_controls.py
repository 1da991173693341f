"""corral configuring and compacting the real Copilot CLI on its native wire, against the mock.

Copilot (`@github/copilot`, pinned by `tests/support/realagents.py`) runs
in its SDK server mode through the `copilot-native` catalog entry,
offline (`COPILOT_OFFLINE=true` and a BYOK provider pointing at the mock
model), as in `test_copilot_native.py`. Under a BYOK provider Copilot
lists no models, so the `model` option is the current one alone; `mode`
is `interactive` or `plan` (never `autopilot`). Every event is checked against the line-protocol
schema by the watcher.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest
from corral.actors.runtime import Runtime
from corral.pipeline.events import (
    Completed,
    ContextCompacted,
    Diagnostic,
    DiagnosticLevel,
    Failed,
    TurnEnded,
)
from corral.sources.catalog import Catalog
from corral.sources.copilot import catalog_entry
from corral.sources.discovery import env_override_name

from tests.support.fake_appserver.drive import Watcher
from tests.support.mockmodel import MockModelServer
from tests.support.realagents import AgentSandbox, require_agent

pytestmark = pytest.mark.e2e

TURN_TIMEOUT = 180.0


@pytest.fixture
def mock() -> Iterator[MockModelServer]:
    with MockModelServer() as server:
        yield server


@pytest.fixture
def sandbox(tmp_path: Path, mock: MockModelServer) -> AgentSandbox:
    require_agent("copilot")
    return AgentSandbox(root=tmp_path, model_url=mock.url, permission="ask")


@pytest.fixture
async def copilot(sandbox: AgentSandbox) -> AsyncIterator[Watcher]:
    environ = sandbox.env("copilot")
    environ[env_override_name("copilot-native")] = str(require_agent("copilot"))
    async with Runtime(catalog=Catalog([catalog_entry()]), environ=environ) as rt:
        env = tuple(sandbox.env("copilot").items())
        session = await rt.open("copilot-native", str(sandbox.workdir), env=env)
        yield Watcher(session, timeout=TURN_TIMEOUT)
        await session.close()


async def test_mode_is_switched_by_session_mode_set(copilot: Watcher) -> None:
    info = copilot.session.info()
    options = {o.id: o for o in info.details.config_options}
    assert [c.value for c in options["mode"].choices] == ["interactive", "plan"]
    assert dict(info.options)["mode"] == "interactive"
    assert dict(info.options)["model"] in [c.value for c in options["model"].choices]
    info = await copilot.session.configure("mode", "plan")
    assert dict(info.options)["mode"] == "plan"
    info = await copilot.session.configure("mode", "interactive")
    assert dict(info.options)["mode"] == "interactive"
    info = await copilot.session.configure("mode", "interactive")  # the mode it is in
    assert dict(info.options)["mode"] == "interactive"


async def test_the_current_model_is_switched_to(copilot: Watcher) -> None:
    current = dict(copilot.session.info().options)["model"]
    info = await copilot.session.configure("model", current)
    assert dict(info.options)["model"] == current


async def test_compact_with_nothing_to_compact_ends_failed_with_copilots_word(
    copilot: Watcher,
) -> None:
    await copilot.session.compact()
    events = await copilot.until("TurnEnded")
    last = events[-1].kind
    assert isinstance(last, TurnEnded) and isinstance(last.stop, Failed)
    assert "Nothing to compact" in last.stop.message
    warnings = [
        e.kind
        for e in events
        if isinstance(e.kind, Diagnostic) and e.kind.level is DiagnosticLevel.WARNING
    ]
    assert any("compaction failed" in w.message for w in warnings)


async def test_compact_after_a_turn_compacts_or_says_why_not(copilot: Watcher) -> None:
    await copilot.session.prompt("CORRAL_ECHO hi")
    await copilot.until("TurnEnded")
    await copilot.session.compact()
    events = await copilot.until("TurnEnded")
    last = events[-1].kind
    assert isinstance(last, TurnEnded)
    compacted = [e for e in events if isinstance(e.kind, ContextCompacted)]
    if last.stop == Completed():
        assert len(compacted) == 1
    else:
        assert isinstance(last.stop, Failed) and last.stop.message
        assert compacted == []
