"""Resolving agent references: catalog ids and ad-hoc agents, discovery, probe.

The finder turns what the app names (`"claude"`, `{"acp": {...}}`) into a
catalog entry and an installation, or a clear error: an unknown id lists
the known ones; a missing agent says where corral looked and how to
install it. File-system searches run in a worker thread. It knows agents
only through their catalog entries (a `builtin` entry, such as the mock's,
needs no executable); it names no provider.
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping

from ..pipeline.commands import AcpRef, AgentRef, AppServerRef
from ..pipeline.driver import Driver, LaunchSpec
from ..pipeline.errors import CorralError, ErrorKind
from ..pipeline.events import (
    AgentDetails,
    AgentInstallation,
    DiagnosticLevel,
    DiagnosticNote,
    DiscoveryReport,
    InstallationSource,
    MissingAgent,
)
from ..pipeline.telemetry import SessionTelemetry
from ..sources.catalog import Catalog, CatalogEntry, builtin_installation
from ..sources.discovery import locate, login_shell_path

__all__ = ["AgentFinder"]

_VERSION_TIMEOUT = 15.0


def _default_catalog() -> Catalog:
    from ..sources.registry import default_catalog

    return default_catalog()


class AgentFinder:
    def __init__(self, *, catalog: Catalog | None, environ: Mapping[str, str]) -> None:
        self.catalog = catalog if catalog is not None else _default_catalog()
        self.environ = dict(environ)
        self._login_path: str | None = None
        self._login_path_read = False

    def _login(self) -> str | None:
        if not self._login_path_read:
            self._login_path = login_shell_path(self.environ)
            self._login_path_read = True
        return self._login_path

    def _locate(self, entry: CatalogEntry, *, with_login: bool) -> AgentInstallation | MissingAgent:
        if entry.builtin:
            return builtin_installation(entry)
        return locate(
            agent_id=entry.id,
            name=entry.name,
            executable=entry.executable,
            install_hint=entry.install_hint,
            environ=self.environ,
            login_path=self._login() if with_login else None,
            known_dirs=entry.known_dirs,
        )

    async def resolve(self, ref: AgentRef) -> tuple[CatalogEntry, AgentInstallation]:
        if isinstance(ref, AcpRef | AppServerRef):
            return self._ad_hoc(ref)
        entry = self.catalog.get(ref)
        if entry is None or entry.wire_only:
            # Not a bad request: an agent corral does not know is an agent it cannot find.
            known = ", ".join(e.id for e in self.catalog.entries() if not e.wire_only)
            raise CorralError(
                ErrorKind.NOT_INSTALLED,
                f"unknown agent {ref!r}; known agents: {known or 'none'}",
                searched=[f"corral's agent catalog ({known or 'empty'})"],
                install_hint="name a known agent, or an ad-hoc agent "
                '{"acp": {"name", "path", "args"}}',
            )
        found = await asyncio.to_thread(self._locate, entry, with_login=False)
        if isinstance(found, MissingAgent):
            found = await asyncio.to_thread(self._locate, entry, with_login=True)
        if isinstance(found, MissingAgent):
            raise CorralError(
                ErrorKind.NOT_INSTALLED,
                f"{entry.name} is not installed (install: {entry.install_hint})",
                searched=list(found.searched),
                install_hint=found.install_hint,
            )
        return entry, found

    def _ad_hoc(self, ref: AcpRef | AppServerRef) -> tuple[CatalogEntry, AgentInstallation]:
        wire = "acp" if isinstance(ref, AcpRef) else "appserver"
        entry = self.catalog.get(wire)
        if entry is None:
            raise CorralError(
                ErrorKind.UNSUPPORTED_FEATURE, f"this corral cannot drive {wire} agents"
            )
        installation = AgentInstallation(
            id=ref.name,
            name=ref.name,
            executable_path=ref.path,
            source=InstallationSource.PINNED,
            acp_args=ref.args,
        )
        return entry, installation

    def driver(
        self,
        entry: CatalogEntry,
        installation: AgentInstallation,
        launch: LaunchSpec,
        telemetry: SessionTelemetry,
    ) -> Driver:
        return entry.make_driver(installation, launch, telemetry)

    async def discover(self) -> DiscoveryReport:
        agents: list[AgentInstallation] = []
        missing: list[MissingAgent] = []
        notes: list[DiagnosticNote] = []
        for entry in self.catalog.entries():
            if entry.wire_only:
                continue
            found = await asyncio.to_thread(self._locate, entry, with_login=True)
            if isinstance(found, MissingAgent):
                missing.append(found)
            else:
                agents.append(found)
        if self._login_path_read and self._login_path is None and missing:
            notes.append(
                DiagnosticNote(
                    level=DiagnosticLevel.INFO,
                    message="the login shell's PATH could not be read; searched PATH only",
                )
            )
        return DiscoveryReport(
            agents=tuple(agents), missing=tuple(missing), diagnostics=tuple(notes)
        )

    async def probe(self, ref: AgentRef) -> AgentDetails:
        entry, installation = await self.resolve(ref)
        if entry.probe is not None:
            return await entry.probe(installation, self.environ)
        if entry.builtin:
            return entry.details
        return await _version_probe(entry, installation, self.environ)


async def _version_probe(
    entry: CatalogEntry, installation: AgentInstallation, environ: Mapping[str, str]
) -> AgentDetails:
    import attrs

    try:
        process = await asyncio.create_subprocess_exec(
            installation.executable_path,
            *entry.version_args,
            stdin=asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
            env=dict(environ),
            start_new_session=True,
        )
    except OSError as error:
        raise CorralError(
            ErrorKind.NOT_INSTALLED, f"cannot run {installation.executable_path}: {error}"
        ) from None
    try:
        async with asyncio.timeout(_VERSION_TIMEOUT):
            out, _ = await process.communicate()
    except TimeoutError:
        process.kill()
        await process.wait()
        raise CorralError(
            ErrorKind.HANDSHAKE_TIMEOUT, f"{entry.name} did not print its version in time"
        ) from None
    first = out.decode("utf-8", "replace").strip().split("\n", 1)[0].strip()
    version = first or None
    return attrs.evolve(entry.details, version=version)
