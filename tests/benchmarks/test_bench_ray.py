"""`corral bench --ray local` at tiny counts: both columns measured, in the same run.

Asserts what does not depend on speed: every event counted on both
sides, figures present, nothing of Ray left behind (the local instance
lives in a private network namespace that ends with its process).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import orjson
import pytest

pytestmark = [pytest.mark.ray, pytest.mark.slow]

if os.environ.get("CI") is None:
    pytest.importorskip("ray")
    if shutil.which("unshare") is None or os.geteuid() != 0:
        pytest.skip("bench --ray local runs Ray in unshare -n, as root", allow_module_level=True)


def test_the_ray_scale_phase_counts_every_event_beside_the_single_process(
    tmp_path: Path,
) -> None:
    from corral.actors.bench._ray import figures, run_ray_bench

    rows = run_ray_bench("local", quick=True, counts=(1, 3), events=5)
    assert [(row.single.sessions, row.ray.sessions) for row in rows] == [(1, 1), (3, 3)]
    for row in rows:
        assert row.ray.events == row.single.events > 0
        assert row.ray.events_per_s > 0 and row.ratio > 0
    assert [entry["ray"]["events"] for entry in figures(rows)] == [r.ray.events for r in rows]


def test_bench_ray_on_the_command_line_prints_the_table_and_writes_json(tmp_path: Path) -> None:
    out = tmp_path / "ray.json"
    done = subprocess.run(
        [sys.executable, "-m", "corral.actors.cli", "bench", "--ray", "local", "--quick",
         "--json", str(out)],
        capture_output=True, timeout=1200, check=True,
    )  # fmt: skip
    assert b"scale on Ray vs one process" in done.stdout
    rows = orjson.loads(out.read_bytes())["ray_scale"]
    assert [row["ray"]["sessions"] for row in rows] == [1, 10, 100]
