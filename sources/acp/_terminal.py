"""The `terminal` client capability, sans-IO: what a command is and what it said.

An ACP agent may ask corral to run a command (`terminal/create`) and then
read its output, wait for it, kill it and release it. This module holds
the pure pieces; `_terminals.py` runs the processes.

- `command_spec(params, root)` reads a `terminal/create` request into a
  `CommandSpec`: one shell line (the `command` alone, which agents such as
  the Claude adapter send as a whole command line; or `command` and `args`
  quoted into one), run by `/bin/sh -c` so the policy judges exactly what
  runs; the working directory (absolute, beneath the session directory
  and reached without following any link, default the session
  directory); extra environment variables; and the byte limit of
  retained output (the agent's `outputByteLimit`, never above
  `MAX_OUTPUT_BYTES`, so memory stays bounded even when the agent asks
  for no limit). `shown()` is the whole request as the policy and the app
  see it: command, args, cwd and env.
- `changes_what_runs(name)`: environment variables that decide which
  program runs or what it loads (`PATH`, `LD_*`, `PYTHON*`, `GIT_*`,
  `BASH_ENV`, `NODE_OPTIONS`, ...). A command that sets one is never
  allowed automatically: its request does not offer `AllowOnce`, the only
  choice a mode (or a deadline) picks on its own, so the app is asked, or
  the request is denied when its deadline passes with nobody answering;
  only a rule that says `always` (or the app) lets it run.
- `OutputBuffer` keeps the last `limit` bytes of the command's combined
  stdout and stderr. Truncation drops from the beginning and always at a
  UTF-8 character boundary (so the kept bytes may be a little under the
  limit); `text()` never shows half a character still being written.
- `recorded_spec(params)` is the same reading for a recorded wire's
  replay, which consults no file system.
- `exit_fields(returncode)` is the ACP exit status: `{exitCode, signal}`,
  one of them null.

Invariant: `len(buffer) <= limit` after every `feed`, and the kept bytes
start at a character boundary.
"""

from __future__ import annotations

import os
import shlex
import signal
from collections.abc import Mapping
from typing import Any

import attrs

from ._frames import INVALID_PARAMS
from ._fs import FsRefused, cwd_beneath

__all__ = [
    "DEFAULT_OUTPUT_BYTES",
    "MAX_OUTPUT_BYTES",
    "CommandSpec",
    "OutputBuffer",
    "changes_what_runs",
    "command_spec",
    "exit_fields",
    "recorded_spec",
]

DEFAULT_OUTPUT_BYTES = 1024 * 1024  # when the agent names no limit
MAX_OUTPUT_BYTES = 8 * 1024 * 1024
_MAX_ENV = 256

# Variables that choose the program, its libraries, its startup code or its hooks.
_RUN_CHANGING = frozenset(
    {
        "PATH",
        "BASH_ENV",
        "ENV",
        "IFS",
        "CDPATH",
        "SHELLOPTS",
        "BASHOPTS",
        "PS4",
        "PROMPT_COMMAND",
        "HOME",
        "ZDOTDIR",
        "NODE_OPTIONS",
        "NODE_PATH",
        "JAVA_TOOL_OPTIONS",
        "_JAVA_OPTIONS",
        "JDK_JAVA_OPTIONS",
        "CLASSPATH",
        "GCONV_PATH",
        "LOCPATH",
        "MALLOC_CONF",
        "EDITOR",
        "VISUAL",
        "PAGER",
        "SSH_ASKPASS",
        "SUDO_ASKPASS",
        "GEM_HOME",
        "GEM_PATH",
        "BUNDLE_GEMFILE",
        "GOFLAGS",
        "RUSTC_WRAPPER",
        "CARGO_HOME",
        "CC",
        "CXX",
        "MAKEFLAGS",
    }
)
_RUN_CHANGING_PREFIXES = (
    "LD_",
    "DYLD_",
    "PYTHON",
    "GIT_",
    "PERL",
    "RUBY",
    "BASH_FUNC_",
    "NPM_CONFIG_",
    "npm_config_",
    "LUA_",
    "TCL",
    "PHP",
    "GLIBC_TUNABLES",
)


def changes_what_runs(name: str) -> bool:
    """Does setting this variable change which program runs or what it loads?"""
    return name in _RUN_CHANGING or name.upper().startswith(_RUN_CHANGING_PREFIXES)


@attrs.frozen(kw_only=True)
class CommandSpec:
    """A command the agent asked corral to run, checked and ready to judge."""

    line: str  # the shell line `/bin/sh -c` runs; what the policy sees
    cwd: str  # absolute, beneath the session directory
    env: tuple[tuple[str, str], ...] = ()
    output_limit: int = DEFAULT_OUTPUT_BYTES
    # As the agent sent them, for the record; `line` is what runs.
    command: str = attrs.field(default="", eq=False)
    args: tuple[str, ...] = attrs.field(default=(), eq=False)

    def argv(self) -> list[str]:
        return ["/bin/sh", "-c", self.line]

    def run_changing(self) -> tuple[str, ...]:
        """The names of the variables it sets that change what runs."""
        return tuple(name for name, _ in self.env if changes_what_runs(name))

    def shown(self) -> dict[str, Any]:
        """The whole request, as the policy and the app see it."""
        return {
            "command": self.command or self.line,
            "args": list(self.args),
            "cwd": self.cwd,
            "env": {name: value for name, value in self.env},
        }


