"""The catalog: every agent corral knows, how to find it, how to drive it.

One `CatalogEntry` per agent. Adding a provider means its `sources/<name>/`
folder, its fixtures, and one line in `default_catalog`. Ad-hoc agents
(`{"acp": ...}`, `{"appserver": ...}`) are resolved by `Catalog.resolve`
through the entry of their wire.

An entry says everything corral knows of its agent, declared from the
provider's own folder: how to launch and drive it, how to probe it, and
how to read the session files the agent writes itself
(`NativeTranscripts`: a recognizer of their lines and a reader into replay
items, for `corral import`). Code above the catalog asks the entries and
never names a provider.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Iterable, Mapping
from pathlib import Path
from typing import Any

import attrs

from ..pipeline.driver import Driver, LaunchSpec, ReplayItem
from ..pipeline.events import AgentDetails, AgentInstallation, InstallationSource, PlanUsage
from ..pipeline.telemetry import SessionTelemetry

__all__ = [
    "Catalog",
    "CatalogEntry",
    "DriverFactory",
    "NativeReader",
    "NativeTranscripts",
    "UsageReader",
]

DriverFactory = Callable[[AgentInstallation, LaunchSpec, SessionTelemetry], Driver]
Prober = Callable[[AgentInstallation, Mapping[str, str]], Awaitable[AgentDetails]]
UsageReader = Callable[[AgentInstallation, Mapping[str, str]], Awaitable[PlanUsage]]
NativeReader = Callable[[Path], Iterable[ReplayItem]]
# One of the first JSON objects of a file, and the file's path: is it this agent's format?
LineRecognizer = Callable[[Mapping[str, Any], Path], bool]


@attrs.frozen(kw_only=True)
class NativeTranscripts:
    """The session files an agent writes itself, as `corral import` reads them."""

    format: str  # the format id: an imported session's agent id, its `import/<format>/` folder
    name: str  # the agent's name in an imported session
    recognizes: LineRecognizer  # asked of a file's first JSON lines, one at a time
    read: NativeReader  # the whole file, in order, as replay items


@attrs.frozen(kw_only=True)
class CatalogEntry:
    id: str
    name: str
    executable: str  # the command looked up on PATH and in known folders
    install_hint: str
    make_driver: DriverFactory
    details: AgentDetails = attrs.field(factory=AgentDetails)  # known without starting it
    known_dirs: tuple[str, ...] = ()
    version_args: tuple[str, ...] = ("--version",)
    # Learn version and login without a session; None: run `version_args`.
    probe: Prober | None = None
    # An agent that needs no executable (the mock) is always "installed".
    builtin: bool = False
    # A generic wire for ad-hoc agents ({"acp": ...}): never discovered.
    wire_only: bool = False
    # The source honours `LaunchSpec.tools=False` (the agent runs with no tools).
    disables_tools: bool = False
    # Read the plan's quota on a short-lived process; None: the agent has no plan to tell.
    plan_usage: UsageReader | None = None
    # The agent's own session files, for `corral import`; None: it writes none corral reads.
    native_transcripts: NativeTranscripts | None = None
    # corral's own `--record-wire` files of this entry's wire, for `corral import` too.
    recorded_wire: NativeTranscripts | None = None


class Catalog:
    def __init__(self, entries: Iterable[CatalogEntry] = ()) -> None:
        self._entries: dict[str, CatalogEntry] = {}
        for entry in entries:
            self.add(entry)

    def add(self, entry: CatalogEntry) -> None:
        self._entries[entry.id] = entry

    def get(self, agent_id: str) -> CatalogEntry | None:
        return self._entries.get(agent_id)

    def entries(self) -> list[CatalogEntry]:
        return list(self._entries.values())

    def ids(self) -> list[str]:
        return list(self._entries)

    def native_transcripts(self) -> list[NativeTranscripts]:
        """Every format the entries declare (their own files, then recorded wires), in order."""
        entries = self._entries.values()
        return [
            declared
            for entry in entries
            for declared in (entry.native_transcripts, entry.recorded_wire)
            if declared is not None
        ]


def builtin_installation(entry: CatalogEntry) -> AgentInstallation:
    return AgentInstallation(
        id=entry.id, name=entry.name, executable_path="(built in)", source=InstallationSource.PINNED
    )
