"""Commands from the app, as typed values: what one `Frame` asks for.

`command_from_wire` reads the `cmd`-tagged object of one frame into one of
the command classes below, or raises `ShapeError` naming the bad field;
`command_to_wire` writes one back (for clients and tests that speak to
`corral serve`). `Frame` pairs a command with the id its reply will carry.
Commands are plain frozen values so they can cross a process boundary.

Encoding is canonical: an optional field at its default (null, `[]`, `{}`,
false) is left out, as an app would write it. So `from_wire(to_wire(x)) ==
x` always, and `to_wire(from_wire(j)) == j` for every canonical `j`.
"""

from __future__ import annotations

import enum
from collections.abc import Callable

import attrs

from .events import (
    Answer,
    ConfigValue,
    Fields,
    ShapeError,
    answer_from_wire,
    config_value_from_wire,
    tag_of,
)

__all__ = [
    "AcpRef",
    "AgentRef",
    "AnswerCmd",
    "AppServerRef",
    "CancelCmd",
    "CloseCmd",
    "Command",
    "CompactCmd",
    "ConfigureCmd",
    "DequeueCmd",
    "DiscoverCmd",
    "Frame",
    "GenerateCmd",
    "InfoCmd",
    "McpServer",
    "OpenCmd",
    "PermissionMode",
    "PlanUsageCmd",
    "ProbeCmd",
    "PromptCmd",
    "RollbackCmd",
    "RollbackScope",
    "SessionOptions",
    "agent_ref_from_wire",
    "agent_ref_to_wire",
    "command_from_wire",
    "command_to_wire",
]


class PermissionMode(enum.StrEnum):
    ASK = "Ask"  # forward every request to the app
    AUTO_APPROVE = "AutoApprove"  # corral allows each request once
    ACCEPT_EDITS = "AcceptEdits"  # corral allows edits once, forwards the rest


class RollbackScope(enum.StrEnum):
    CONVERSATION = "Conversation"
    CONVERSATION_AND_FILES = "ConversationAndFiles"


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
        }
        present = {k: v for k, v in optional.items() if not _is_default(v)}
        return {"agent": agent_ref_to_wire(self.agent), "dir": self.dir, **present}

    @classmethod
    def from_wire(cls, fields: Fields) -> SessionOptions:
        configure = fields.opt_obj("configure")
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
        )


@attrs.frozen
class DiscoverCmd:
    pass


@attrs.frozen
class ProbeCmd:
    agent: AgentRef


@attrs.frozen
class PlanUsageCmd:
    agent: AgentRef


@attrs.frozen
class OpenCmd:
    options: SessionOptions


@attrs.frozen(kw_only=True)
class GenerateCmd:
    options: SessionOptions
    prompt: str


@attrs.frozen(kw_only=True)
class PromptCmd:
    session: str
    text: str
    attachments: tuple[str, ...] = ()


@attrs.frozen(kw_only=True)
class DequeueCmd:
    session: str
    prompt: str


@attrs.frozen(kw_only=True)
class AnswerCmd:
    session: str
    request: str
    answer: Answer


@attrs.frozen(kw_only=True)
class ConfigureCmd:
    session: str
    option: str
    value: ConfigValue


@attrs.frozen(kw_only=True)
class RollbackCmd:
    session: str
    turns: int
    scope: RollbackScope


@attrs.frozen
class CompactCmd:
    session: str


@attrs.frozen(kw_only=True)
class CancelCmd:
    session: str
    clear_queue: bool = False


@attrs.frozen
class InfoCmd:
    session: str


@attrs.frozen
class CloseCmd:
    session: str


Command = (
    DiscoverCmd
    | ProbeCmd
    | PlanUsageCmd
    | OpenCmd
    | GenerateCmd
    | PromptCmd
    | DequeueCmd
    | AnswerCmd
    | ConfigureCmd
    | RollbackCmd
    | CompactCmd
    | CancelCmd
    | InfoCmd
    | CloseCmd
)


def _rollback(f: Fields) -> RollbackCmd:
    turns = f.integer("turns", minimum=1)
    return RollbackCmd(
        session=f.string("session"),
        turns=turns,
        scope=f.choice("scope", {s.value: s for s in RollbackScope}),
    )


