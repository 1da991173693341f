"""What an agent can do: the `AgentDetails` that `probe` and `open` fill in.

`AgentDetails` gathers the agent's version, its login state (`_auth`), its
`Capabilities` (a closed set of features plus the MCP transports it takes),
the session settings it advertises (`_config`), its slash commands, and
corral's own sandbox status for the session (set by the Runtime, never by a
source). `to_wire` writes the line-protocol JSON; `from_wire` reads it back
and raises `ShapeError` naming the offending field.
"""

from __future__ import annotations

import enum

import attrs

from ._auth import AuthStatus, UnknownAuth, auth_from_wire, auth_to_wire
from ._config import ConfigOption
from ._shape import Fields, ShapeError

__all__ = [
    "AgentDetails",
    "Capabilities",
    "Capability",
    "McpTransport",
    "SandboxStatus",
    "SlashCommand",
]


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
    auth: AuthStatus = UnknownAuth()  # noqa: RUF009 - a frozen value, safe to share
    version: str | None = None
    config_options: tuple[ConfigOption, ...] = ()
    commands: tuple[SlashCommand, ...] = ()
    sandbox: SandboxStatus | None = None  # set by the Runtime, not by a source

    def to_wire(self) -> dict[str, object]:
        wire: dict[str, object] = {
            "version": self.version,
            "auth": auth_to_wire(self.auth),
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
            auth=auth_from_wire(fields.value("auth"), f"{path}.auth"),
            capabilities=capabilities,
            config_options=tuple(
                ConfigOption.from_wire(item, p) for p, item in fields.array("config_options")
            ),
            commands=tuple(commands),
            sandbox=SandboxStatus.from_wire(fields.value("sandbox"), f"{path}.sandbox")
            if fields.has("sandbox")
            else None,
        )
