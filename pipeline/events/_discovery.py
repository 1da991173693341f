"""Discovery: where each agent is installed, and the agents corral could not find.

`discover` answers with a `DiscoveryReport`: one `AgentInstallation` per agent
it found (the executable, how it was found, an upgrade hint when the installed
version is too old), one `MissingAgent` per agent it did not (where it looked
and how to install it), and `DiagnosticNote`s for problems outside any
session. Each value reads itself from the wire (`from_wire`, raising
`ShapeError` naming the field) and writes itself back (`to_wire`).
"""

from __future__ import annotations

import enum

import attrs

from ._shape import Fields

__all__ = [
    "AgentInstallation",
    "DiagnosticLevel",
    "DiagnosticNote",
    "DiscoveryReport",
    "InstallationSource",
    "MissingAgent",
]


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
