"""`corral demo` runs the whole pipeline, archives its sessions and ends with a truthful
summary."""

from __future__ import annotations

import asyncio
import io
import subprocess
import sys
from pathlib import Path

from corral.actors.demo import run_demo
from corral.sinks.transcript import find_transcripts, read_transcript


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


def _demo(*extra: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "corral.actors.cli", "demo", "--speed", "0", "--no-color",
         "--no-metrics", *extra],
        capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip


def test_the_demo_archives_every_session_by_default(corral_home: Path) -> None:
    done = _demo()  # CORRAL_HOME is the test's own (tests/conftest.py)
    assert done.returncode == 0, done.stderr
    root = corral_home / "transcripts"
    assert f"corral: transcripts in {root}" in done.stderr
    read = [read_transcript(files) for files in find_transcripts(root)]
    assert sorted(t.header.agent for t in read if t.header is not None) == [
        "coder", "reviewer", "tester",
    ]  # fmt: skip
    for transcript in read:
        assert transcript.problems == [] and transcript.footer is not None
        assert transcript.footer.count("prompts") == transcript.turns >= 1


def test_the_demo_does_not_point_at_transcripts_it_could_not_write(tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("")  # the archive's folder cannot be made: it is a file
    done = _demo("--transcripts", str(blocker))
    assert done.returncode == 0, done.stderr
    assert "could not be created" in done.stderr
    assert "transcripts in" not in done.stderr
