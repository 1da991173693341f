"""corral's own processes tune the garbage collector; an app that embeds corral keeps its own."""

from __future__ import annotations

import gc
import subprocess
import sys
from collections.abc import Iterator

import pytest
from corral.actors._collector import THRESHOLDS
from corral.actors.cli import main


@pytest.fixture
def thresholds() -> Iterator[None]:
    before = gc.get_threshold()
    yield
    gc.set_threshold(*before)


def test_the_corral_command_runs_with_corral_s_thresholds(
    thresholds: None, capsys: pytest.CaptureFixture[str]
) -> None:
    gc.set_threshold(700, 10, 10)
    with pytest.raises(SystemExit) as exited:  # argparse's --version exits
        main(["--version"])
    assert exited.value.code == 0 and "corral" in capsys.readouterr().out
    assert gc.get_threshold() == THRESHOLDS
    assert THRESHOLDS[1:] > (10, 10)  # the older generations are swept less often


def test_an_app_embedding_corral_keeps_its_own_thresholds() -> None:
    script = (
        "import asyncio, gc\n"
        "gc.set_threshold(123, 4, 5)\n"
        "from corral import Runtime\n"
        "async def go():\n"
        "    async with Runtime(transcripts=False) as rt:\n"
        "        await rt.discover()\n"
        "asyncio.run(go())\n"
        "print(gc.get_threshold())\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "(123, 4, 5)"
