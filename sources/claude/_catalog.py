"""Claude Code in corral's catalog: how to find it, probe it, and drive it.

Discovery: `CORRAL_CLAUDE_BIN`, then PATH, the login shell's PATH, the
version managers' folders, and the usual install folders (the native
installer's `~/.claude/local` and `~/.local/bin`, npm's global bin,
Homebrew). A missing CLI is reported with the install hint.

Probe: `claude --version` ("2.1.332 (Claude Code)") for the version and
`claude auth status --json` for the login, each under a deadline, in their
own process group.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import signal
from collections.abc import Mapping

import attrs

from ...pipeline.driver import Driver, LaunchSpec
from ...pipeline.errors import CorralError, ErrorKind
from ...pipeline.events import AgentDetails, AgentInstallation, AuthStatus, UnknownAuth
from ...pipeline.telemetry import SessionTelemetry
from ..catalog import CatalogEntry, NativeTranscripts
from ._details import auth_from_status, static_details
from ._driver import ClaudeDriver
from ._native_wire import read_claude_wire, recognizes_claude_wire_line
from ._transcript import read_native_transcript, recognizes_line
from ._usage import read_plan_usage

__all__ = ["INSTALL_HINT", "catalog_entry", "probe"]

INSTALL_HINT = "npm install -g @anthropic-ai/claude-code"
_PROBE_TIMEOUT = 20.0


async def _run(argv: list[str], environ: Mapping[str, str]) -> tuple[int | None, bytes]:
    """Run a short command in its own process group; its stdout, or None on timeout."""
    try:
        process = await asyncio.create_subprocess_exec(
            *argv,
            stdin=asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.DEVNULL,
            env=dict(environ),
            start_new_session=True,
        )
    except OSError as error:
        raise CorralError(ErrorKind.NOT_INSTALLED, f"cannot run {argv[0]}: {error}") from None
    try:
        async with asyncio.timeout(_PROBE_TIMEOUT):
            out, _ = await process.communicate()
    except TimeoutError:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.pid, signal.SIGKILL)
        await process.wait()
        return None, b""
    return process.returncode, out


def _version(out: bytes) -> str | None:
    words = out.decode("utf-8", "replace").strip().split()
    return words[0] if words else None


def _auth(out: bytes, executable: str) -> AuthStatus:
    try:
        status = json.loads(out)
    except ValueError:
        return UnknownAuth()
    return auth_from_status(status, executable) if isinstance(status, dict) else UnknownAuth()


async def probe(installation: AgentInstallation, environ: Mapping[str, str]) -> AgentDetails:
    executable = installation.executable_path
    code, out = await _run([executable, "--version"], environ)
    if code is None:
        raise CorralError(ErrorKind.HANDSHAKE_TIMEOUT, "Claude Code did not print its version")
    _, status = await _run([executable, "auth", "status", "--json"], environ)
    return attrs.evolve(static_details(), version=_version(out), auth=_auth(status, executable))


def catalog_entry(*, environ: Mapping[str, str] | None = None) -> CatalogEntry:
    """The catalog entry; `environ` is the base environment of every session (default: ours)."""

    def make_driver(
        installation: AgentInstallation, spec: LaunchSpec, telemetry: SessionTelemetry
    ) -> Driver:
        base = dict(os.environ) if environ is None else dict(environ)
        return ClaudeDriver(installation=installation, spec=spec, telemetry=telemetry, environ=base)

    return CatalogEntry(
        id="claude",
        name="Claude Code",
        executable="claude",
        install_hint=INSTALL_HINT,
        make_driver=make_driver,
        details=static_details(),
        known_dirs=("~/.claude/local", "~/.local/bin"),
        probe=probe,
        disables_tools=True,  # `--tools ""`
        plan_usage=read_plan_usage,
        native_transcripts=NativeTranscripts(  # ~/.claude/projects/<dir>/<session>.jsonl
            format="claude",
            name="Claude Code",
            recognizes=recognizes_line,
            read=read_native_transcript,
        ),
        recorded_wire=NativeTranscripts(  # <transcript id>.wire.jsonl, beside a corral transcript
            format="claude-wire",
            name="Claude Code",
            recognizes=recognizes_claude_wire_line,
            read=read_claude_wire,
        ),
    )
