"""Shared fixtures: mock scripts on disk, the serve harness."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

import pytest

from tests.support.serve import ServeProcess


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