_READERS: dict[str, Callable[[Fields], Command]] = {
    "discover": lambda f: DiscoverCmd(),
    "probe": lambda f: ProbeCmd(agent_ref_from_wire(f.value("agent"), "agent")),
    "plan_usage": lambda f: PlanUsageCmd(agent_ref_from_wire(f.value("agent"), "agent")),
    "open": lambda f: OpenCmd(SessionOptions.from_wire(f)),
    "generate": lambda f: GenerateCmd(
        options=SessionOptions.from_wire(f), prompt=f.string("prompt")
    ),
    "prompt": lambda f: PromptCmd(
        session=f.string("session"),
        text=f.string("text"),
        attachments=f.strings("attachments", True),
    ),
    "dequeue": lambda f: DequeueCmd(session=f.string("session"), prompt=f.string("prompt")),
    "answer": lambda f: AnswerCmd(
        session=f.string("session"),
        request=f.string("request"),
        answer=answer_from_wire(f.value("answer"), "answer"),
    ),
    "configure": lambda f: ConfigureCmd(
        session=f.string("session"),
        option=f.string("option"),
        value=config_value_from_wire(f.value("value"), "value"),
    ),
    "rollback": _rollback,
    "compact": lambda f: CompactCmd(f.string("session")),
    "cancel": lambda f: CancelCmd(
        session=f.string("session"), clear_queue=f.flag("clear_queue", False)
    ),
    "info": lambda f: InfoCmd(f.string("session")),
    "close": lambda f: CloseCmd(f.string("session")),
}

COMMAND_NAMES = frozenset(_READERS)


def command_from_wire(fields: Fields) -> Command:
    name = fields.string("cmd")
    reader = _READERS.get(name)
    if reader is None:
        fields.fail("cmd", f"unknown command {name!r}; expected one of {', '.join(_READERS)}")
    return reader(fields)


def _is_default(value: object) -> bool:
    # `is False`, not `== False`: no int field is optional, and "" is a value.
    return value is None or value is False or value == [] or value == {}


def command_to_wire(command: Command) -> dict[str, object]:
    """The `cmd`-tagged object of one command, in canonical form."""
    match command:
        case DiscoverCmd():
            return {"cmd": "discover"}
        case ProbeCmd(agent=agent):
            return {"cmd": "probe", "agent": agent_ref_to_wire(agent)}
        case PlanUsageCmd(agent=agent):
            return {"cmd": "plan_usage", "agent": agent_ref_to_wire(agent)}
        case OpenCmd(options=options):
            return {"cmd": "open", **options.to_wire()}
        case GenerateCmd(options=options, prompt=prompt):
            return {"cmd": "generate", **options.to_wire(), "prompt": prompt}
        case PromptCmd(session=sid, text=text, attachments=attachments):
            extra = {"attachments": list(attachments)} if attachments else {}
            return {"cmd": "prompt", "session": sid, "text": text, **extra}
        case DequeueCmd(session=sid, prompt=prompt_id):
            return {"cmd": "dequeue", "session": sid, "prompt": prompt_id}
        case AnswerCmd(session=sid, request=request_id, answer=answer):
            return {
                "cmd": "answer",
                "session": sid,
                "request": request_id,
                "answer": answer.to_wire(),
            }
        case ConfigureCmd(session=sid, option=option, value=value):
            return {"cmd": "configure", "session": sid, "option": option, "value": value}
        case RollbackCmd(session=sid, turns=turns, scope=scope):
            return {"cmd": "rollback", "session": sid, "turns": turns, "scope": scope.value}
        case CancelCmd(session=sid, clear_queue=clear_queue):
            return {
                "cmd": "cancel",
                "session": sid,
                **({"clear_queue": True} if clear_queue else {}),
            }
        case CompactCmd(session=sid):
            return {"cmd": "compact", "session": sid}
        case InfoCmd(session=sid):
            return {"cmd": "info", "session": sid}
        case CloseCmd(session=sid):
            return {"cmd": "close", "session": sid}


@attrs.frozen
class Frame:
    """One line from the app: the id its reply will carry, and the command."""

    id: int
    command: Command

    def to_wire(self) -> dict[str, object]:
        return {"id": self.id, **command_to_wire(self.command)}

    @classmethod
    def from_wire(cls, raw: object) -> Frame:
        fields = Fields(raw)
        return cls(fields.integer("id"), command_from_wire(fields))
