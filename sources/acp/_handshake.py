"""Opening an ACP session: initialize → authenticate (when needed) → new or load.

What flows: requests over a `JsonRpcPeer`, and back an `OpenedSession`
(the agent's session id, what it can do, its settings). Every failure is a
`CorralError` of the line protocol's kinds:

- `initialize` offers the client capabilities corral serves: `fs` read and
  write (confined to the session directory), `terminal` when enabled, and
  `elicitation` forms (`{"form": {}}`, the official schema's shape; they
  become Question requests). A protocol version other than 1 is
  ProtocolFailed. `notice` / `compaction` updates are mapped whenever an
  agent sends them but not advertised: only the reference names that
  client capability (`session.notices`, `session.compaction`), and an
  agent whose schema types it differently would refuse `initialize`.
  Steering: the ACP reference defines no way to add a prompt to a running
  turn (no capability, no method; `session/prompt` is one turn), so no
  ACP agent has `Steer` and the engine queues prompts.
- Authentication: an entry may name methods to use at once when their
  environment variable is set (Gemini's `gemini-api-key`). Otherwise the
  agent is asked only if `session/new` answers -32000 (auth required):
  corral picks an offered method it can use without a person (one whose
  variable is set, or an agent-run method), authenticates and retries
  once. Nothing usable: AuthRequired, naming the offered methods.
- What `initialize` declared decides `resume`, `fork` and the MCP
  transports (`pipeline/fidelity.refuse_undeclared`, UnsupportedFeature),
  before `session/new` uses any of them.
- `session/new` (cwd, MCP servers) or, with a resume token, `session/load`
  when `loadSession` is advertised (else `session/resume` when offered;
  else UnsupportedFeature). A refused load or resume is ResumeFailed.
- `configure` values of the open command are applied before the session
  is handed over (InvalidConfiguration when refused).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import attrs

from ...pipeline.commands import McpServer
from ...pipeline.driver import LaunchSpec
from ...pipeline.errors import CorralError, ErrorKind
from ...pipeline.events import (
    AgentDetails,
    Authenticated,
    Capabilities,
    Capability,
    McpTransport,
    OtherAuth,
    UnknownAuth,
)
from ...pipeline.fidelity import refuse_mcp, refuse_undeclared
from .._jsonrpc import JsonRpcPeer, RpcError
from ._frames import AUTH_REQUIRED, PROTOCOL_VERSION
from ._settings import Settings

__all__ = ["AuthChoice", "AuthPolicy", "OpenedSession", "details_of", "initialize", "open_session"]

CLIENT_NAME = "corral"


@attrs.frozen(kw_only=True)
class AuthChoice:
    """An auth method corral may use unattended: `method` when `env_var` is set."""

    method: str
    env_var: str | None = None
    eager: bool = False  # authenticate before session/new, not only on -32000


@attrs.frozen(kw_only=True)
class AuthPolicy:
    """Which offered methods corral may use unattended, in order of preference.

    `agent_login`: also a method the agent runs itself (type `agent`); off
    where that would wait for a person (Gemini's Google login).
    """

    choices: tuple[AuthChoice, ...] = ()
    agent_login: bool = True


@attrs.frozen(kw_only=True)
class OpenedSession:
    session_id: str
    details: AgentDetails
    settings: Settings
    loaded: bool  # session/load replayed the history


def _client_version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("corral")
    except PackageNotFoundError:
        return "0"


def initialize_params(*, terminal: bool) -> dict[str, Any]:
    return {
        "protocolVersion": PROTOCOL_VERSION,
        "clientCapabilities": {
            "fs": {"readTextFile": True, "writeTextFile": True},
            "terminal": terminal,
            "elicitation": {"form": {}},  # forms only: corral opens no URLs for the user
        },
        "clientInfo": {"name": CLIENT_NAME, "title": "corral", "version": _client_version()},
    }


def _obj(raw: object) -> dict[str, Any]:
    return raw if isinstance(raw, dict) else {}


def details_of(init: Mapping[str, Any]) -> AgentDetails:
    """What the `initialize` answer says the agent can do."""
    caps = _obj(init.get("agentCapabilities"))
    session_caps = _obj(caps.get("sessionCapabilities"))
    features = {
        Capability.PERMISSIONS,
        Capability.PLAN,
        Capability.SLASH_COMMANDS,
        Capability.CONTEXT_USAGE,
        Capability.QUESTIONS,  # elicitation forms
    }
    if caps.get("loadSession") or session_caps.get("resume") is not None:
        features.add(Capability.RESUME)
    if _obj(caps.get("promptCapabilities")).get("image"):
        features.add(Capability.IMAGES)
    mcp = _obj(caps.get("mcpCapabilities"))
    transports = [McpTransport.STDIO]
    transports += [
        t for t, key in ((McpTransport.HTTP, "http"), (McpTransport.SSE, "sse")) if mcp.get(key)
    ]
    info = _obj(init.get("agentInfo"))
    version = info.get("version")
    return AgentDetails(
        version=version if isinstance(version, str) else None,
        capabilities=Capabilities(features=frozenset(features), mcp_transports=tuple(transports)),
        # Offered login methods say nothing about being logged in: unknown until used.
        auth=UnknownAuth(),
    )


async def initialize(peer: JsonRpcPeer, *, terminal: bool) -> dict[str, Any]:
    try:
        init = _obj(await peer.request("initialize", initialize_params(terminal=terminal)))
    except RpcError as error:
        raise CorralError(ErrorKind.PROTOCOL_FAILED, f"initialize failed: {error}") from None
    version = init.get("protocolVersion")
    if version != PROTOCOL_VERSION:
        raise CorralError(
            ErrorKind.PROTOCOL_FAILED,
            f"the agent speaks ACP protocol version {version!r}; corral speaks {PROTOCOL_VERSION}",
        )
    return init


def _mcp_server(server: McpServer) -> dict[str, Any]:
    if server.transport == "Stdio":
        return {
            "name": server.name,
            "command": server.command,
            "args": list(server.args),
            "env": [{"name": k, "value": v} for k, v in server.env],
        }
    return {
        "type": server.transport.lower(),
        "name": server.name,
        "url": server.url,
        "headers": [{"name": k, "value": v} for k, v in server.headers],
    }


def mcp_servers(servers: Sequence[McpServer], details: AgentDetails) -> list[dict[str, Any]]:
    refuse_mcp(servers, details, "this agent")
    return [_mcp_server(server) for server in servers]


def _usable(method: object, auth: AuthPolicy, environ: Mapping[str, str]) -> str | None:
    """The method's id if corral can use it with no person at hand."""
    if not isinstance(method, dict) or not isinstance(method.get("id"), str):
        return None
    method_id = str(method["id"])
    for choice in auth.choices:
        if choice.method == method_id and (choice.env_var is None or environ.get(choice.env_var)):
            return method_id
    if method.get("type") == "env_var":
        names = [v.get("name") for v in method.get("vars") or [] if isinstance(v, dict)]
        return method_id if names and all(environ.get(str(n)) for n in names) else None
    if auth.agent_login and method.get("type") in (None, "agent"):
        return method_id  # the agent runs its own login flow
    return None


def pick_method(
    init: Mapping[str, Any], auth: AuthPolicy, environ: Mapping[str, str], *, eager: bool
) -> str | None:
    """The offered method to authenticate with: the entry's preferences first."""
    methods = [m for m in init.get("authMethods") or [] if isinstance(m, dict)]
    for choice in auth.choices:
        if eager and not choice.eager:
            continue
        for method in methods:
            if method.get("id") == choice.method and _usable(method, auth, environ):
                return choice.method
    if eager:
        return None
    return next((m for method in methods if (m := _usable(method, auth, environ))), None)


async def authenticate(peer: JsonRpcPeer, method: str) -> None:
    try:
        await peer.request("authenticate", {"methodId": method})
    except RpcError as error:
        raise CorralError(
            ErrorKind.AUTH_REQUIRED, f"authentication with {method} failed: {error.message}"
        ) from None


def _auth_required(init: Mapping[str, Any], why: str) -> CorralError:
    names = [
        str(m.get("name") or m.get("id"))
        for m in init.get("authMethods") or []
        if isinstance(m, dict)
    ]
    offered = ", ".join(names) or "none offered"
    return CorralError(
        ErrorKind.AUTH_REQUIRED, f"the agent needs a login ({why}); its methods: {offered}"
    )


async def _new_session(
    peer: JsonRpcPeer,
    params: dict[str, Any],
    init: Mapping[str, Any],
    auth: AuthPolicy,
    environ: Mapping[str, str],
    authed: str | None,
) -> tuple[dict[str, Any], str | None]:
    try:
        return _obj(await peer.request("session/new", params)), authed
    except RpcError as error:
        if error.code != AUTH_REQUIRED:
            raise CorralError(ErrorKind.PROTOCOL_FAILED, f"session/new failed: {error}") from None
        if authed is not None:
            raise _auth_required(init, f"{authed} was not enough: {error.message}") from None
    method = pick_method(init, auth, environ, eager=False)
    if method is None:
        raise _auth_required(init, "no method corral can use without a person")
    await authenticate(peer, method)
    try:
        return _obj(await peer.request("session/new", params)), method
    except RpcError as error:
        if error.code == AUTH_REQUIRED:
            raise _auth_required(init, error.message) from None
        raise CorralError(ErrorKind.PROTOCOL_FAILED, f"session/new failed: {error}") from None


async def _resume(
    peer: JsonRpcPeer, init: Mapping[str, Any], token: str, base: dict[str, Any]
) -> dict[str, Any]:
    caps = _obj(init.get("agentCapabilities"))
    if caps.get("loadSession"):
        method = "session/load"
    elif _obj(caps.get("sessionCapabilities")).get("resume") is not None:
        method = "session/resume"
    else:
        raise CorralError(
            ErrorKind.UNSUPPORTED_FEATURE, "this agent cannot resume sessions", feature="Resume"
        )
    try:
        return _obj(await peer.request(method, {**base, "sessionId": token}))
    except RpcError as error:
        raise CorralError(
            ErrorKind.RESUME_FAILED, f"{method} of {token} failed: {error.message}"
        ) from None


async def configure(
    peer: JsonRpcPeer, session_id: str, settings: Settings, launch: LaunchSpec
) -> None:
    for option, value in launch.configure:
        known = settings.options.get(option)
        if known is None or not known.accepts(value):
            raise CorralError(
                ErrorKind.INVALID_CONFIGURATION, f"{value!r} is not a valid value for {option}"
            )
        method, params = settings.set_call(session_id, option, value)
        try:
            result = await peer.request(method, params)
        except RpcError as error:
            raise CorralError(
                ErrorKind.INVALID_CONFIGURATION, f"the agent refused {option}: {error.message}"
            ) from None
        settings.applied(option, value, result)


async def open_session(
    peer: JsonRpcPeer,
    *,
    launch: LaunchSpec,
    auth: AuthPolicy,
    environ: Mapping[str, str],
    terminal: bool,
) -> OpenedSession:
    init = await initialize(peer, terminal=terminal)
    details = details_of(init)
    authed = pick_method(init, auth, environ, eager=True)
    if authed is not None:
        await authenticate(peer, authed)
    # What the agent declared decides, before `session/new` uses any of it.
    refuse_undeclared(launch, details, "this agent")
    base = {"cwd": launch.dir, "mcpServers": mcp_servers(launch.mcp_servers, details)}
    if launch.resume is not None:
        result, session_id = await _resume(peer, init, launch.resume, base), launch.resume
    else:
        result, authed = await _new_session(peer, base, init, auth, environ, authed)
        new_id = result.get("sessionId")
        if not isinstance(new_id, str):
            raise CorralError(ErrorKind.PROTOCOL_FAILED, "session/new answered no sessionId")
        session_id = new_id
    settings = Settings.from_session(result)
    await configure(peer, session_id, settings, launch)
    if authed is not None:
        details = attrs.evolve(details, auth=Authenticated(kind=OtherAuth(authed)))
    details = attrs.evolve(details, config_options=settings.config_options())
    loaded = launch.resume is not None and bool(
        _obj(init.get("agentCapabilities")).get("loadSession")
    )
    return OpenedSession(session_id=session_id, details=details, settings=settings, loaded=loaded)
