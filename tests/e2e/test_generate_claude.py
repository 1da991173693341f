"""`generate` through `corral serve` with the real `claude` CLI and the project's mock model.

The CLI is started through a small wrapper (`CORRAL_CLAUDE_BIN`) that
writes its arguments to a file and then becomes the real CLI, so the test
sees the exact command line corral used. The mock model answers by trigger
phrase (see tests/e2e/test_claude.py); every line corral writes is checked
against the schema by `ServeProcess`.
"""

from __future__ import annotations

import shlex
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.support.mockmodel import MockModelServer
from tests.support.realagents import AgentSandbox, require_agent
from tests.support.serve import ServeProcess

pytestmark = pytest.mark.e2e

TIMEOUT = 120.0


@pytest.fixture(scope="module")
def claude_bin() -> Path:
    return require_agent("claude")


@pytest.fixture
def mock() -> Iterator[MockModelServer]:
    with MockModelServer() as server:
        yield server


def recording_wrapper(directory: Path, claude: Path) -> tuple[Path, Path]:
    """A `claude` that records its argv (NUL-separated: `""` stays visible), then execs the CLI."""
    argv_file = directory / "argv"
    wrapper = directory / "claude"
    wrapper.write_text(
        "#!/bin/sh\n"
        f"printf '%s\\0' \"$@\" > {shlex.quote(str(argv_file))}\n"
        f'exec {shlex.quote(str(claude))} "$@"\n'
    )
    wrapper.chmod(0o755)
    return wrapper, argv_file


async def test_generate_returns_the_models_text_from_claude_run_without_tools(
    tmp_path: Path, mock: MockModelServer, claude_bin: Path
) -> None:
    sandbox = AgentSandbox(root=tmp_path / "sandbox", model_url=mock.url)
    wrapper, argv_file = recording_wrapper(tmp_path, claude_bin)
    env = {**sandbox.env("claude"), "CORRAL_CLAUDE_BIN": str(wrapper)}
    serve = await ServeProcess.start(env=env)
    try:
        await serve.wait_for(lambda line: "hello" in line)
        reply = await serve.ok(
            {
                "cmd": "generate",
                "agent": "claude",
                "dir": str(sandbox.workdir),
                "prompt": "CORRAL_ECHO a title please",
            },
            timeout=TIMEOUT,
        )
        argv = argv_file.read_bytes().split(b"\0")[:-1]
        at = argv.index(b"--tools")
        assert argv[at + 1] == b""  # no built-in tools
        asked = [r for r in mock.model_requests() if "a title please" in str(r.body)]
        assert asked and not any(r.body.get("tools") for r in asked)  # none offered the model
        # With no tools offered the mock answers as to a side call ("Mock title").
        assert reply and reply in {r.answer for r in asked}
        assert await serve.finish(timeout=60) == 0
        assert not [line for line in serve.lines if {"event", "closed", "session"} & line.keys()]
    finally:
        await serve.kill()
