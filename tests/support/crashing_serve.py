"""`corral serve` whose only agent has a bug: its driver raises mid-turn.

Run as a subprocess (`python -m tests.support.crashing_serve`); it speaks
the line protocol on its stdin/stdout exactly as `corral serve` does, with
a catalog of one agent, `crashy`. Its turn says "hello" and asks a
permission (`r1`); once answered, the driver raises while delivering the
text "boom" (a bug in a source, not a wire error), so corral's crash path
is what ends the session, mid-turn, at a moment the test chooses.

`crashing_catalog()` is the same agent for in-process tests.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence

from corral.actors.cli import version
from corral.actors.runtime import Runtime
from corral.actors.server import serve
from corral.actors.stdio import open_stdio
from corral.pipeline.driver import DriverEvent, Emitted, EventSink, LaunchSpec
from corral.pipeline.events import AgentInstallation, TextDelta
from corral.pipeline.telemetry import SessionTelemetry
from corral.sources.catalog import Catalog, CatalogEntry
from corral.sources.mock import MockDriver, parse_script

__all__ = ["BOOM", "crashing_catalog"]

BOOM = "boom"
ASK = {
    "Permission": {
        "id": "r1",
        "tool": {
            "id": "tool1",
            "kind": "Execute",
            "title": "make",
            "status": "Pending",
            "input": {"Command": {"command": "make", "cwd": None}},
            "diffs": [],
            "locations": [],
        },
        "options": ["AllowOnce", "DenyOnce"],
    }
}
SCRIPT = parse_script(
    {
        "turns": [
            [
                {"Emit": {"TextDelta": {"message_id": "m1", "text": "hello"}}},
                {"Emit": {"RequestOpened": ASK}},
                "AwaitAnswer",
                {"Emit": {"TextDelta": {"message_id": "m1", "text": BOOM}}},
                {"End": {"Completed": {"source": "Protocol"}}},
            ]
        ]
    }
)


class _Tripwire:
    """The driver's output, with a bug: the text `boom` raises."""

    def __init__(self, events_out: EventSink) -> None:
        self._events_out = events_out

    async def send(self, item: DriverEvent) -> None:
        kind = item.kind if isinstance(item, Emitted) else None
        if isinstance(kind, TextDelta) and kind.text == BOOM:
            raise RuntimeError("a bug in a source")
        await self._events_out.send(item)

    async def send_batch(self, batch: Sequence[DriverEvent]) -> None:
        for item in batch:
            await self.send(item)


class CrashingDriver(MockDriver):
    async def run(self, events_out: EventSink) -> None:
        await super().run(_Tripwire(events_out))


def crashing_catalog() -> Catalog:
    def make(
        installation: AgentInstallation, spec: LaunchSpec, telemetry: SessionTelemetry
    ) -> CrashingDriver:
        return CrashingDriver(SCRIPT, spec)

    entry = CatalogEntry(
        id="crashy", name="crashy", executable="", install_hint="", make_driver=make, builtin=True
    )
    return Catalog([entry])


async def _main() -> int:
    stdin, stdout = await open_stdio()
    return await serve(
        stdin=stdin,
        stdout=stdout,
        version=version(),
        make_runtime=lambda: Runtime(catalog=crashing_catalog(), transcripts=False),
    )


if __name__ == "__main__":
    raise SystemExit(asyncio.run(_main()))
