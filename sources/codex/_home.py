"""CODEX_HOME: where Codex keeps its config, login and sessions.

Codex refuses to start when `CODEX_HOME` names a folder that does not
exist, so a configured one is created first. With the `isolate_home`
option a session gets a private CODEX_HOME: a fresh folder seeded with the
user's `config.toml` and `auth.json` (so providers and login still work),
holding that session's history alone, and removed when the session ends.
Plain blocking file operations: call them from a thread.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Mapping
from pathlib import Path

__all__ = ["SEEDED_FILES", "make_private_home", "remove_home", "source_home"]

SEEDED_FILES = ("config.toml", "auth.json")


def source_home(environ: Mapping[str, str]) -> Path:
    """The CODEX_HOME the environment selects (`$CODEX_HOME`, else `~/.codex`)."""
    configured = environ.get("CODEX_HOME")
    if configured:
        return Path(configured).expanduser()
    home = environ.get("HOME") or str(Path.home())
    return Path(home) / ".codex"


def ensure_home(environ: Mapping[str, str]) -> None:
    """Create a configured CODEX_HOME that does not exist yet."""
    configured = environ.get("CODEX_HOME")
    if configured:
        Path(configured).expanduser().mkdir(parents=True, exist_ok=True)


def make_private_home(source: Path, parent: str | None = None) -> Path:
    home = Path(tempfile.mkdtemp(prefix="corral-codex-home-", dir=parent))
    os.chmod(home, 0o700)
    for name in SEEDED_FILES:
        original = source / name
        if original.is_file():
            shutil.copy2(original, home / name)
    return home


def remove_home(home: Path) -> None:
    shutil.rmtree(home, ignore_errors=True)
