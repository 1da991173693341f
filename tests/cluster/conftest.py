"""The Ray cluster of these tests: one per module, two nodes, in a private namespace.

Skipped where Ray is not installed, unless `CI` is set (CI installs the
`ray` extra and must run them).
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.support.raycluster import RayCluster
from tests.support.realagents import ensure_installed

if os.environ.get("CI") is None:
    pytest.importorskip("ray")
    if shutil.which("unshare") is None or shutil.which("nsenter") is None or os.geteuid() != 0:
        pytest.skip("Ray's tests need unshare and nsenter as root", allow_module_level=True)


@pytest.fixture(scope="module")
def claude() -> Path | None:
    """The pinned Claude Code from the test agents' cache (installed if need be), or None."""
    return ensure_installed("claude")


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory, claude: Path | None) -> Iterator[RayCluster]:
    # The nodes find agents as corral does, by their own environment.
    env = {} if claude is None else {"CORRAL_CLAUDE_BIN": str(claude)}
    started = RayCluster(Path(tmp_path_factory.mktemp("ray")), env).start()
    try:
        yield started
    finally:
        started.stop()
    assert started.processes() == {}
