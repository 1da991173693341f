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
after the CLI exited resumes the session it had; a rollback (`fork_for`,
`_rollback.py`) forks the session at the kept turn's last entry, or starts
a fresh one when every turn goes.

Settings at launch: `model` (`--model`), `mode` (`--permission-mode`),
`effort` (`--effort low|medium|high|xhigh|max`; `default` adds nothing).
File checkpointing is on (`CLAUDE_CODE_ENABLE_SDK_FILE_CHECKPOINTING=1`, as
the Agent SDK sets it) so that a rollback can rewind files; the app's `env`
may turn it off.

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
from .._mcp import mcp_entry
from ._details import DEFAULT_MODEL, EFFORT_LEVELS, MODE_CHOICES

__all__ = ["WIRE_FLAGS", "Launch", "fork_for", "launch_for", "restart_for"]

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
_EFFORTS = frozenset(("default", *EFFORT_LEVELS))
_CHECKPOINTING = "CLAUDE_CODE_ENABLE_SDK_FILE_CHECKPOINTING"
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
    effort: str = "default"
    mcp_config_path: str | None = None  # the 0600 file holding `mcp_config` (secrets)


def _settings(spec: LaunchSpec) -> tuple[str, str, str]:
    model, mode, effort = DEFAULT_MODEL, "default", "default"
    for option, value in spec.configure:
        if option == "model" and isinstance(value, str) and value:
            model = value
        elif option == "mode" and value in _MODES:
            mode = str(value)
        elif option == "effort" and value in _EFFORTS:
            effort = str(value)
        else:
            raise CorralError(
                ErrorKind.INVALID_CONFIGURATION,
                f"Claude Code has no setting {option!r} with value {value!r} "
                f"(settings: model, mode = {' | '.join(sorted(_MODES))}, "
                f"effort = default | {' | '.join(EFFORT_LEVELS)})",
            )
    return model, mode, effort


def _setting_flags(model: str, mode: str, effort: str = "default") -> list[str]:
    flags = [] if model == DEFAULT_MODEL else ["--model", model]
    if mode != "default":  # the CLI's own default asks; `--permission-mode` has no "default"
        flags += ["--permission-mode", mode]
    if effort != "default":
        flags += ["--effort", effort]
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


def _tool_flags(spec: LaunchSpec) -> list[str]:
    return [] if spec.tools else ["--tools", ""]  # "" is the CLI's "no built-in tools"


def mcp_config(servers: tuple[McpServer, ...]) -> str:
    return json.dumps(
        {"mcpServers": {server.name: mcp_entry(server, local="stdio") for server in servers}}
    )


def _mcp_flags(spec: LaunchSpec, path: str | None) -> list[str]:
    """`--mcp-config <file>`: never the JSON itself, whose env and headers `ps` would show."""
    if not spec.mcp_servers:
        return []
    if path is None:
        raise ValueError("MCP servers need their config file (mcp_config_path)")
    return ["--mcp-config", path]


def _environment(base: Mapping[str, str], spec: LaunchSpec) -> dict[str, str]:
    env = dict(base)
    env[_CHECKPOINTING] = "1"  # `rewind_files` works only with it (RollbackFiles)
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
    model, mode, effort = _settings(spec)
    argv = [executable, *WIRE_FLAGS, *_setting_flags(model, mode, effort)]
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
        effort=effort,
        mcp_config_path=mcp_config_path,
    )


def restart_for(
    launch: Launch,
    spec: LaunchSpec,
    session_id: str,
    model: str,
    mode: str,
    effort: str = "default",
    *,
    session: tuple[str, ...] | None = None,
) -> Launch:
    """A new process for a session whose CLI exited: resume where it was.

    `session`: the flags naming the session, when not a plain `--resume`.
    """
    argv = [launch.argv[0], *WIRE_FLAGS, *_setting_flags(model, mode, effort)]
    argv += ["--resume", session_id] if session is None else session
    argv += _mcp_flags(spec, launch.mcp_config_path)
    argv += _tool_flags(spec)
    argv += list(spec.args)
    return Launch(
        argv=tuple(argv),
        env=launch.env,
        session_id=session_id if session is None else session[-1],
        model=model,
        mode=mode,
        effort=effort,
        mcp_config_path=launch.mcp_config_path,
    )


def fork_for(
    launch: Launch, spec: LaunchSpec, token: str, new_session: str, at: str | None
) -> Launch:
    """The process after a rollback: the session forked at chain entry `at`.

    `at` None: every turn went; a fresh session. Settings are `launch`'s.
    """
    if at is None:
        session: tuple[str, ...] = ("--session-id", new_session)
    else:
        session = ("--resume", token, "--fork-session", "--resume-session-at", at)
        session += ("--session-id", new_session)
    return restart_for(
        launch, spec, new_session, launch.model, launch.mode, launch.effort, session=session
    )
