"""Finding Codex: the default catalog, `$CORRAL_CODEX_BIN`, PATH, the install hint.

Discovery runs through the runtime's own `AgentFinder` over the default
catalog (sources/registry.py), with an environment built from scratch so
nothing of this machine's PATH or HOME leaks in.
"""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from corral.actors._agents import AgentFinder
from corral.pipeline.errors import CorralError, ErrorKind
from corral.pipeline.events import InstallationSource
from corral.sources.codex._catalog import CAPABILITIES, INSTALL_HINT
from corral.sources.registry import default_catalog

TIMEOUT = 30.0


def _executable(folder: Path, name: str = "codex") -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / name
    path.write_text("#!/bin/sh\nexit 0\n")
    path.chmod(0o755)
    return path


def _system_codex() -> bool:
    """Discovery's last resort is the system folders; a codex there cannot be hidden."""
    return any(
        Path(d, "codex").exists() for d in ("/usr/local/bin", "/opt/homebrew/bin", "/usr/bin")
    )


def _finder(tmp_path: Path, **environ: str) -> AgentFinder:
    base = {"HOME": str(tmp_path / "home"), "PATH": str(tmp_path / "empty")}
    return AgentFinder(catalog=default_catalog(), environ={**base, **environ})


def test_codex_is_in_the_default_catalog() -> None:
    entry = default_catalog().get("codex")
    assert entry is not None
    assert (entry.name, entry.executable) == ("Codex", "codex")
    assert entry.install_hint == "npm install -g @openai/codex" == INSTALL_HINT
    assert entry.details.capabilities == CAPABILITIES
    assert entry.probe is not None


async def test_corral_codex_bin_wins_over_path(tmp_path: Path) -> None:
    pinned = _executable(tmp_path / "pinned", "my-codex")
    _executable(tmp_path / "bin")
    finder = _finder(tmp_path, CORRAL_CODEX_BIN=str(pinned), PATH=str(tmp_path / "bin"))
    async with asyncio.timeout(TIMEOUT):
        _, installation = await finder.resolve("codex")
    assert installation.executable_path == str(pinned)
    assert installation.source is InstallationSource.ENV_OVERRIDE


async def test_codex_on_path_is_found(tmp_path: Path) -> None:
    on_path = _executable(tmp_path / "bin")
    finder = _finder(tmp_path, PATH=str(tmp_path / "bin"))
    async with asyncio.timeout(TIMEOUT):
        report = await finder.discover()
    (codex,) = [a for a in report.agents if a.id == "codex"]
    assert codex.executable_path == str(on_path)
    assert codex.source is InstallationSource.PATH


async def test_a_missing_codex_says_where_corral_looked_and_how_to_install(
    tmp_path: Path,
) -> None:
    if _system_codex():
        pytest.skip("a system-wide codex is installed; it would be found")
    finder = _finder(tmp_path, CORRAL_CODEX_BIN=str(tmp_path / "nowhere"))
    with pytest.raises(CorralError) as caught:
        async with asyncio.timeout(TIMEOUT):
            await finder.resolve("codex")
    assert caught.value.kind is ErrorKind.NOT_INSTALLED
    assert caught.value.fields["install_hint"] == "npm install -g @openai/codex"
    searched = caught.value.fields["searched"]
    assert isinstance(searched, list)
    assert searched[0].startswith(f"$CORRAL_CODEX_BIN={tmp_path / 'nowhere'}")
    async with asyncio.timeout(TIMEOUT):
        report = await finder.discover()
    (missing,) = [m for m in report.missing if m.id == "codex"]
    assert missing.install_hint == "npm install -g @openai/codex"
