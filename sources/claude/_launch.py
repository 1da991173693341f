"""How `claude` is started: argv, environment, and the session it resumes.

What flows in: the executable, the `LaunchSpec` (resume, fork, settings,
MCP servers, extra env and args) and the base environment. What flows out:
a `Launch`: the argv, the environment, and the session id (the resume
token) the process will use.

The wire flags are fixed: `-p --output-format stream-json --input-format
stream-json --verbose --include-partial-messages --permission-prompt-tool
stdio --replay-user-messages`. No flag ever lets the CLI allow tools by
itself: every permission comes to corral as `can_use_tool`. The app's
extra `args` are refused (`InvalidConfiguration`) when they hold a flag
that would (`--dangerously-skip-permissions`, `--permission-mode`,
`--allowedTools`, ...): modes are corral's `permission_mode` or the `mode`
setting, allows are a policy's rules.

Sessions: a new session gets `--session-id <uuid corral mints>`, so its
resume token exists before the first turn; `resume` adds `--resume
<token>`; `fork` adds `--resume <token> --fork-session --session-id <new
uuid>` (and `--resume-session-at <message uuid>` for `fork_at`). A restart
after the CLI exited resumes the session it had.

MCP servers: their configuration (env values, headers: secrets) goes in a
file, `--mcp-config <path>`, never on the command line where `ps` shows it;
the driver writes it (0600, `sources/_private.py`) and removes it.

Tools: `LaunchSpec.tools=False` adds `--tools ""` (no built-in tools; MCP
servers the session names still offer theirs, and still ask), and then the
app's `args` may not name `--tools` again.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping

import attrs

from ...pipeline.commands import McpServer
from ...pipeline.driver import LaunchSpec
from ...pipeline.errors import CorralError, ErrorKind
from ._details import DEFAULT_MODEL, MODE_CHOICES

__all__ = ["WIRE_FLAGS", "Launch", "launch_for", "restart_for"]

WIRE_FLAGS = (
    "-p",
    "--output-format",
    "stream-json",
    "--input-format",
    "stream-json",
    "--verbose",
    "--include-partial-messages",
    "--permission-prompt-tool",
    "stdio",
    "--replay-user-messages",
)
_MODES = frozenset(choice.value for choice in MODE_CHOICES)
# Flags with which the CLI would allow tools without asking corral.
_SELF_DECIDING_FLAGS = frozenset(
    {
        "--dangerously-skip-permissions",
        "--allow-dangerously-skip-permissions",
        "--permission-mode",
        "--permission-prompt-tool",
        "--allowedTools",
        "--allowed-tools",
    }
)


@attrs.frozen(kw_only=True)
class Launch:
    argv: tuple[str, ...]
    env: Mapping[str, str]
    session_id: str  # the resume token of the session this process runs
    model: str
    mode: str
    mcp_config_path: str | None = None  # the 0600 file holding `mcp_config` (secrets)


def _settings(spec: LaunchSpec) -> tuple[str, str]:
    model, mode = DEFAULT_MODEL, "default"
    for option, value in spec.configure:
        if option == "model" and isinstance(value, str) and value:
            model = value
        elif option == "mode" and value in _MODES:
            mode = str(value)
        else:
            raise CorralError(
                ErrorKind.INVALID_CONFIGURATION,
                f"Claude Code has no setting {option!r} with value {value!r} "
                f"(settings: model, mode = {' | '.join(sorted(_MODES))})",
            )
    return model, mode


def _setting_flags(model: str, mode: str) -> list[str]:
    flags = [] if model == DEFAULT_MODEL else ["--model", model]
    if mode != "default":  # the CLI's own default asks; `--permission-mode` has no "default"
        flags += ["--permission-mode", mode]
    return flags


def _checked_args(args: tuple[str, ...], tools: bool = True) -> list[str]:
    for arg in args:
        flag = arg.partition("=")[0]
        if not tools and flag == "--tools":
            raise CorralError(
                ErrorKind.INVALID_CONFIGURATION,
                "this session runs Claude Code with no tools; its arguments may not set --tools",
                argument=arg,
            )
        if flag in _SELF_DECIDING_FLAGS:
            raise CorralError(
                ErrorKind.INVALID_CONFIGURATION,
                f"Claude Code argument {flag} would let the CLI decide permissions "
                "without corral; use permission_mode, the `mode` setting or a policy instead",
                argument=arg,
            )
    return list(args)


def _mcp_entry(server: McpServer) -> dict[str, object]:
    if server.transport == "Stdio":
        return {
            "type": "stdio",
            "command": server.command or "",
            "args": list(server.args),
            "env": dict(server.env),
        }
    return {
        "type": "http" if server.transport == "Http" else "sse",
        "url": server.url or "",
        "headers": dict(server.headers),
    }


def _tool_flags(spec: LaunchSpec) -> list[str]:
    return [] if spec.tools else ["--tools", ""]  # "" is the CLI's "no built-in tools"


def mcp_config(servers: tuple[McpServer, ...]) -> str:
    return json.dumps({"mcpServers": {server.name: _mcp_entry(server) for server in servers}})


def _mcp_flags(spec: LaunchSpec, path: str | None) -> list[str]:
    """`--mcp-config <file>`: never the JSON itself, whose env and headers `ps` would show."""
    if not spec.mcp_servers:
        return []
    if path is None:
        raise ValueError("MCP servers need their config file (mcp_config_path)")
    return ["--mcp-config", path]


def _environment(base: Mapping[str, str], spec: LaunchSpec) -> dict[str, str]:
    env = dict(base)
    env.update(spec.env)
    env["PWD"] = spec.dir  # the CLI and the tools it runs read it
    return env


def launch_for(
    executable: str,
    spec: LaunchSpec,
    base_env: Mapping[str, str],
    new_id: Callable[[], str],
    *,
    mcp_config_path: str | None = None,
) -> Launch:
    """The first process of a session (`mcp_config_path`: where `mcp_config` is written)."""
    model, mode = _settings(spec)
    argv = [executable, *WIRE_FLAGS, *_setting_flags(model, mode)]
    if spec.fork is not None:
        session_id = new_id()
        argv += ["--resume", spec.fork, "--fork-session", "--session-id", session_id]
        if spec.fork_at is not None:
            argv += ["--resume-session-at", spec.fork_at]
    elif spec.resume is not None:
        session_id = spec.resume
        argv += ["--resume", spec.resume]
    else:
        session_id = new_id()
        argv += ["--session-id", session_id]
    argv += _mcp_flags(spec, mcp_config_path)
    argv += _tool_flags(spec)
    argv += _checked_args(spec.args, spec.tools)
    env = _environment(base_env, spec)
    return Launch(
        argv=tuple(argv),
        env=env,
        session_id=session_id,
        model=model,
        mode=mode,
        mcp_config_path=mcp_config_path,
    )


def restart_for(launch: Launch, spec: LaunchSpec, session_id: str, model: str, mode: str) -> Launch:
    """A new process for a session whose CLI exited: resume where it was."""
    argv = [launch.argv[0], *WIRE_FLAGS, *_setting_flags(model, mode), "--resume", session_id]
    argv += _mcp_flags(spec, launch.mcp_config_path)
    argv += _tool_flags(spec)
    argv += list(spec.args)
    return Launch(
        argv=tuple(argv),
        env=launch.env,
        session_id=session_id,
        model=model,
        mode=mode,
        mcp_config_path=launch.mcp_config_path,
    )
