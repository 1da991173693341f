"""Progress on long work: `corral import` and `corral bench` show one line of progress
on stderr when it is a terminal, and print nothing extra when it is not.

Each command runs as a real subprocess with stderr on a pty (`pty.openpty()`) and
stdout on a pipe: the bar must reach the terminal and never stdout. The bench's
measurements take minutes, so its subprocess replaces them with instant stand-ins and
keeps everything else: the phases, the counting, the terminal check, the stream.
"""

from __future__ import annotations

import os
import pty
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
FIXTURES = REPO / "tests" / "fixtures"
NATIVE = [FIXTURES / "claude/transcripts", FIXTURES / "codex/rollouts"]

BENCH = """
import sys
from corral.actors.bench import _run

class Measured:
    stages = None

class Corpus:
    def __init__(self, name):
        self.name, self.lines = name, [b"{}"] * 3

async def measured(*args, **kwargs):
    return Measured()

async def rate(*args, **kwargs):
    return 1000.0

_run._corpora = lambda options: [Corpus("mock"), Corpus("claude")]
_run.real_corpus_names = lambda: ["claude"]
_run.measure_throughput = _run.measure_backpressure = _run.measure_latency = measured
_run.measure_max_rate = rate
_run.measure_scale_apart = lambda *args: Measured()
_run.measure_acp_flood = lambda *args, **kwargs: None
_run._summary = lambda figures, seconds: {}
_run._table = lambda figures, out: out.write("the table\\n")
_run.run_bench(_run.BenchOptions(quick=True, loops=("asyncio",)))
"""


def _run(argv: list[str], *, terminal: bool, cwd: Path) -> tuple[str, str]:
    """(stdout, stderr) of `argv`, stderr on a pty when `terminal`, else on a pipe."""
    env = {**os.environ, "CORRAL_HOME": str(cwd / "home")}
    if not terminal:
        done = subprocess.run(argv, capture_output=True, text=True, timeout=120, env=env, cwd=cwd)
        assert done.returncode == 0, done.stderr
        return done.stdout, done.stderr
    leader, follower = pty.openpty()
    try:
        process = subprocess.Popen(
            argv, stdout=subprocess.PIPE, stderr=follower, stdin=subprocess.DEVNULL,
            env=env, cwd=cwd,
        )  # fmt: skip
        os.close(follower)
        chunks = []
        while True:
            try:
                chunk = os.read(leader, 65536)
            except OSError:  # EIO: the child closed the terminal
                break
            if not chunk:
                break
            chunks.append(chunk)
        out, _ = process.communicate(timeout=120)
        assert process.returncode == 0, b"".join(chunks).decode(errors="replace")
    finally:
        os.close(leader)
    return out.decode(), b"".join(chunks).decode()


def _import(tmp_path: Path, *, terminal: bool) -> tuple[str, str]:
    archive = tmp_path / ("tty" if terminal else "pipe")
    argv = [sys.executable, "-m", "corral.actors.cli", "import", *map(str, NATIVE)]
    return _run([*argv, "--transcripts", str(archive)], terminal=terminal, cwd=tmp_path)


def test_import_of_many_files_shows_a_bar_on_a_terminal(tmp_path: Path) -> None:
    total = sum(len(list(folder.glob("*.jsonl"))) for folder in NATIVE)
    out, err = _import(tmp_path, terminal=True)
    steps = err.replace("\r\n", "\n").split("\r")
    assert any(f"] 1/{total} ~" in step and "left" in step for step in steps), err
    assert f"[{'#' * 30}] {total}/{total} " in steps[-1] and err.endswith("\n")
    assert out.startswith(f"imported {total}, skipped 0, failed 0\n")
    assert "\r" not in out and "/" + str(total) not in out.splitlines()[0]


def test_import_off_a_terminal_prints_nothing_extra(tmp_path: Path) -> None:
    total = sum(len(list(folder.glob("*.jsonl"))) for folder in NATIVE)
    out, err = _import(tmp_path, terminal=False)
    assert err == ""
    assert out.startswith(f"imported {total}, skipped 0, failed 0\n") and "\r" not in out


def test_bench_shows_each_phase_done_of_total_and_time_left_on_a_terminal(
    tmp_path: Path,
) -> None:
    out, err = _run([sys.executable, "-c", BENCH], terminal=True, cwd=tmp_path)
    steps = [step.strip() for step in err.replace("\r\n", "\n").split("\r") if step.strip()]
    # --quick under one loop: 2 corpora, 4 scale steps, backpressure, 4 latency steps,
    # the ACP flood.
    assert any("0/12 " in s and "asyncio throughput 1/2: mock (3 lines)" in s for s in steps)
    assert any("3/12 ~" in s and "asyncio scale 2/4: 10 sessions" in s for s in steps), steps
    assert any("asyncio backpressure 1/1" in s for s in steps)
    assert any("latency 4/4: 90% of the maximum rate" in s for s in steps)
    assert any(" latency 1/4: " in s for s in steps), steps  # a long note keeps its start
    assert any("11/12 ~" in s and "acp-flood 1/1" in s for s in steps), steps
    assert "12/12" in steps[-1] and err.endswith("\n")
    assert out == "the table\n"


def test_bench_off_a_terminal_prints_only_its_table(tmp_path: Path) -> None:
    out, err = _run([sys.executable, "-c", BENCH], terminal=False, cwd=tmp_path)
    assert (out, err) == ("the table\n", "")
