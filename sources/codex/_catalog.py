"""Codex in corral's catalog: how to find it, what it can do, how to probe it.

Found as `codex` (or `$CORRAL_CODEX_BIN`, then the usual folders);
installed with `npm install -g @openai/codex`. The probe runs the same
handshake a session does (`initialize`, `account/read`, `model/list`) on a
short-lived `codex app-server`, so it reports the version, the login and
the models without opening a thread.
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import Mapping

from ...pipeline.channels import Channel
from ...pipeline.driver import Driver, LaunchSpec
from ...pipeline.errors import AgentGone, CorralError, ErrorKind
from ...pipeline.events import (
    AgentDetails,
    AgentInstallation,
    AuthStatus,
    Capabilities,
    Capability,
    ConfigOption,
    McpTransport,
    ShapeError,
    UnknownAuth,
)
from ...pipeline.telemetry import NULL_TELEMETRY, SessionTelemetry
from .._jsonrpc import Incoming, JsonRpcPeer, RpcError
from .._process import AgentProcess
from ..catalog import CatalogEntry, NativeTranscripts
from ._native_wire import read_codex_wire, recognizes_codex_wire_line
from ._rollout import read_native_transcript, recognizes_line
from ._usage import read_plan_usage

__all__ = ["CAPABILITIES", "catalog_entry", "details_for", "probe"]

INSTALL_HINT = "npm install -g @openai/codex"
_PROBE_TIMEOUT = 30.0

CAPABILITIES = Capabilities(
    features=frozenset(
        {
            Capability.IMAGES,
            Capability.RESUME,
            Capability.FORK,
            Capability.STEER,
            Capability.PERMISSIONS,
            Capability.QUESTIONS,
            Capability.ROLLBACK,
            Capability.PLAN,
            Capability.CONTEXT_USAGE,
            Capability.PLAN_USAGE,  # `plan_usage`, and PlanUsageUpdated after turns
            Capability.COMPACT,
        }
    ),
    mcp_transports=(McpTransport.STDIO, McpTransport.HTTP),
)


def details_for(
    *,
    version: str | None = None,
    auth: AuthStatus | None = None,
    config_options: tuple[ConfigOption, ...] = (),
) -> AgentDetails:
    return AgentDetails(
        version=version,
        auth=UnknownAuth() if auth is None else auth,
        capabilities=CAPABILITIES,
        config_options=config_options,
    )


def make_driver(
    installation: AgentInstallation, spec: LaunchSpec, telemetry: SessionTelemetry
) -> Driver:
    from ._driver import CodexDriver

    return CodexDriver(installation, spec, telemetry)


async def probe(installation: AgentInstallation, environ: Mapping[str, str]) -> AgentDetails:
    """Version, login and models from a short-lived `codex app-server`."""
    from ._handshake import config_options, introduce
    from ._home import ensure_home

    env = dict(environ)
    await asyncio.to_thread(ensure_home, env)
    incoming: Channel[Incoming] = Channel(256, name="codex-probe")
    async with asyncio.TaskGroup() as tasks:
        process = await AgentProcess.spawn(
            [installation.executable_path, "app-server"],
            cwd=env.get("HOME") or os.getcwd(),
            env=env,
            tasks=tasks,
            telemetry=NULL_TELEMETRY,
        )
        peer = JsonRpcPeer(process)
        tasks.create_task(peer.pump(incoming), name="codex-probe-pump")
        tasks.create_task(_drain(incoming), name="codex-probe-drain")
        try:
            async with asyncio.timeout(_PROBE_TIMEOUT):
                intro = await introduce(peer, client_version="probe")
        except (AgentGone, RpcError, ShapeError, TimeoutError) as error:
            await process.stop(2.0)
            raise CorralError(
                ErrorKind.HANDSHAKE_TIMEOUT
                if isinstance(error, TimeoutError)
                else ErrorKind.PROTOCOL_FAILED,
                f"probing Codex failed: {error!r}; stderr: {process.stderr_tail()[-500:]}",
            ) from None
        await process.stop(5.0)
    options = {"model": intro.models[0].id} if intro.models else {}
    default = next((m.id for m in intro.models if m.is_default), None)
    if default is not None:
        options["model"] = default
    return details_for(
        version=intro.version, auth=intro.auth, config_options=config_options(intro.models, options)
    )


async def _drain(incoming: Channel[Incoming]) -> None:
    async for _ in incoming:
        pass  # notifications during a probe carry nothing we report


def catalog_entry() -> CatalogEntry:
    return CatalogEntry(
        id="codex",
        name="Codex",
        executable="codex",
        install_hint=INSTALL_HINT,
        make_driver=make_driver,
        details=details_for(),
        probe=probe,
        plan_usage=read_plan_usage,
        native_transcripts=NativeTranscripts(  # ~/.codex/sessions/YYYY/MM/DD/rollout-*.jsonl
            format="codex", name="Codex", recognizes=recognizes_line, read=read_native_transcript
        ),
        recorded_wire=NativeTranscripts(  # <transcript id>.wire.jsonl, beside a corral transcript
            format="codex-wire",
            name="Codex",
            recognizes=recognizes_codex_wire_line,
            read=read_codex_wire,
        ),
    )
