"""In-process helpers: a sink that can be stalled, a flood of text, a catalog of one
driver object.

Waiting on a condition is `tests.support.waiting`'s job.
"""

from __future__ import annotations

import asyncio

from corral.pipeline.channels import Channel
from corral.pipeline.driver import Driver
from corral.pipeline.events import AgentDetails, Event
from corral.pipeline.records import SinkItem
from corral.sources.catalog import Catalog, CatalogEntry


class GateSink:
    """A sink that consumes only while its gate is open; records what it saw."""

    name = "gate"

    def __init__(self) -> None:
        self.gate = asyncio.Event()
        self.seen: list[SinkItem] = []
        self.channel: Channel[SinkItem] | None = None

    async def run(self, items_in: Channel[SinkItem]) -> None:
        self.channel = items_in
        while True:
            await self.gate.wait()
            try:
                item = await items_in.receive()
            except Exception:
                return
            self.seen.append(item)

    def events(self) -> list[Event]:
        return [item for item in self.seen if isinstance(item, Event)]


def text_turn(count: int) -> dict[str, object]:
    return {
        "turns": [
            [
                {
                    "Repeat": {
                        "times": count,
                        "steps": [{"Emit": {"TextDelta": {"message_id": "m1", "text": "x"}}}],
                    }
                },
                {"End": {"Completed": {"source": "Protocol"}}},
            ]
        ]
    }


def catalog_of(driver: Driver, entry_id: str) -> Catalog:
    """A catalog whose one agent, `entry_id`, is `driver` (a live source without a process)."""
    entry = CatalogEntry(
        id=entry_id,
        name=f"the test driver {entry_id}",
        executable="",
        install_hint="",
        make_driver=lambda *_: driver,
        details=AgentDetails(),
        builtin=True,
    )
    return Catalog([entry])
