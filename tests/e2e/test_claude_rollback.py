"""Rollback and effort on the real `claude` CLI, driven by corral, against the mock model.

Rollback: a turn that wrote a file is rolled back with its files; the file
is gone, the session goes on (same session, its sequence continuing, a new
resume token: the CLI's forked session), and the next prompt's request to
the model no longer holds the dropped turn while it still holds the kept
one. Effort: the level set at open and the one set live reach the model
request (`output_config.effort`). The fixtures and the schema-checked
event stream are tests/e2e/test_claude.py's.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest
from corral.actors.runtime import Runtime
from corral.pipeline.commands import RollbackScope
from corral.pipeline.events import Completed, PermissionChoice

from tests.e2e.test_claude import Setup, open_session, permission
from tests.support.mockmodel import MockModelServer
from tests.support.realagents import require_agent

pytestmark = [pytest.mark.e2e, pytest.mark.slow]


@pytest.fixture(scope="module")
def claude_bin() -> Path:
    return require_agent("claude")


@pytest.fixture
def setup(tmp_path: Path, claude_bin: Path) -> Iterator[Setup]:
    with MockModelServer() as server:
        yield Setup(tmp_path, server, claude_bin)


@pytest.fixture
async def runtime(setup: Setup) -> AsyncIterator[Runtime]:
    async with setup.runtime() as runtime:
        yield runtime


def last_conversation(setup_: Setup) -> str:
    """The messages of the last request to the model that offered tools (not a side call)."""
    requests = [r for r in setup_.mock.model_requests() if r.body.get("tools")]
    return json.dumps(requests[-1].body["messages"])


async def test_rollback_drops_the_last_turn_and_restores_its_files(
    runtime: Runtime, setup: Setup
) -> None:
    session, stream = await open_session(runtime, setup)
    first_token = session.info().resume_token
    await session.prompt("CORRAL_ECHO kept-alpha")
    assert (await stream.turn()).stop == Completed()
    written = setup.workdir / "dropped.txt"
    await session.prompt(f"CORRAL_WRITE: {written} dropped-gamma")
    assert (await stream.turn(permission(PermissionChoice.ALLOW_ONCE))).stop == Completed()
    assert written.read_text().strip() == "dropped-gamma"
    assert "dropped-gamma" in last_conversation(setup)

    await session.rollback(1, RollbackScope.CONVERSATION_AND_FILES)
    assert not written.exists()
    token = session.info().resume_token
    assert token is not None and token != first_token

    await session.prompt("CORRAL_ECHO after-rollback")
    assert (await stream.turn()).stop == Completed()
    sent = last_conversation(setup)
    assert "kept-alpha" in sent and "after-rollback" in sent
    assert "dropped-gamma" not in sent and "dropped.txt" not in sent
    sequences = [event.sequence for event in stream.seen]
    assert sequences == list(range(sequences[0], sequences[0] + len(sequences)))
    assert session.failure is None
    await session.close()


async def test_effort_at_open_and_live_reaches_the_model(runtime: Runtime, setup: Setup) -> None:
    session, stream = await open_session(runtime, setup, configure=(("effort", "high"),))
    await session.prompt("CORRAL_ECHO one")
    assert (await stream.turn()).stop == Completed()
    assert setup.mock.model_requests()[-1].body["output_config"]["effort"] == "high"
    info = await session.configure("effort", "low")
    assert dict(info.options)["effort"] == "low"
    await session.prompt("CORRAL_ECHO two")
    assert (await stream.turn()).stop == Completed()
    assert setup.mock.model_requests()[-1].body["output_config"]["effort"] == "low"
    await session.close()
