"""What corral knows about an agent: where it is installed and what it can do.

`discover` returns installations and the agents it could not find (with
where it looked and how to install them); `probe` and `open` fill in
`AgentDetails` (version, login, capabilities, settings, slash commands).
"""

from __future__ import annotations

import enum

import attrs

from ._shape import Fields, ShapeError, as_str, tag_of

__all__ = [
    "AccountInfo",
    "AgentDetails",
    "AgentInstallation",
    "AuthKind",
    "AuthStatus",
    "Authenticated",
    "Capabilities",
    "Capability",
    "ConfigChoice",
    "ConfigOption",
    "ConfigValue",
    "DiagnosticLevel",
    "DiagnosticNote",
    "DiscoveryReport",
    "EnvVarLogin",
    "InstallationSource",
    "LoginMethod",
    "McpTransport",
    "MissingAgent",
    "OtherAuth",
    "SandboxStatus",
    "SlashCommand",
    "TerminalLogin",
    "Unauthenticated",
    "UnknownAuth",
    "config_value_from_wire",
]

ConfigValue = str | bool


def config_value_from_wire(raw: object, path: str) -> ConfigValue:
    if isinstance(raw, str | bool):
        return raw
    raise ShapeError(path, "expected a string or a boolean")


class InstallationSource(enum.StrEnum):
    ENV_OVERRIDE = "EnvOverride"
    PATH = "Path"
    LOGIN_SHELL_PATH = "LoginShellPath"
    VERSION_MANAGER = "VersionManager"
    KNOWN_LOCATION = "KnownLocation"
    PINNED = "Pinned"


@attrs.frozen(kw_only=True)
class MissingAgent:
    id: str
    name: str
    searched: tuple[str, ...]
    install_hint: str

    def to_wire(self) -> dict[str, object]:
        return {
            "id": self.id,
            "name": self.name,
            "searched": list(self.searched),
            "install_hint": self.install_hint,
        }

    @classmethod
    def from_wire(cls, raw: object, path: str) -> MissingAgent:
        fields = Fields(raw, path)
        return cls(
            id=fields.string("id"),
            name=fields.string("name"),
            searched=fields.strings("searched"),
            install_hint=fields.string("install_hint"),
        )


@attrs.frozen(kw_only=True)
class AgentInstallation:
    id: str
    name: str
    executable_path: str
    source: InstallationSource
    upgrade: MissingAgent | None = None
    acp_args: tuple[str, ...] | None = None

    def to_wire(self) -> dict[str, object]:
        return {
            "id": self.id,
            "name": self.name,
            "executable_path": self.executable_path,
            "source": self.source.value,
            "upgrade": None if self.upgrade is None else self.upgrade.to_wire(),
            "acp_args": None if self.acp_args is None else list(self.acp_args),
        }

    @classmethod
    def from_wire(cls, raw: object, path: str) -> AgentInstallation:
        fields = Fields(raw, path)
        upgrade = fields.opt_obj("upgrade")
        return cls(
            id=fields.string("id"),
            name=fields.string("name"),
            executable_path=fields.string("executable_path"),
            source=fields.choice("source", {s.value: s for s in InstallationSource}),
            upgrade=None if upgrade is None else MissingAgent.from_wire(upgrade.raw, upgrade.path),
            acp_args=fields.strings("acp_args") if fields.has("acp_args") else None,
        )


class AuthKind(enum.StrEnum):
    SUBSCRIPTION = "Subscription"
    API_KEY = "ApiKey"
    CLOUD_PROVIDER = "CloudProvider"


@attrs.frozen
class OtherAuth:
    name: str


@attrs.frozen(kw_only=True)
class AccountInfo:
    email: str | None = None
    plan: str | None = None


@attrs.frozen
class UnknownAuth:
    pass


@attrs.frozen(kw_only=True)
class Authenticated:
    kind: AuthKind | OtherAuth
    account: AccountInfo | None = None


@attrs.frozen(kw_only=True)
class TerminalLogin:
    command: tuple[str, ...]
    description: str
    env: tuple[tuple[str, str], ...] = ()


@attrs.frozen(kw_only=True)
class EnvVarLogin:
    name: str


LoginMethod = TerminalLogin | EnvVarLogin


@attrs.frozen(kw_only=True)
class Unauthenticated:
    login: tuple[LoginMethod, ...] = ()


AuthStatus = UnknownAuth | Authenticated | Unauthenticated


def _auth_to_wire(auth: AuthStatus) -> object:
    match auth:
        case UnknownAuth():
            return "Unknown"
        case Authenticated(kind=kind, account=account):
            return {
                "Authenticated": {
                    "kind": {"Other": kind.name} if isinstance(kind, OtherAuth) else kind.value,
                    "account": None
                    if account is None
                    else {"email": account.email, "plan": account.plan},
                }
            }
        case Unauthenticated(login=login):
            methods: list[object] = []
            for method in login:
                if isinstance(method, TerminalLogin):
                    methods.append(
                        {
                            "Terminal": {
                                "command": list(method.command),
                                "env": dict(method.env),
                                "description": method.description,
                            }
                        }
                    )
                else:
                    methods.append({"EnvVar": {"name": method.name}})
            return {"Unauthenticated": {"login": methods}}


