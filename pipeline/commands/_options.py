"""How a session is opened: the agent to run and the options around it.

`AgentRef` names the agent: a catalog id, or an ACP or app-server executable
the catalog does not know. `SessionOptions` holds every field `open` and
`generate` carry at top level (resume, fork, permission mode, client-owned
MCP servers, settings, environment, policy, sandbox); `to_wire` leaves each
optional field out at its default so the encoding stays canonical.
"""

from __future__ import annotations

import enum

import attrs

from ..events import ConfigValue, Fields, ShapeError, config_value_from_wire, tag_of

__all__ = [
    "AcpRef",
    "AgentRef",
    "AppServerRef",
    "McpServer",
    "PermissionMode",
    "Placement",
    "SessionOptions",
    "agent_ref_from_wire",
    "agent_ref_to_wire",
]


class PermissionMode(enum.StrEnum):
    ASK = "Ask"  # forward every request to the app
    AUTO_APPROVE = "AutoApprove"  # corral allows each request once
    ACCEPT_EDITS = "AcceptEdits"  # corral allows edits once, forwards the rest


@attrs.frozen(kw_only=True)
class Placement:
    """Where a session may run on a Ray cluster (`serve --ray`): the extension field
    `"placement": {"resources": {"NAME": AMOUNT}}` pins it to nodes with those
    custom resources. Without `--ray` it has no effect."""

    resources: tuple[tuple[str, float], ...] = ()

    def to_wire(self) -> dict[str, object]:
        return {"resources": dict(self.resources)}

    @classmethod
    def from_wire(cls, fields: Fields) -> Placement:
        resources = fields.obj("resources")
        return cls(resources=tuple((name, _amount(resources, name)) for name in resources.raw))


def _amount(resources: Fields, name: str) -> float:
    amount = resources.opt_number(name)
    if amount is None or amount <= 0:
        resources.fail(name, "must be a positive number")
    return amount


@attrs.frozen(kw_only=True)
class AcpRef:
    """An ACP agent the catalog does not know."""

    name: str
    path: str
    args: tuple[str, ...] = ()


@attrs.frozen(kw_only=True)
class AppServerRef:
    """An agent speaking the app-server JSON-RPC wire."""

    name: str
    path: str
    args: tuple[str, ...] = ()


AgentRef = str | AcpRef | AppServerRef


def agent_ref_to_wire(ref: AgentRef) -> object:
    match ref:
        case str():
            return ref
        case (
            AcpRef(name=name, path=path, args=args) | AppServerRef(name=name, path=path, args=args)
        ):
            spec: dict[str, object] = {"name": name, "path": path}
            if args:
                spec["args"] = list(args)
            return {"acp" if isinstance(ref, AcpRef) else "appserver": spec}


def agent_ref_from_wire(raw: object, path: str) -> AgentRef:
    if isinstance(raw, str):
        if not raw:
            raise ShapeError(path, "agent id is empty")
        return raw
    tag, payload = tag_of(raw, path)
    spec = Fields(payload, f"{path}.{tag}")
    if tag == "acp":
        return AcpRef(
            name=spec.string("name"),
            path=spec.string("path"),
            args=spec.strings("args", True),
        )
    if tag == "appserver":
        return AppServerRef(
            name=spec.string("name"),
            path=spec.string("path"),
            args=spec.strings("args", True),
        )
    raise ShapeError(path, f"unknown agent reference {tag!r}; expected an id, acp or appserver")


