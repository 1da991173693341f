"""Shared fixtures: mock scripts on disk, the serve harness, a private CORRAL_HOME."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.support.serve import ServeProcess


@pytest.fixture(scope="session", autouse=True)
def session_corral_home(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """A CORRAL_HOME for what module- and session-scoped fixtures start (they come
    before any test's own, below)."""
    home = tmp_path_factory.mktemp("corral-home-session")
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("CORRAL_HOME", str(home))
        yield home


@pytest.fixture(autouse=True)
def corral_home(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Every test gets its own CORRAL_HOME: transcripts (on by default in the Runtime,
    `corral serve` and `corral demo`, which inherit the environment) never reach
    the real ~/.local/share."""
    home = tmp_path_factory.mktemp("corral-home")
    monkeypatch.setenv("CORRAL_HOME", str(home))
    return home


@pytest.fixture
def write_script(tmp_path: Path) -> Callable[[dict[str, Any]], str]:
    def write(script: dict[str, Any]) -> str:
        path = tmp_path / f"script-{len(list(tmp_path.glob('script-*')))}.json"
        path.write_text(json.dumps(script))
        return str(path)

    return write


@pytest.fixture
async def serve_mock(
    write_script: Callable[[dict[str, Any]], str],
) -> AsyncIterator[Callable[..., Any]]:
    started: list[ServeProcess] = []

    async def start(script: dict[str, Any], *extra: str) -> ServeProcess:
        serve = await ServeProcess.start("--mock", write_script(script), *extra)
        started.append(serve)
        await serve.wait_for(lambda line: "hello" in line, timeout=30)
        return serve

    yield start
    for serve in started:
        await serve.kill()
