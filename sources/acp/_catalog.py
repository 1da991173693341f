"""The ACP agents corral knows, with their exact launch commands.

Every entry drives its agent through `AcpDriver`; only the launch line and
the unattended login differ. Each runs in its most asking wire setting, so
every permission reaches corral:

- `acp`: the ad-hoc ref's path and args (wire only: `{"acp": {"name", "path", "args"}}`);
- `gemini`: `gemini --acp`; authenticates with `gemini-api-key` when
  `GEMINI_API_KEY` is set;
- `opencode`: `opencode acp --cwd DIR` (it reads `$PWD`), with
  `OPENCODE_PERMISSION={"bash": "ask", "edit": "ask", "webfetch": "ask"}`:
  opencode 1.18 merges that JSON over the `permission` of every config file
  it read (global, project, managed), so those tools ask whatever the
  user's config says (checked against the pinned 1.18.33);
- `copilot`: `copilot --acp` (the Copilot CLI over ACP, so permissions pass
  through corral), without `COPILOT_ALLOW_ALL`;
- `claude-acp`: `claude-code-acp` (Zed's Claude Code adapter);
- `codex-acp`: `codex-acp -c approval_policy="untrusted" -c
  sandbox_mode="danger-full-access"` (Zed's Codex adapter; asks before every
  command that is not known to be safe);
- `qwen`: `qwen --acp` (Qwen Code).

Native transcripts (`corral import`): `gemini` declares Gemini CLI's own
chat files (`_native_gemini.py`), `opencode` its `opencode export` files
(`_native_opencode.py`: opencode keeps sessions in SQLite, not files), and
the wire-only `acp` entry corral's own `--record-wire` files of any ACP
agent (`_native_wire.py`).

A recipe's `bypass_env` (the agent's own "allow everything" switches) is
dropped from the environment, whether it came from corral's or the app's;
its `env` is set after the app's, so the app cannot turn the asking off.
Modes that let an agent allow tools by itself are hidden (`_settings.py`).

`probe` starts the agent, reads its `initialize` answer (version,
capabilities, login methods) and stops it: several ACP agents have no
`--version` that returns without starting their server.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
from collections.abc import Mapping

from ...pipeline.channels import BrokenChannel, Channel
from ...pipeline.driver import Driver, LaunchSpec
from ...pipeline.errors import CorralError, ErrorKind
from ...pipeline.events import AgentDetails, AgentInstallation
from ...pipeline.telemetry import NULL_TELEMETRY, SessionTelemetry
from .._jsonrpc import Incoming, JsonRpcPeer
from .._process import AgentProcess
from ..catalog import CatalogEntry, DriverFactory, NativeTranscripts, Prober
from ._driver import AcpDriver, AcpRecipe
from ._handshake import AuthChoice, AuthPolicy, details_of, initialize
from ._native_gemini import read_gemini_session, recognizes_gemini_line
from ._native_opencode import read_opencode_export, recognizes_opencode_export
from ._native_wire import read_acp_wire, recognizes_acp_wire_line

__all__ = ["RECIPES", "catalog_entries"]

_PROBE_TIMEOUT = 30.0
_PROBE_GRACE = 2.0
# What opencode asks about; the rest (read, list, glob, grep) it allows by default.
_OPENCODE_ASKING = '{"bash": "ask", "edit": "ask", "webfetch": "ask"}'

RECIPES: dict[str, AcpRecipe] = {
    "acp": AcpRecipe(),
    "gemini": AcpRecipe(
        args=("--acp",),
        auth=AuthPolicy(
            choices=(
                AuthChoice(method="gemini-api-key", env_var="GEMINI_API_KEY", eager=True),
                AuthChoice(method="vertex-ai", env_var="GOOGLE_API_KEY"),
            ),
            agent_login=False,  # its agent-run method is a Google login in a browser
        ),
    ),
    "opencode": AcpRecipe(
        args=("acp",),
        cwd_flag="--cwd",
        env=(("OPENCODE_PERMISSION", _OPENCODE_ASKING),),
    ),
    "copilot": AcpRecipe(args=("--acp",), bypass_env=("COPILOT_ALLOW_ALL",)),
    "claude-acp": AcpRecipe(),
    "codex-acp": AcpRecipe(
        args=("-c", 'approval_policy="untrusted"', "-c", 'sandbox_mode="danger-full-access"')
    ),
    "qwen": AcpRecipe(
        args=("--acp",),
        auth=AuthPolicy(
            choices=(AuthChoice(method="openai", env_var="OPENAI_API_KEY"),),
            agent_login=False,  # its agent-run method is a Qwen login in a browser
        ),
    ),
}

_ENTRIES: tuple[tuple[str, str, str, str], ...] = (
    # id, name, executable, install hint
    ("gemini", "Gemini CLI", "gemini", "npm install -g @google/gemini-cli"),
    ("opencode", "opencode", "opencode", "npm install -g opencode-ai"),
    ("copilot", "GitHub Copilot CLI", "copilot", "npm install -g @github/copilot"),
    (
        "claude-acp",
        "Claude Code (ACP adapter)",
        "claude-code-acp",
        "npm install -g @zed-industries/claude-code-acp",
    ),
    (
        "codex-acp",
        "Codex (ACP adapter)",
        "codex-acp",
        "npm install -g @zed-industries/codex-acp",
    ),
    ("qwen", "Qwen Code", "qwen", "npm install -g @qwen-code/qwen-code"),
)


# The session files the agents write themselves, as `corral import` reads them.
NATIVE_TRANSCRIPTS: dict[str, NativeTranscripts] = {
    "acp": NativeTranscripts(  # <transcript id>.wire.jsonl, beside a corral transcript
        format="acp", name="ACP agent", recognizes=recognizes_acp_wire_line, read=read_acp_wire
    ),
    "gemini": NativeTranscripts(  # ~/.gemini/tmp/<project>/chats/session-*.jsonl
        format="gemini",
        name="Gemini CLI",
        recognizes=recognizes_gemini_line,
        read=read_gemini_session,
    ),
    "opencode": NativeTranscripts(  # `opencode export SESSION_ID > FILE`
        format="opencode",
        name="opencode",
        recognizes=recognizes_opencode_export,
        read=read_opencode_export,
    ),
}


def driver_factory(recipe: AcpRecipe, environ: Mapping[str, str] | None) -> DriverFactory:
    def make(
        installation: AgentInstallation, launch: LaunchSpec, telemetry: SessionTelemetry
    ) -> Driver:
        return AcpDriver(
            installation=installation,
            launch=launch,
            recipe=recipe,
            telemetry=telemetry,
            environ=environ,
        )

    return make


def prober(recipe: AcpRecipe) -> Prober:
    async def probe(installation: AgentInstallation, environ: Mapping[str, str]) -> AgentDetails:
        argv = [installation.executable_path, *recipe.args, *(installation.acp_args or ())]
        env = {k: v for k, v in environ.items() if k not in recipe.bypass_env}
        env.update(recipe.env)
        try:
            async with asyncio.timeout(_PROBE_TIMEOUT):
                return await _probe(argv, env)
        except TimeoutError:
            raise CorralError(
                ErrorKind.HANDSHAKE_TIMEOUT,
                f"{installation.name} did not answer initialize within {_PROBE_TIMEOUT:.0f} s",
            ) from None

    return probe


async def _probe(argv: list[str], env: Mapping[str, str]) -> AgentDetails:
    incoming: Channel[Incoming] = Channel(64, name="acp-probe")
    async with asyncio.TaskGroup() as tasks:
        process = await AgentProcess.spawn(
            argv, cwd=env.get("HOME") or os.getcwd(), env=env, tasks=tasks, telemetry=NULL_TELEMETRY
        )
        peer = JsonRpcPeer(process)

        async def pump() -> None:
            with contextlib.suppress(BrokenChannel):
                await peer.pump(incoming)

        tasks.create_task(pump())
        try:
            init = await initialize(peer, terminal=False)
        finally:
            incoming.abort()
            await process.stop(_PROBE_GRACE)
    return details_of(init)


def catalog_entries(environ: Mapping[str, str] | None = None) -> list[CatalogEntry]:
    """Every ACP agent corral knows, plus the wire-only `acp` entry for ad-hoc agents.

    `environ` is the environment agent processes start from (default: corral's own).
    """
    entries = [
        CatalogEntry(
            id="acp",
            name="ACP agent",
            executable="",
            install_hint='name the agent\'s executable: {"acp": {"name", "path", "args"}}',
            make_driver=driver_factory(RECIPES["acp"], environ),
            probe=prober(RECIPES["acp"]),
            wire_only=True,
            recorded_wire=NATIVE_TRANSCRIPTS["acp"],
        )
    ]
    for agent_id, name, executable, hint in _ENTRIES:
        recipe = RECIPES[agent_id]
        entries.append(
            CatalogEntry(
                id=agent_id,
                name=name,
                executable=executable,
                install_hint=hint,
                make_driver=driver_factory(recipe, environ),
                probe=prober(recipe),
                native_transcripts=NATIVE_TRANSCRIPTS.get(agent_id),
            )
        )
    return entries
