"""Prometheus for the metrics tests: find or install it, and read dashboards.

`prometheus_bin()` runs `.ci/prometheus` (which finds `prometheus` and
`promtool`, or unpacks Debian's package into a cache) once per test run.
When that fails the test is skipped with the reason, except under CI
(`CI` set), where it fails: CI must have them.

`dashboard_queries()` lists every PromQL expression of every dashboard
(panel targets and variable queries); `concrete(expr)` replaces Grafana's
variables with values Prometheus accepts.
"""

from __future__ import annotations

import functools
import json
import os
import re
import subprocess
from pathlib import Path
from typing import Any

import pytest

__all__ = ["DASHBOARDS", "concrete", "dashboard_queries", "dashboards", "prometheus_bin"]

REPO = Path(__file__).resolve().parents[3]
DASHBOARDS = REPO / "dashboards"


@functools.cache
def _install() -> tuple[Path | None, str]:
    try:
        done = subprocess.run(
            [str(REPO / ".ci" / "prometheus")],
            capture_output=True,
            text=True,
            timeout=600,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired) as error:
        return None, f".ci/prometheus did not run: {error}"
    if done.returncode != 0:
        return None, f".ci/prometheus failed: {done.stderr.strip()[-2000:]}"
    return Path(done.stdout.strip().splitlines()[-1]), ""


def prometheus_bin() -> Path:
    """The folder holding `prometheus` and `promtool` (skip or, under CI, fail)."""
    folder, reason = _install()
    if folder is None:
        if os.environ.get("CI"):
            pytest.fail(reason)
        pytest.skip(reason)
    return folder


def dashboards() -> dict[str, dict[str, Any]]:
    return {
        path.name: json.loads(path.read_text(encoding="utf-8"))
        for path in sorted(DASHBOARDS.glob("corral-*.json"))
    }


_LABEL_VALUES = re.compile(r"^label_values\((?:(.*),\s*)?(\w+)\)$")


def dashboard_queries() -> list[tuple[str, str, str]]:
    """(dashboard file, panel or variable title, PromQL) for every query."""
    found = []
    for name, board in dashboards().items():
        for panel in board["panels"]:
            for target in panel.get("targets", []):
                found.append((name, panel["title"], target["expr"]))
        for variable in board["templating"]["list"]:
            if variable["type"] != "query":
                continue
            match = _LABEL_VALUES.match(variable["definition"])
            assert match, f"{name}: variable {variable['name']} is not label_values(...)"
            if match.group(1):
                found.append((name, f"${variable['name']}", match.group(1)))
    return found


def concrete(expr: str, *, rate_interval: str = "1m", job: str = ".*") -> str:
    """`expr` with Grafana's variables replaced (All for the multi-value ones)."""
    return (
        expr.replace("$__rate_interval", rate_interval)
        .replace("$__range", "1h")
        .replace('"$job"', f'"{job}"')
        .replace('"$instance"', '".*"')
        .replace('"$agent"', '".*"')
    )
