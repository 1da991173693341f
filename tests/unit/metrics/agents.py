"""Many mock agents with many models, and processes for the in-process mock.

The cardinality tests need more agent ids and models than the caps admit,
drawn at random, and the in-process mock starts no process. `Reporting`
wraps any driver: it sets `corral/tokens` and `corral/model` (the telemetry
conventions) on every `ContextUsage` the agent emits, over whatever the
script's `Usage` step said, and, for in-process drivers, reports a process
start and exit through the session's telemetry as a real source would.
`catalog(script, agents, models)` builds a catalog of such agents.
"""

from __future__ import annotations

import asyncio
import random
from collections.abc import Sequence

import attrs
from corral.pipeline.driver import (
    AgentExited,
    Driver,
    DriverCommand,
    DriverEvent,
    Emitted,
    EventSink,
    Handshake,
    LaunchSpec,
)
from corral.pipeline.events import AgentInstallation, ContextUsage
from corral.pipeline.telemetry import SessionTelemetry
from corral.sources.catalog import Catalog, CatalogEntry, DriverFactory
from corral.sources.mock import MockScript
from corral.sources.mock import catalog_entry as mock_entry

__all__ = ["Reporting", "catalog"]


class _Tagging:
    def __init__(self, events_out: EventSink, owner: Reporting) -> None:
        self._events_out = events_out
        self._owner = owner

    async def send(self, item: DriverEvent) -> None:
        if isinstance(item, Emitted) and isinstance(item.kind, ContextUsage):
            item = attrs.evolve(item, extensions={**item.extensions, **self._owner.usage()})
        if isinstance(item, AgentExited):
            self._owner.exited(item.status)
        await self._events_out.send(item)

    async def send_batch(self, batch: Sequence[DriverEvent]) -> None:
        for item in batch:
            await self.send(item)


class Reporting:
    def __init__(
        self,
        inner: Driver,
        telemetry: SessionTelemetry,
        *,
        models: Sequence[str],
        seed: int,
        reports_process: bool,
    ) -> None:
        self._inner = inner
        self._telemetry = telemetry
        self._models = models
        self._random = random.Random(seed)
        self._reports_process = reports_process
        self._exited = False

    def usage(self) -> dict[str, object]:
        tokens = {
            "input": self._random.randint(100, 5000),
            "output": self._random.randint(10, 2000),
            "cache_read": self._random.randint(0, 10000),
            "cache_write": self._random.randint(0, 1000),
            "reasoning": self._random.randint(0, 500),
        }
        return {"corral/tokens": tokens, "corral/model": self._random.choice(self._models)}

    def exited(self, status: str) -> None:
        if self._reports_process and not self._exited:
            self._exited = True
            self._telemetry.process_exited(status)

    async def start(self, tasks: asyncio.TaskGroup) -> Handshake:
        handshake = await self._inner.start(tasks)
        if self._reports_process:
            self._telemetry.process_started()
        return handshake

    async def run(self, events_out: EventSink) -> None:
        await self._inner.run(_Tagging(events_out, self))

    async def send(self, command: DriverCommand) -> None:
        await self._inner.send(command)

    async def stop(self, grace: float) -> None:
        await self._inner.stop(grace)
        self.exited("0")


def _reporting(
    base: CatalogEntry, models: Sequence[str], seed: int, reports_process: bool
) -> DriverFactory:
    def make(
        installation: AgentInstallation, spec: LaunchSpec, telemetry: SessionTelemetry
    ) -> Driver:
        inner = base.make_driver(installation, spec, telemetry)
        return Reporting(
            inner, telemetry, models=models, seed=seed, reports_process=reports_process
        )

    return make


def catalog(script: MockScript, agents: Sequence[str], models: Sequence[str]) -> Catalog:
    """One mock agent per id, each reporting usage with models drawn from `models`."""
    entries = []
    for index, agent_id in enumerate(agents):
        base = mock_entry(script, agent_id=agent_id)
        make = _reporting(base, models, index, reports_process=not script.process)
        entries.append(attrs.evolve(base, make_driver=make))
    return Catalog(entries)