def _auth_from_wire(raw: object, path: str) -> AuthStatus:
    tag, payload = tag_of(raw, path, frozenset({"Unknown"}))
    if payload is None:
        return UnknownAuth()
    fields = Fields(payload, f"{path}.{tag}")
    if tag == "Authenticated":
        kind_tag, kind_payload = tag_of(
            fields.value("kind"), f"{fields.path}.kind", frozenset(k.value for k in AuthKind)
        )
        if kind_payload is None:
            kind: AuthKind | OtherAuth = AuthKind(kind_tag)
        elif kind_tag == "Other":
            kind = OtherAuth(as_str(kind_payload, f"{fields.path}.kind.Other"))
        else:
            raise ShapeError(f"{fields.path}.kind", f"unknown auth kind {kind_tag!r}")
        account = fields.opt_obj("account")
        return Authenticated(
            kind=kind,
            account=None
            if account is None
            else AccountInfo(email=account.opt_string("email"), plan=account.opt_string("plan")),
        )
    if tag == "Unauthenticated":
        methods: list[LoginMethod] = []
        for item_path, item in fields.array("login"):
            method_tag, method_payload = tag_of(item, item_path)
            method = Fields(method_payload, f"{item_path}.{method_tag}")
            if method_tag == "Terminal":
                methods.append(
                    TerminalLogin(
                        command=method.strings("command"),
                        description=method.string("description"),
                        env=tuple(method.string_map("env").items()),
                    )
                )
            elif method_tag == "EnvVar":
                methods.append(EnvVarLogin(name=method.string("name")))
            else:
                raise ShapeError(item_path, f"unknown login method {method_tag!r}")
        return Unauthenticated(login=tuple(methods))
    raise ShapeError(path, f"unknown auth status {tag!r}")


class Capability(enum.StrEnum):
    IMAGES = "Images"
    RESUME = "Resume"
    STEER = "Steer"
    PERMISSIONS = "Permissions"
    QUESTIONS = "Questions"
    ROLLBACK = "Rollback"
    FORK = "Fork"
    SLASH_COMMANDS = "SlashCommands"
    PLAN = "Plan"
    SUBAGENTS = "Subagents"
    CONTEXT_USAGE = "ContextUsage"
    PLAN_USAGE = "PlanUsage"
    ROLLBACK_FILES = "RollbackFiles"
    COMPACT = "Compact"


class McpTransport(enum.StrEnum):
    STDIO = "Stdio"
    HTTP = "Http"
    SSE = "Sse"


@attrs.frozen(kw_only=True)
class Capabilities:
    features: frozenset[Capability] = frozenset()
    mcp_transports: tuple[McpTransport, ...] = ()

    def __contains__(self, feature: object) -> bool:
        return feature in self.features

    def to_wire(self) -> dict[str, object]:
        return {
            # Sorted by declaration order so the wire is stable run to run.
            "features": [c.value for c in Capability if c in self.features],
            "mcp_transports": [t.value for t in self.mcp_transports],
        }


@attrs.frozen(kw_only=True)
class ConfigChoice:
    value: str
    label: str
    description: str | None = None


@attrs.frozen(kw_only=True)
class ConfigOption:
    """A session setting the agent advertises (`model`, `effort`, `mode`...).

    `choices` empty with `boolean` false is never built: a Select has choices.
    """

    id: str
    name: str
    live: bool
    boolean: bool = False
    choices: tuple[ConfigChoice, ...] = ()
    category: str | None = None
    current: ConfigValue | None = None

    def to_wire(self) -> dict[str, object]:
        kind: object = (
            "Boolean"
            if self.boolean
            else {
                "Select": {
                    "choices": [
                        {"value": c.value, "label": c.label, "description": c.description}
                        for c in self.choices
                    ]
                }
            }
        )
        return {
            "id": self.id,
            "name": self.name,
            "category": self.category,
            "kind": kind,
            "current": self.current,
            "live": self.live,
        }

    def accepts(self, value: ConfigValue) -> bool:
        if self.boolean:
            return isinstance(value, bool)
        return isinstance(value, str) and any(c.value == value for c in self.choices)

    @classmethod
    def from_wire(cls, raw: object, path: str) -> ConfigOption:
        fields = Fields(raw, path)
        tag, payload = tag_of(fields.value("kind"), f"{path}.kind", frozenset({"Boolean"}))
        choices: list[ConfigChoice] = []
        if payload is not None:
            if tag != "Select":
                raise ShapeError(f"{path}.kind", f"unknown config kind {tag!r}")
            select = Fields(payload, f"{path}.kind.{tag}")
            for item_path, item in select.array("choices"):
                choice = Fields(item, item_path)
                choices.append(
                    ConfigChoice(
                        value=choice.string("value"),
                        label=choice.string("label"),
                        description=choice.opt_string("description"),
                    )
                )
        current = fields.raw.get("current")
        return cls(
            id=fields.string("id"),
            name=fields.string("name"),
            live=fields.flag("live"),
            boolean=payload is None,
            choices=tuple(choices),
            category=fields.opt_string("category"),
            current=None if current is None else config_value_from_wire(current, f"{path}.current"),
        )


