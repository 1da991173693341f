"""What `serve` and `demo` are given, checked before anything starts.

`--mock NAME|FILE` (a path, else a script corral ships under
sources/mock/scripts, by name), `--policy FILE`, `--metrics HOST:PORT`, and
the platform itself (corral is POSIX-only: process groups, signals,
subreapers). Each problem is raised as the user's error it is — a
`UsageError` for a bad argument, a `CorralError` for a bad file or an
unsupported platform — and the CLI's one boundary (`_cli_errors.guarded`)
prints it as one line.
"""

from __future__ import annotations

import os
import sys
from importlib import resources
from pathlib import Path
from typing import Any

from ._cli_errors import UsageError

__all__ = ["load_mock", "load_policy_arg", "metrics_address", "require_posix", "shipped_scripts"]


def shipped_scripts() -> dict[str, Path]:
    """The mock scripts corral ships, by name (`tester` for scripts/tester.json)."""
    folder = resources.files("corral.sources.mock").joinpath("scripts")
    return {
        entry.name.removesuffix(".json"): Path(str(entry))
        for entry in folder.iterdir()
        if entry.name.endswith(".json")
    }


def _mock_path(wanted: str) -> Path:
    """A path as given, else a shipped script's name; neither: a usage error."""
    path = Path(wanted).expanduser()
    if path.exists():
        return path
    shipped = shipped_scripts()
    found = shipped.get(wanted.removesuffix(".json"))
    if found is None:
        names = ", ".join(sorted(shipped))
        raise UsageError(f"--mock: no file {wanted} and no shipped script of that name ({names})")
    return found


def load_mock(wanted: str | None) -> Any:
    if wanted is None:
        return None
    from ..pipeline.errors import CorralError, ErrorKind
    from ..pipeline.events import ShapeError
    from ..sources.mock import load_script

    path = _mock_path(wanted)
    try:
        return load_script(path)  # an unreadable file: its OSError, told in one line
    except ShapeError as error:
        message = f"bad mock script {path}: {error}"
        raise CorralError(ErrorKind.INVALID_CONFIGURATION, message) from None


def load_policy_arg(path: str | None) -> Any:
    if path is None:
        return None
    from ..pipeline.errors import CorralError
    from ..pipeline.rules import PolicyError, load_policy

    try:
        return load_policy(path)
    except PolicyError as error:
        hint = f"(see `corral policy check {path}`)"
        raise CorralError(error.kind, f"{error.message} {hint}") from None


def metrics_address(text: str | None) -> tuple[str, int] | None:
    if text is None:
        return None
    from ..sinks.metrics import parse_address

    try:
        return parse_address(text)
    except ValueError as error:
        raise UsageError(f"--metrics: {error} (e.g. 127.0.0.1:9464, or :0 for any port)") from None


def require_posix(command: str) -> None:
    """corral runs agents under POSIX process groups and signals: say so elsewhere.

    Only the commands that run agents ask; `--help` and the archive work anywhere.
    """
    if os.name != "posix" or sys.platform == "win32":
        from ..pipeline.errors import CorralError, ErrorKind

        raise CorralError(
            ErrorKind.UNSUPPORTED_FEATURE,
            f"`{command}` needs a POSIX system (Linux, macOS); this is {sys.platform}. "
            "Run corral under WSL or in a Linux container.",
        )
