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

if os.environ.get("CI") is None:
    pytest.importorskip("ray")
    if shutil.which("unshare") is None or shutil.which("nsenter") is None or os.geteuid() != 0:
        pytest.skip("Ray's tests need unshare and nsenter as root", allow_module_level=True)


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RayCluster]:
    started = RayCluster(Path(tmp_path_factory.mktemp("ray"))).start()
    try:
        yield started
    finally:
        started.stop()
    assert started.processes() == {}
