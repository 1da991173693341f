"""`corral demo` runs the whole pipeline and ends with a truthful summary."""

from __future__ import annotations

import asyncio
import io
import subprocess
import sys

from corral.actors.demo import run_demo


async def test_the_demo_shows_a_queued_prompt_a_policy_decision_and_a_summary() -> None:
    out = io.StringIO()
    assert await run_demo(speed=0, color=False, out=out) == 0
    text = out.getvalue()
    assert "queued at position 0" in text
    assert "edit1: allow_once by mode:AcceptEdits" in text
    assert "pip1: allow_once by app" in text
    rows = {line.split()[1]: line.split() for line in text.splitlines()[-3:]}
    assert rows["coder"][2] == "2" and rows["tester"][2] == "2" and rows["reviewer"][2] == "1"


def test_the_demo_command_exits_zero() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "corral.actors.cli", "demo", "--speed", "0", "--no-color"],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert "summary" in done.stdout


async def test_the_demo_can_run_twice_in_one_process() -> None:
    for _ in range(2):
        assert await asyncio.wait_for(run_demo(speed=0, color=False, out=io.StringIO()), 60) == 0
