"""The real `claude` CLI run whole inside corral's sandbox (`open`'s `sandbox: true`).

Claude Code (the pinned npm install, tests/support/realagents.py) runs
against the project's mock model (tests/support/mockmodel). The mock makes
it call its Bash tool; corral allows the call (the app answers AllowOnce),
so nothing but the sandbox stands between the command and the disk: a
write outside the session directory fails with a read-only file system,
a write inside it succeeds. The same write outside succeeds when the
agent runs without the sandbox, so the test shows the sandbox, not the
CLI, refusing. Every event is validated against the line-protocol schema.
"""

from __future__ import annotations

import os
import secrets
from collections.abc import Iterator
from pathlib import Path

import pytest
from corral.pipeline.events import Completed, PermissionChoice, ToolStatus, ToolUpdated
from corral.sources._sandbox import probe

from tests.e2e.test_claude import Setup, open_session, permission
from tests.support.mockmodel import MockModelServer
from tests.support.realagents import require_agent

pytestmark = pytest.mark.e2e


@pytest.fixture(scope="module")
def claude_bin() -> Path:
    found = probe(os.environ)
    if found.bwrap is None:
        if os.environ.get("CI"):
            pytest.fail(f"CI must have a working bubblewrap (.ci/bubblewrap): {found.reason}")
        pytest.skip(found.reason)
    return require_agent("claude")


@pytest.fixture
def mock() -> Iterator[MockModelServer]:
    with MockModelServer() as server:
        yield server


@pytest.mark.parametrize("sandboxed", [True, False])
async def test_claude_in_the_sandbox_cannot_write_outside_the_session_dir(
    tmp_path: Path, mock: MockModelServer, claude_bin: Path, sandboxed: bool
) -> None:
    setup = Setup(tmp_path, mock, claude_bin)
    outside = tmp_path / "outside"
    outside.mkdir()
    target = outside / f"outside-{secrets.token_hex(4)}"
    async with setup.runtime() as runtime:
        session, stream = await open_session(runtime, setup, sandbox=sandboxed)
        sandbox = session.info().details.sandbox
        assert sandbox is not None and sandbox.agent is sandboxed

        await session.prompt(f"CORRAL_TOOL: touch {target}")
        end = await stream.turn(permission(PermissionChoice.ALLOW_ONCE))
        assert end.stop == Completed()
        if sandboxed:
            assert not target.exists()
            assert stream.text() == "Tool said: Exit code 1", stream.text()
            last = stream.kinds(ToolUpdated)[-1].tool
            assert last.status is ToolStatus.FAILED
            assert "Read-only file system" in str(last.output), last.output
        else:
            assert target.exists()

        await session.prompt("CORRAL_TOOL: touch inside.txt")
        end = await stream.turn(permission(PermissionChoice.ALLOW_ONCE))
        assert end.stop == Completed()
        assert (setup.workdir / "inside.txt").exists()
        await session.close()