def _refused(message: str) -> FsRefused:
    return FsRefused(INVALID_PARAMS, message)


def _line(params: Mapping[str, Any]) -> str:
    command, args = params.get("command"), params.get("args")
    if not isinstance(command, str) or not command.strip():
        raise _refused("terminal/create needs a non-empty string command")
    if args is None or args == []:
        return command
    if not isinstance(args, list) or not all(isinstance(arg, str) for arg in args):
        raise _refused("terminal/create args must be a list of strings")
    return shlex.join([command, *args])


def _env(raw: object) -> tuple[tuple[str, str], ...]:
    if raw is None:
        return ()
    if not isinstance(raw, list) or len(raw) > _MAX_ENV:
        raise _refused(f"terminal/create env must be a list of at most {_MAX_ENV} variables")
    pairs = []
    for variable in raw:
        name = variable.get("name") if isinstance(variable, dict) else None
        value = variable.get("value") if isinstance(variable, dict) else None
        if not isinstance(name, str) or not name or "=" in name or not isinstance(value, str):
            raise _refused("each terminal/create env entry needs a string name and value")
        _plain(name, "an env name")
        _plain(value, "an env value")
        pairs.append((name, value))
    return tuple(pairs)


def _plain(text: str, what: str) -> None:
    """Text a process can be given: no NUL byte, valid UTF-8."""
    if "\x00" in text:
        raise _refused(f"terminal/create: {what} contains a NUL byte")
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        raise _refused(f"terminal/create: {what} is not valid UTF-8") from None


def _limit(raw: object) -> int:
    if raw is None:
        return DEFAULT_OUTPUT_BYTES
    if not isinstance(raw, int) or isinstance(raw, bool) or raw < 0:
        raise _refused("terminal/create outputByteLimit must be a non-negative integer")
    return min(raw, MAX_OUTPUT_BYTES)


def command_spec(params: Mapping[str, Any], root: str) -> CommandSpec:
    """A `terminal/create` request's command, checked; FsRefused when it cannot run."""
    line = _line(params)
    _plain(line, "the command")
    raw_cwd = params.get("cwd")
    if raw_cwd is None:
        raw_cwd = root
    elif not isinstance(raw_cwd, str) or not os.path.isabs(raw_cwd):
        raise _refused("terminal/create cwd must be an absolute path")
    args = params.get("args")
    return CommandSpec(
        line=line,
        cwd=cwd_beneath(root, raw_cwd),
        env=_env(params.get("env")),
        output_limit=_limit(params.get("outputByteLimit")),
        command=str(params.get("command")),
        args=tuple(args) if isinstance(args, list) else (),
    )


def recorded_spec(params: Mapping[str, Any]) -> CommandSpec | None:
    """A recorded `terminal/create`'s command, for replay: no file system is consulted."""
    try:
        line = _line(params)
    except FsRefused:
        return None
    cwd = params.get("cwd")
    return CommandSpec(line=line, cwd=cwd if isinstance(cwd, str) else "")


def _is_continuation(byte: int) -> bool:
    return byte & 0xC0 == 0x80


def _sequence_length(lead: int) -> int:
    if lead >= 0xF0:
        return 4
    if lead >= 0xE0:
        return 3
    if lead >= 0xC0:
        return 2
    return 1


class OutputBuffer:
    """The last `limit` bytes of a command's output, cut at character boundaries."""

    def __init__(self, limit: int) -> None:
        if limit < 0:
            raise ValueError("an output limit cannot be negative")
        self.limit = limit
        self.truncated = False
        self._kept = bytearray()

    def __len__(self) -> int:
        return len(self._kept)

    def feed(self, chunk: bytes) -> None:
        if len(chunk) > self.limit:  # only its tail can survive
            chunk = chunk[len(chunk) - self.limit :]
            self.truncated = True
            self._kept.clear()
        self._kept += chunk
        excess = len(self._kept) - self.limit
        if excess > 0:
            self.truncated = True
            del self._kept[:excess]  # CPython deletes from the front in O(1)
        if self.truncated:
            skip = 0
            while skip < min(3, len(self._kept)) and _is_continuation(self._kept[skip]):
                skip += 1
            del self._kept[:skip]

    def text(self, *, final: bool = False) -> str:
        """The kept output; while running, a character still being written is held back."""
        end = len(self._kept)
        if not final:
            end -= self._pending_tail()
        return self._kept[:end].decode("utf-8", errors="replace")

    def _pending_tail(self) -> int:
        kept = self._kept
        for back in range(1, min(4, len(kept)) + 1):
            byte = kept[-back]
            if not _is_continuation(byte):
                return back if byte >= 0xC0 and _sequence_length(byte) > back else 0
        return 0


def exit_fields(returncode: int) -> dict[str, Any]:
    """ACP's exit status of a process that ended with `returncode`."""
    if returncode >= 0:
        return {"exitCode": returncode, "signal": None}
    try:
        name = signal.Signals(-returncode).name
    except ValueError:
        name = f"signal {-returncode}"
    return {"exitCode": None, "signal": name}
