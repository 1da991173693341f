"""corral's OS sandbox: bubblewrap around the commands it runs, and around agents on request.

The policy decides which commands run; the sandbox bounds what a command
that slipped past it can do. Inside, the whole file system is read-only
(`--ro-bind / /`) except the session directory and a private temporary
directory (its own, removed with it); `/dev` and `/proc` are fresh; the
process runs in a new session (`--new-session`: no way to push input into
a terminal) and dies with corral (`--die-with-parent`). The network is
left alone: agents need their model API.

- `probe(environ)` finds `bwrap` (`$CORRAL_BWRAP_BIN`, else PATH) and runs
  `bwrap <the same flags> true` once: bubblewrap may be installed and still
  unable to work (no user namespaces, a container that forbids mounts).
  `Sandboxes` caches the answer, one per Runtime.
- `Sandboxes.plan(mode, agent)` turns the policy's `sandbox` key (`off`,
  `on`, `auto`) and `open`'s `sandbox` field into a session's
  `SandboxSpec`, or None; `on` without a working bubblewrap, or an agent
  sandbox asked for without one, is an error rather than a silent
  downgrade.
- `command_argv` wraps one command (an ACP terminal); `agent_argv` wraps a
  whole agent process, with its own state folders (`~/.claude`,
  `$CODEX_HOME`, `~/.config/opencode`, ...), caches and TMPDIR writable too.

Nothing here decides about permissions; it only builds argument lists.
"""

from __future__ import annotations

import asyncio
import os
import shutil
import subprocess
import tempfile
from collections.abc import Mapping, Sequence

import attrs

from ..pipeline.driver import LaunchSpec, SandboxSpec
from ..pipeline.errors import CorralError, ErrorKind
from ..pipeline.events import SandboxStatus
from ..pipeline.rules import SandboxMode

__all__ = [
    "CommandBox",
    "SandboxProbe",
    "Sandboxes",
    "agent_argv",
    "agent_state_paths",
    "command_argv",
    "command_box",
    "private_tmp",
    "probe",
]

_PROBE_TIMEOUT = 10.0
# Where the agents corral knows keep their state, relative to HOME.
_HOME_STATE = (
    ".claude",
    ".claude.json",
    ".codex",
    ".config/opencode",
    ".local/share/opencode",
    ".local/state/opencode",
    ".gemini",
    ".copilot",
    ".cache",
)
_STATE_VARIABLES = ("CODEX_HOME", "XDG_CACHE_HOME", "CLAUDE_CONFIG_DIR", "COPILOT_HOME")
# XDG folders that hold an agent's state under its own name (opencode's).
_XDG_STATE = ("XDG_CONFIG_HOME", "XDG_DATA_HOME", "XDG_STATE_HOME")
_XDG_AGENTS = ("opencode",)


@attrs.frozen
class SandboxProbe:
    """Whether bubblewrap works here: its path, or None and why not."""

    bwrap: str | None
    reason: str


def _base(bwrap: str) -> list[str]:
    return [
        bwrap,
        *("--ro-bind", "/", "/"),
        *("--dev", "/dev"),
        *("--proc", "/proc"),
        "--die-with-parent",
        "--new-session",
    ]


def _binds(paths: Sequence[str]) -> list[str]:
    flags: list[str] = []
    for path in dict.fromkeys(paths):  # once each, in order
        flags += ["--bind", path, path]
    return flags


def probe(environ: Mapping[str, str]) -> SandboxProbe:
    """Find bubblewrap and check that it can build the sandbox here (blocking)."""
    named = environ.get("CORRAL_BWRAP_BIN")
    found = named or shutil.which("bwrap", path=environ.get("PATH"))
    if not found:
        return SandboxProbe(None, "bubblewrap (bwrap) is not installed")
    # A writable bind of a folder that exists, and nothing written: a probe
    # that corral's own death interrupts leaves nothing behind.
    existing = tempfile.gettempdir()
    argv = [*_base(found), *_binds([existing]), "--", "/bin/sh", "-c", "exit 0"]
    try:
        done = subprocess.run(
            argv, capture_output=True, timeout=_PROBE_TIMEOUT, check=False, env=dict(environ)
        )
    except (OSError, subprocess.TimeoutExpired) as error:
        return SandboxProbe(None, f"{found} did not run: {error}")
    if done.returncode != 0:
        why = done.stderr.decode("utf-8", "replace").strip()[-300:]
        return SandboxProbe(None, f"{found} cannot build a sandbox here: {why}")
    return SandboxProbe(found, f"{found} works")


