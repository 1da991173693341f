"""Finding an agent's executable, and saying where we looked when we can't.

Order: the `CORRAL_<AGENT>_BIN` override, then PATH, then the login
shell's PATH (GUI-launched orchestrators often have a thin PATH), then the
usual version-manager folders (nvm, fnm, volta, asdf, bun, pnpm), then
known install folders. Plain synchronous file checks: call from a thread.
"""

from __future__ import annotations

import glob
import os
import shutil
import subprocess
from collections.abc import Mapping, Sequence
from pathlib import Path

from ..pipeline.events import AgentInstallation, InstallationSource, MissingAgent

__all__ = ["env_override_name", "locate", "login_shell_path"]


def env_override_name(agent_id: str) -> str:
    return "CORRAL_" + agent_id.upper().replace("-", "_") + "_BIN"


def _is_executable(path: str) -> bool:
    return os.path.isfile(path) and os.access(path, os.X_OK)


def login_shell_path(environ: Mapping[str, str], timeout: float = 3.0) -> str | None:
    """PATH as the user's login shell sets it, or None if it cannot be read."""
    shell = environ.get("SHELL")
    if not shell or not _is_executable(shell):
        return None
    try:
        done = subprocess.run(
            [shell, "-lc", 'printf %s "$PATH"'],
            capture_output=True,
            timeout=timeout,
            env=dict(environ),
            check=False,
            stdin=subprocess.DEVNULL,
        )
    except (OSError, subprocess.TimeoutExpired):
        return None
    text = done.stdout.decode("utf-8", "replace").strip()
    return text or None


def _manager_dirs(home: str) -> list[str]:
    patterns = [
        f"{home}/.nvm/versions/node/*/bin",
        f"{home}/.local/share/fnm/node-versions/*/installation/bin",
        f"{home}/.fnm/node-versions/*/installation/bin",
        f"{home}/.volta/bin",
        f"{home}/.asdf/shims",
        f"{home}/.local/share/mise/shims",
        f"{home}/.bun/bin",
        f"{home}/.local/share/pnpm",
    ]
    found: list[str] = []
    for pattern in patterns:
        found.extend(sorted(glob.glob(pattern), reverse=True))  # newest version first
    return found


def _known_dirs(home: str, extra: Sequence[str]) -> list[str]:
    dirs = [d.replace("~", home, 1) if d.startswith("~") else d for d in extra]
    return [
        *dirs,
        f"{home}/.local/bin",
        f"{home}/.npm-global/bin",
        f"{home}/bin",
        "/usr/local/bin",
        "/opt/homebrew/bin",
        "/usr/bin",
    ]


def locate(
    *,
    agent_id: str,
    name: str,
    executable: str,
    install_hint: str,
    environ: Mapping[str, str],
    login_path: str | None = None,
    known_dirs: Sequence[str] = (),
) -> AgentInstallation | MissingAgent:
    searched: list[str] = []
    override = env_override_name(agent_id)
    pinned = environ.get(override)
    if pinned:
        if _is_executable(pinned):
            return _found(agent_id, name, pinned, InstallationSource.ENV_OVERRIDE)
        searched.append(f"${override}={pinned} (not an executable file)")
    else:
        searched.append(f"${override} (not set)")
    path = environ.get("PATH", "")
    hit = shutil.which(executable, path=path)
    searched.append(f"PATH ({path})" if path else "PATH (empty)")
    if hit:
        return _found(agent_id, name, hit, InstallationSource.PATH)
    if login_path:
        searched.append("login shell PATH")
        hit = shutil.which(executable, path=login_path)
        if hit:
            return _found(agent_id, name, hit, InstallationSource.LOGIN_SHELL_PATH)
    home = environ.get("HOME") or str(Path.home())
    for source, folders in (
        (InstallationSource.VERSION_MANAGER, _manager_dirs(home)),
        (InstallationSource.KNOWN_LOCATION, _known_dirs(home, known_dirs)),
    ):
        for folder in folders:
            candidate = os.path.join(folder, executable)
            searched.append(candidate)
            if _is_executable(candidate):
                return _found(agent_id, name, candidate, source)
    return MissingAgent(id=agent_id, name=name, searched=tuple(searched), install_hint=install_hint)


def _found(agent_id: str, name: str, path: str, source: InstallationSource) -> AgentInstallation:
    return AgentInstallation(
        id=agent_id, name=name, executable_path=os.path.abspath(path), source=source
    )