@attrs.frozen(kw_only=True)
class SlashCommand:
    name: str
    description: str
    input_hint: str | None = None

    def to_wire(self) -> dict[str, object]:
        return {"name": self.name, "description": self.description, "input_hint": self.input_hint}


@attrs.frozen(kw_only=True)
class SandboxStatus:
    """corral's OS sandbox (bubblewrap) for a session: an extension field of AgentDetails."""

    available: bool  # bubblewrap works on this machine
    commands: bool  # commands corral runs for the agent run inside it
    agent: bool  # the agent process itself runs inside it
    reason: str = ""  # why it is unavailable, or which bwrap works

    def to_wire(self) -> dict[str, object]:
        return {
            "tool": "bubblewrap",
            "available": self.available,
            "commands": self.commands,
            "agent": self.agent,
            "reason": self.reason,
        }

    @classmethod
    def from_wire(cls, raw: object, path: str) -> SandboxStatus:
        fields = Fields(raw, path)
        return cls(
            available=fields.flag("available"),
            commands=fields.flag("commands"),
            agent=fields.flag("agent"),
            reason=fields.opt_string("reason") or "",
        )


@attrs.frozen(kw_only=True)
class AgentDetails:
    """What `probe` and `open` learn about an agent."""

    capabilities: Capabilities = Capabilities()
    auth: AuthStatus = UnknownAuth()
    version: str | None = None
    config_options: tuple[ConfigOption, ...] = ()
    commands: tuple[SlashCommand, ...] = ()
    sandbox: SandboxStatus | None = None  # set by the Runtime, not by a source

    def to_wire(self) -> dict[str, object]:
        wire: dict[str, object] = {
            "version": self.version,
            "auth": _auth_to_wire(self.auth),
            "capabilities": self.capabilities.to_wire(),
            "config_options": [option.to_wire() for option in self.config_options],
            "commands": [command.to_wire() for command in self.commands],
        }
        if self.sandbox is not None:  # an extra field: the seed schema allows it
            wire["sandbox"] = self.sandbox.to_wire()
        return wire

    @classmethod
    def from_wire(cls, raw: object, path: str) -> AgentDetails:
        fields = Fields(raw, path)
        caps = fields.obj("capabilities")
        features = caps.strings("features")
        transports = caps.strings("mcp_transports")
        try:
            capabilities = Capabilities(
                features=frozenset(Capability(f) for f in features),
                mcp_transports=tuple(McpTransport(t) for t in transports),
            )
        except ValueError as error:
            raise ShapeError(caps.path, str(error)) from None
        commands = []
        for item_path, item in fields.array("commands"):
            command = Fields(item, item_path)
            commands.append(
                SlashCommand(
                    name=command.string("name"),
                    description=command.string("description"),
                    input_hint=command.opt_string("input_hint"),
                )
            )
        return cls(
            version=fields.opt_string("version"),
            auth=_auth_from_wire(fields.value("auth"), f"{path}.auth"),
            capabilities=capabilities,
            config_options=tuple(
                ConfigOption.from_wire(item, p) for p, item in fields.array("config_options")
            ),
            commands=tuple(commands),
            sandbox=SandboxStatus.from_wire(fields.value("sandbox"), f"{path}.sandbox")
            if fields.has("sandbox")
            else None,
        )


class DiagnosticLevel(enum.StrEnum):
    INFO = "Info"
    WARNING = "Warning"
    ERROR = "Error"


@attrs.frozen(kw_only=True)
class DiagnosticNote:
    """A diagnostic outside any session (discovery problems)."""

    level: DiagnosticLevel
    message: str

    def to_wire(self) -> dict[str, object]:
        return {"level": self.level.value, "message": self.message}

    @classmethod
    def from_wire(cls, raw: object, path: str) -> DiagnosticNote:
        fields = Fields(raw, path)
        levels = {level.value: level for level in DiagnosticLevel}
        return cls(level=fields.choice("level", levels), message=fields.string("message"))


@attrs.frozen(kw_only=True)
class DiscoveryReport:
    agents: tuple[AgentInstallation, ...] = ()
    missing: tuple[MissingAgent, ...] = ()
    diagnostics: tuple[DiagnosticNote, ...] = ()

    def to_wire(self) -> dict[str, object]:
        return {
            "agents": [agent.to_wire() for agent in self.agents],
            "missing": [agent.to_wire() for agent in self.missing],
            "diagnostics": [note.to_wire() for note in self.diagnostics],
        }

    @classmethod
    def from_wire(cls, raw: object, path: str = "report") -> DiscoveryReport:
        fields = Fields(raw, path)
        return cls(
            agents=tuple(AgentInstallation.from_wire(a, p) for p, a in fields.array("agents")),
            missing=tuple(MissingAgent.from_wire(m, p) for p, m in fields.array("missing")),
            diagnostics=tuple(
                DiagnosticNote.from_wire(n, p) for p, n in fields.array("diagnostics")
            ),
        )
