"""`thread/closed` from a real (fake) app-server process: the turn ends, then the session.

The fake app-server (`tests/support/fake_appserver`, a subprocess that
checks its wire against the seed) closes the thread in the middle of a
turn when the prompt says `GOODBYE`. Every event is schema-checked by
the watcher and every wait is bounded.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from corral.actors.runtime import Runtime
from corral.pipeline.errors import ErrorKind
from corral.pipeline.events import Failed, TurnEnded
from corral.sources.appserver import catalog_entry
from corral.sources.catalog import Catalog

from tests.support.fake_appserver.drive import REPO_ROOT, Watcher, fake_ref, kind_name

ENV = (("PYTHONPATH", str(REPO_ROOT)),)


@pytest.fixture
async def runtime() -> AsyncIterator[Runtime]:
    async with Runtime(catalog=Catalog([catalog_entry()])) as rt:
        yield rt


async def test_a_thread_closed_mid_turn_ends_the_turn_then_the_session(
    runtime: Runtime, tmp_path: Path
) -> None:
    session = await runtime.open(fake_ref(), str(tmp_path), env=ENV)
    watcher = Watcher(session)
    await session.prompt("GOODBYE now")
    events = await watcher.until("TurnEnded")
    end = events[-1].kind
    assert isinstance(end, TurnEnded) and isinstance(end.stop, Failed)
    assert events[-1].extensions.get("appserver/status") == "closed"  # the driver's end
    rest = await watcher.rest()
    assert "TurnStarted" not in [kind_name(e) for e in rest]
    await session.wait_closed()
    failure = session.failure
    assert failure is not None and failure.kind is ErrorKind.SESSION_CLOSED
