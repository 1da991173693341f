"""Finding and probing Claude Code: its own install folder, its version, its login.

Discovery runs through the runtime's own `AgentFinder` over the default
catalog, with an environment built from scratch (HOME in tmp, PATH empty,
no `$CORRAL_CLAUDE_BIN`, no SHELL for a login PATH) so nothing of this
machine leaks in. The probe runs a real fake `claude`, a shell script that
answers `--version` and `auth status --json` the way the CLI does.
"""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from corral.actors._agents import AgentFinder
from corral.pipeline.events import AccountInfo, Authenticated, AuthKind, InstallationSource
from corral.sources.registry import default_catalog

TIMEOUT = 30.0

_FAKE_CLAUDE = """#!/bin/sh
case "$1" in
  --version) echo "2.1.332 (Claude Code)" ;;
  auth) echo '{"loggedIn": true, "authMethod": "claude.ai", "email": "dev@example.com", "subscriptionType": "max"}' ;;
  *) exit 2 ;;
esac
"""


def _install(home: Path) -> Path:
    """Claude Code as its native installer leaves it: `~/.claude/local/claude`."""
    folder = home / ".claude" / "local"
    folder.mkdir(parents=True)
    path = folder / "claude"
    path.write_text(_FAKE_CLAUDE)
    path.chmod(0o755)
    return path


def _finder(tmp_path: Path) -> AgentFinder:
    environ = {"HOME": str(tmp_path / "home"), "PATH": ""}
    return AgentFinder(catalog=default_catalog(), environ=environ)


async def test_the_native_install_folder_is_searched(tmp_path: Path) -> None:
    installed = _install(tmp_path / "home")
    async with asyncio.timeout(TIMEOUT):
        _, installation = await _finder(tmp_path).resolve("claude")
    assert installation.executable_path == str(installed)
    assert installation.source is InstallationSource.KNOWN_LOCATION


async def test_probe_reads_the_version_number_and_the_login(tmp_path: Path) -> None:
    _install(tmp_path / "home")
    async with asyncio.timeout(TIMEOUT):
        details = await _finder(tmp_path).probe("claude")
    assert details.version == "2.1.332"
    assert details.auth == Authenticated(
        kind=AuthKind.SUBSCRIPTION, account=AccountInfo(email="dev@example.com", plan="max")
    )


@pytest.mark.parametrize("printed", ["", "\n"])
async def test_probe_without_a_version_line_reports_none(tmp_path: Path, printed: str) -> None:
    installed = _install(tmp_path / "home")
    installed.write_text(f"#!/bin/sh\nprintf '{printed}'\n")
    async with asyncio.timeout(TIMEOUT):
        details = await _finder(tmp_path).probe("claude")
    assert details.version is None
