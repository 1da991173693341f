"""Every agent request gets an answer: what corral does not serve is declined at once.

A request the agent waits on is either surfaced to the app or declined in a
shape the agent understands, with a Diagnostic naming it under
`corral/declined`; the turn then goes on to its end. Shown through real
subprocess fakes: native Copilot (`tests/support/fake_copilot.py`) and the
app-server (`tests/support/fake_appserver`). ACP's are in
`test_acp_sdk_agents.py` (the scripted agent's `unsupported` turn), Codex's
in `tests/unit/codex/test_unanswered_requests.py`.
"""

from __future__ import annotations

import json
import sys
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from corral.actors.runtime import Runtime
from corral.pipeline.events import (
    Completed,
    Diagnostic,
    DiagnosticLevel,
    Event,
    TextDelta,
    TurnEnded,
)
from corral.sources.appserver import catalog_entry as appserver_entry
from corral.sources.catalog import Catalog
from corral.sources.copilot import catalog_entry as copilot_entry
from corral.sources.copilot._declines import DECLINES

from tests.support.fake_appserver.drive import REPO_ROOT, Watcher, fake_ref

ENV = (("PYTHONPATH", str(REPO_ROOT)),)


def said(events: list[Event]) -> str:
    return "".join(e.kind.text for e in events if isinstance(e.kind, TextDelta))


def declined(events: list[Event]) -> dict[str, DiagnosticLevel]:
    return {
        str(e.extensions["corral/declined"]): e.kind.level
        for e in events
        if isinstance(e.kind, Diagnostic) and "corral/declined" in e.extensions
    }


def completed(events: list[Event]) -> bool:
    end = events[-1].kind
    return isinstance(end, TurnEnded) and isinstance(end.stop, Completed)


@pytest.fixture
async def copilot(tmp_path: Path) -> AsyncIterator[Watcher]:
    launcher = tmp_path / "fake-copilot"
    launcher.write_text(f'#!/bin/sh\nexec "{sys.executable}" -m tests.support.fake_copilot\n')
    launcher.chmod(0o755)
    environ = {"CORRAL_COPILOT_NATIVE_BIN": str(launcher), "PATH": "/usr/bin:/bin"}
    catalog = Catalog([copilot_entry()])
    async with Runtime(catalog=catalog, environ=environ, transcripts=False) as rt:
        session = await rt.open("copilot-native", str(tmp_path), env=ENV)
        yield Watcher(session)
        await session.close()


async def test_every_waiting_copilot_request_is_declined_and_the_turn_ends(
    copilot: Watcher,
) -> None:
    for event_type, (method, refusal, _) in DECLINES.items():
        await copilot.session.prompt(f"WAIT {event_type}")
        events = await copilot.until("TurnEnded")
        assert completed(events), event_type
        assert declined(events) == {event_type: DiagnosticLevel.WARNING}
        # The fake says which call resolved its request, with what.
        expected = {"requestId": "req-1", "sessionId": "fake-session", **refusal}
        assert said(events) == f"resolved by {method} {json.dumps(expected, sort_keys=True)}"


async def test_a_copilot_server_request_corral_does_not_serve_gets_method_not_found(
    copilot: Watcher,
) -> None:
    await copilot.session.prompt("CLIENT")
    events = await copilot.until("TurnEnded")
    assert completed(events)
    assert said(events) == "client error -32601"
    assert declined(events) == {"client/pickColor": DiagnosticLevel.INFO}


async def test_an_appserver_request_corral_does_not_serve_is_declined(tmp_path: Path) -> None:
    async with Runtime(catalog=Catalog([appserver_entry()]), transcripts=False) as rt:
        watcher = Watcher(await rt.open(fake_ref(), str(tmp_path), env=ENV))
        await watcher.session.prompt("ASK_CLIENT please")
        events = await watcher.until("TurnEnded")
        assert completed(events)
        assert declined(events) == {"client/pickColor": DiagnosticLevel.INFO}
        assert said(events) == "the client said: corral does not serve client/pickColor"
        await watcher.session.close()