@attrs.frozen(kw_only=True)
class McpServer:
    """A client-owned MCP server; `transport` is Stdio, Http or Sse."""

    name: str
    transport: str
    command: str | None = None
    args: tuple[str, ...] = ()
    env: tuple[tuple[str, str], ...] = ()
    url: str | None = None
    headers: tuple[tuple[str, str], ...] = ()

    def to_wire(self) -> dict[str, object]:
        if self.transport == "Stdio":
            spec: dict[str, object] = {
                "command": self.command,
                "args": list(self.args),
                "env": dict(self.env),
            }
        else:
            spec = {"url": self.url, "headers": dict(self.headers)}
        return {"name": self.name, "connection": {self.transport: spec}}

    @classmethod
    def from_wire(cls, raw: object, path: str) -> McpServer:
        fields = Fields(raw, path)
        tag, payload = tag_of(fields.value("connection"), f"{path}.connection")
        spec = Fields(payload, f"{path}.connection.{tag}")
        if tag == "Stdio":
            return cls(
                name=fields.string("name"),
                transport=tag,
                command=spec.string("command"),
                args=spec.strings("args"),
                env=tuple(spec.string_map("env").items()),
            )
        if tag in ("Http", "Sse"):
            return cls(
                name=fields.string("name"),
                transport=tag,
                url=spec.string("url"),
                headers=tuple(spec.string_map("headers").items()),
            )
        raise ShapeError(f"{path}.connection", f"unknown MCP transport {tag!r}")


@attrs.frozen(kw_only=True)
class SessionOptions:
    agent: AgentRef
    dir: str
    resume: str | None = None
    fork: str | None = None
    fork_at: str | None = None
    permission_mode: PermissionMode | None = None
    mcp_servers: tuple[McpServer, ...] = ()
    configure: tuple[tuple[str, ConfigValue], ...] = ()
    env: tuple[tuple[str, str], ...] = ()  # added to corral's environment
    args: tuple[str, ...] = ()  # appended to the launch arguments
    policy: str | None = None  # a policy file for this session
    show_auto_decisions: bool = False  # report policy decisions to the app
    sandbox: bool = False  # run the agent process itself in corral's OS sandbox
    placement: Placement | None = None  # on a Ray cluster: the nodes it may run on

    def to_wire(self) -> dict[str, object]:
        """The fields `open` and `generate` carry at top level; defaults left out."""
        optional: dict[str, object] = {
            "resume": self.resume,
            "fork": self.fork,
            "fork_at": self.fork_at,
            "permission_mode": None if self.permission_mode is None else self.permission_mode.value,
            "mcp_servers": [server.to_wire() for server in self.mcp_servers],
            "configure": dict(self.configure),
            "env": dict(self.env),
            "args": list(self.args),
            "policy": self.policy,
            "show_auto_decisions": self.show_auto_decisions,
            "sandbox": self.sandbox,
            "placement": None if self.placement is None else self.placement.to_wire(),
        }
        present = {k: v for k, v in optional.items() if not _is_default(v)}
        return {"agent": agent_ref_to_wire(self.agent), "dir": self.dir, **present}

    @classmethod
    def from_wire(cls, fields: Fields) -> SessionOptions:
        configure = fields.opt_obj("configure")
        placement = fields.opt_obj("placement")
        modes: dict[str, PermissionMode] = {m.value: m for m in PermissionMode}
        mode = fields.choice("permission_mode", modes) if fields.has("permission_mode") else None
        return cls(
            agent=agent_ref_from_wire(fields.value("agent"), "agent"),
            dir=fields.string("dir"),
            resume=fields.opt_string("resume"),
            fork=fields.opt_string("fork"),
            fork_at=fields.opt_string("fork_at"),
            permission_mode=mode,
            mcp_servers=tuple(
                McpServer.from_wire(item, p) for p, item in fields.array("mcp_servers", True)
            ),
            configure=()
            if configure is None
            else tuple(
                (name, config_value_from_wire(value, f"configure.{name}"))
                for name, value in configure.raw.items()
            ),
            env=tuple(fields.string_map("env", True).items()),
            args=fields.strings("args", True),
            policy=fields.opt_string("policy"),
            show_auto_decisions=fields.flag("show_auto_decisions", False),
            sandbox=fields.flag("sandbox", False),
            placement=None if placement is None else Placement.from_wire(placement),
        )


def _is_default(value: object) -> bool:
    # `is False`, not `== False`: no int field is optional, and "" is a value.
    return value is None or value is False or value == [] or value == {}
