"""The `codex app-server` handshake and the session settings it reveals.

Order (one request at a time, each answered before the next):
`initialize` (clientInfo, `experimentalApi` for `thread/settings/update`)
→ `initialized` notification → `account/read` → `model/list` (every page)
→ `thread/start`, `thread/resume` or `thread/fork` with the session's
directory, approval policy `untrusted` (Codex asks before anything not
known to be safe: the most asking setting that still runs) and sandbox.

What it learns becomes `AgentDetails` (version from the user agent, login
from `account/read`) and the session's options:

- `model`: the models of `model/list` (plus the current one); live;
- `effort`: the reasoning efforts of the current model; live;
- `sandbox`: workspace-write (default), read-only, danger-full-access;
  chosen at open. Codex asks before every untrusted command in any of
  them; workspace-write lets an approved command write inside the
  session's directory (under read-only, an approved `touch` can fail with
  "Read-only file system" when the sandbox engages);
- `isolate_home`: a private CODEX_HOME for the session; chosen at open.

Live options change through `thread/settings/update`.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import attrs

from ...pipeline.commands import McpServer
from ...pipeline.errors import CorralError, ErrorKind
from ...pipeline.events import (
    AccountInfo,
    Authenticated,
    AuthKind,
    AuthStatus,
    ConfigChoice,
    ConfigOption,
    ConfigValue,
    Fields,
    OtherAuth,
    ShapeError,
    TerminalLogin,
    Unauthenticated,
)
from .._choices import model_select
from .._jsonrpc import JsonRpcPeer

__all__ = [
    "APPROVAL_POLICY",
    "CLIENT_NAME",
    "SANDBOXES",
    "Introduction",
    "ModelInfo",
    "auth_status",
    "config_options",
    "introduce",
    "mcp_config",
]

CLIENT_NAME = "corral"
APPROVAL_POLICY = "untrusted"
SANDBOXES = ("workspace-write", "read-only", "danger-full-access")  # the first is the default
DEFAULT_EFFORTS = ("low", "medium", "high")
_MAX_MODEL_PAGES = 10


@attrs.frozen(kw_only=True)
class ModelInfo:
    id: str
    name: str
    description: str | None = None
    efforts: tuple[tuple[str, str], ...] = ()  # (effort, description)
    default_effort: str | None = None
    is_default: bool = False


@attrs.frozen(kw_only=True)
class Introduction:
    version: str | None
    auth: AuthStatus
    models: tuple[ModelInfo, ...]
    requires_login: bool


def _version(user_agent: str | None) -> str | None:
    # "corral/0.171.0 (Debian 12.0.0; x86_64) dumb (corral; 0.1)"
    if not user_agent:
        return None
    head = user_agent.split(" ", 1)[0]
    return head.split("/", 1)[1] if "/" in head else None


def auth_status(account_read: Fields) -> tuple[AuthStatus, bool]:
    """`account/read`'s result as corral's AuthStatus, and whether a login is missing."""
    account = account_read.opt_obj("account")
    required = account_read.flag("requiresOpenaiAuth", False)
    if account is None:
        if required:
            login = TerminalLogin(command=("codex", "login"), description="Log in to Codex")
            return Unauthenticated(login=(login,)), True
        return Authenticated(kind=OtherAuth("model provider")), False
    match account.string("type"):
        case "apiKey":
            return Authenticated(kind=AuthKind.API_KEY), False
        case "chatgpt":
            info = AccountInfo(
                email=account.opt_string("email"), plan=account.opt_string("planType")
            )
            return Authenticated(kind=AuthKind.SUBSCRIPTION, account=info), False
        case "amazonBedrock" | "gcp":
            return Authenticated(kind=AuthKind.CLOUD_PROVIDER), False
        case other:
            return Authenticated(kind=OtherAuth(other)), False


def _model(raw: Fields) -> ModelInfo:
    efforts = []
    for path, option in raw.array("supportedReasoningEfforts", True):
        effort = Fields(option, path)
        efforts.append((effort.string("reasoningEffort"), effort.opt_string("description") or ""))
    return ModelInfo(
        id=raw.string("id"),
        name=raw.opt_string("displayName") or raw.string("id"),
        description=raw.opt_string("description"),
        efforts=tuple(efforts),
        default_effort=raw.opt_string("defaultReasoningEffort"),
        is_default=raw.flag("isDefault", False),
    )


async def _models(peer: JsonRpcPeer) -> tuple[ModelInfo, ...]:
    models: list[ModelInfo] = []
    cursor: str | None = None
    for _ in range(_MAX_MODEL_PAGES):
        params: dict[str, Any] = {} if cursor is None else {"cursor": cursor}
        page = Fields(await peer.request("model/list", params), "model/list")
        models += [_model(Fields(item, path)) for path, item in page.array("data", True)]
        cursor = page.opt_string("nextCursor")
        if not cursor:
            break
    return tuple(models)


async def introduce(peer: JsonRpcPeer, *, client_version: str) -> Introduction:
    """initialize → initialized → account/read → model/list. Raises ShapeError, RpcError."""
    hello = await peer.request(
        "initialize",
        {
            "clientInfo": {"name": CLIENT_NAME, "title": "corral", "version": client_version},
            "capabilities": {"experimentalApi": True},
        },
    )
    version = _version(Fields(hello, "initialize").opt_string("userAgent"))
    await peer.notify("initialized")
    auth, missing = auth_status(Fields(await peer.request("account/read", {}), "account/read"))
    return Introduction(
        version=version, auth=auth, models=await _models(peer), requires_login=missing
    )


def _effort_choices(models: tuple[ModelInfo, ...], model: str | None) -> tuple[ConfigChoice, ...]:
    for info in models:
        if info.id == model and info.efforts:
            return tuple(
                ConfigChoice(value=effort, label=effort, description=text or None)
                for effort, text in info.efforts
            )
    return tuple(ConfigChoice(value=effort, label=effort) for effort in DEFAULT_EFFORTS)


def config_options(
    models: tuple[ModelInfo, ...], options: Mapping[str, ConfigValue]
) -> tuple[ConfigOption, ...]:
    """The session's options, with `current` taken from `options`."""
    model = options.get("model")
    model_choices = [
        ConfigChoice(value=info.id, label=info.name, description=info.description)
        for info in models
    ]
    if isinstance(model, str) and all(c.value != model for c in model_choices):
        model_choices.insert(0, ConfigChoice(value=model, label=model))
    sandbox_choices = tuple(ConfigChoice(value=s, label=s) for s in SANDBOXES)
    built = [
        ConfigOption(
            id="effort",
            name="Reasoning effort",
            live=True,
            choices=_effort_choices(models, model if isinstance(model, str) else None),
            category="thought_level",
            current=options.get("effort"),
        ),
        ConfigOption(
            id="sandbox",
            name="Sandbox",
            live=False,
            choices=sandbox_choices,
            category="mode",
            current=options.get("sandbox", SANDBOXES[0]),
        ),
        ConfigOption(
            id="isolate_home",
            name="Private CODEX_HOME for this session",
            live=False,
            boolean=True,
            current=options.get("isolate_home", False),
        ),
    ]
    if model_choices:
        built.insert(0, model_select(model_choices, model))
    return tuple(built)


def mcp_config(servers: tuple[McpServer, ...]) -> dict[str, Any]:
    """corral's MCP servers as Codex's `mcp_servers` config table."""
    table: dict[str, Any] = {}
    for server in servers:
        if server.transport == "Stdio":
            table[server.name] = {
                "command": server.command,
                "args": list(server.args),
                "env": dict(server.env),
            }
        elif server.transport == "Http":
            table[server.name] = {"url": server.url, "http_headers": dict(server.headers)}
        else:
            raise CorralError(
                ErrorKind.UNSUPPORTED_FEATURE,
                f"Codex cannot reach MCP server {server.name!r} over {server.transport}",
                feature="McpTransport",
            )
    return table


def shape_failure(error: ShapeError, step: str) -> CorralError:
    return CorralError(ErrorKind.PROTOCOL_FAILED, f"Codex answered {step} unexpectedly: {error}")