class Sandboxes:
    """One Runtime's sandbox: probed once, then a plan for each session."""

    def __init__(self, environ: Mapping[str, str]) -> None:
        self._environ = dict(environ)
        self._probe: SandboxProbe | None = None
        self._lock = asyncio.Lock()

    async def probe(self) -> SandboxProbe:
        async with self._lock:
            if self._probe is None:
                self._probe = await asyncio.to_thread(probe, self._environ)
            return self._probe

    async def plan(self, mode: SandboxMode, agent: bool | None) -> SandboxSpec | None:
        """The session's sandbox under the policy's `mode` and `open`'s `sandbox` field."""
        if mode is SandboxMode.OFF and not agent:
            return None
        found = await self.probe()
        if found.bwrap is None:
            if mode is SandboxMode.ON or agent:
                wanted = "open's sandbox: true" if agent else 'the policy\'s sandbox = "on"'
                raise CorralError(
                    ErrorKind.UNSUPPORTED_FEATURE,
                    f"{wanted} needs bubblewrap: {found.reason}",
                    feature="Sandbox",
                )
            return None
        return SandboxSpec(
            bwrap=found.bwrap, commands=mode is not SandboxMode.OFF, agent=bool(agent)
        )

    async def status(self, spec: SandboxSpec | None) -> SandboxStatus:
        """What `probe` and `info` say about the sandbox of a session planned as `spec`."""
        found = await self.probe()
        return SandboxStatus(
            available=found.bwrap is not None,
            commands=spec is not None and spec.commands,
            agent=spec is not None and spec.agent,
            reason=found.reason,
        )


def private_tmp() -> str:
    """A fresh temporary directory for sandboxed processes (blocking).

    Kept apart from the session directory, which is the project itself.
    """
    return tempfile.mkdtemp(prefix="corral-sandbox-")


def command_argv(
    spec: SandboxSpec, argv: Sequence[str], *, session_dir: str, tmp: str, cwd: str
) -> list[str]:
    """`argv` inside the sandbox: only `session_dir` and `tmp` writable; TMPDIR is `tmp`."""
    return [
        *_base(spec.bwrap),
        *_binds([session_dir, tmp]),
        *("--setenv", "TMPDIR", tmp),
        *("--chdir", cwd),
        "--",
        *argv,
    ]


def agent_state_paths(env: Mapping[str, str]) -> list[str]:
    """The agent's own state folders and files that exist (missing folders are made)."""
    home = env.get("HOME") or os.path.expanduser("~")
    candidates = [os.path.join(home, name) for name in _HOME_STATE]
    candidates += [env[name] for name in _STATE_VARIABLES if env.get(name)]
    candidates += [
        os.path.join(env[base], agent)
        for base in _XDG_STATE
        if env.get(base)
        for agent in _XDG_AGENTS
    ]
    found = []
    for path in candidates:
        if not os.path.isabs(path):
            continue
        if not os.path.exists(path) and not os.path.splitext(path)[1]:
            try:  # the agent would make it on its first run; inside, it cannot
                os.makedirs(path, exist_ok=True)
            except OSError:
                continue
        if os.path.exists(path):
            found.append(os.path.realpath(path))
    return found


def agent_argv(
    spec: SandboxSpec, argv: Sequence[str], *, cwd: str, env: Mapping[str, str]
) -> tuple[list[str], str | None]:
    """A whole agent inside the sandbox, and the private tmp made for it (blocking).

    Writable: the session directory, the agent's state folders, and its
    TMPDIR: the one it names, else a private one made here (the caller
    removes it when the agent is gone).
    """
    writable = [cwd, *agent_state_paths(env)]
    made = None
    tmpdir = env.get("TMPDIR")
    if not tmpdir or not os.path.isdir(tmpdir):
        tmpdir = made = private_tmp()
    writable.append(os.path.realpath(tmpdir))
    wrapped = [
        *_base(spec.bwrap),
        *_binds(writable),
        *("--setenv", "TMPDIR", tmpdir),
        *("--chdir", cwd),
        "--",
        *argv,
    ]
    return wrapped, made


class CommandBox:
    """The sandbox of one session's commands: its spec, the session directory, a private tmp."""

    def __init__(self, spec: SandboxSpec, session_dir: str) -> None:
        self.spec = spec
        self.session_dir = session_dir
        self._tmp: str | None = None

    async def wrap(self, argv: Sequence[str], *, cwd: str) -> list[str]:
        """`argv` as it runs inside the sandbox (the private tmp is made on first use)."""
        if self._tmp is None:
            self._tmp = await asyncio.to_thread(private_tmp)
        return command_argv(self.spec, argv, session_dir=self.session_dir, tmp=self._tmp, cwd=cwd)

    async def close(self) -> None:
        """Remove the private tmp (after the commands ended); idempotent.

        The removal runs in a thread that finishes even if this task is
        cancelled meanwhile.
        """
        tmp, self._tmp = self._tmp, None
        if tmp is not None:
            await asyncio.to_thread(shutil.rmtree, tmp, True)


def command_box(launch: LaunchSpec) -> CommandBox | None:
    """The sandbox for the commands a session runs, if its launch asks for one."""
    spec = launch.sandbox
    return CommandBox(spec, launch.dir) if spec is not None and spec.commands else None
