"""A home directory and a session directory per test, both real folders."""

from __future__ import annotations

from pathlib import Path

import pytest


@pytest.fixture
def home(tmp_path: Path) -> Path:
    folder = tmp_path / "home"
    (folder / ".ssh").mkdir(parents=True)
    return folder


@pytest.fixture
def session(tmp_path: Path) -> Path:
    folder = tmp_path / "work"
    (folder / "src").mkdir(parents=True)
    return folder
