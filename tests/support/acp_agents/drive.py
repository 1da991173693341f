"""Driving an in-process corral session in tests, every event schema-checked.

`Watcher` wraps a `Session`'s event stream: `next(timeout)` returns the
next event (checked against the line-protocol `Event` definition),
`until(predicate)` reads up to the first event that matches, `turn()`
reads through the next `TurnEnded`. Every wait is bounded. `kinds(events)`
gives the event kind names, for compact assertions.

`WireRecorder` is a telemetry observer that records one session's raw
wire (`{"in": msg}` / `{"out": msg}` lines), the golden-fixture format of
`corral.sources.acp.AcpReplay`.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator, Callable
from pathlib import Path

from corral.actors.handle import Session
from corral.pipeline.events import Event, TurnEnded

from tests.support.schema import check

__all__ = ["Watcher", "WireRecorder", "kind_name", "kinds"]


def kind_name(event: Event) -> str:
    wire = event.kind.to_wire()
    return wire if isinstance(wire, str) else next(iter(wire))  # type: ignore[arg-type]


def kinds(events: list[Event]) -> list[str]:
    return [kind_name(event) for event in events]


class Watcher:
    def __init__(self, session: Session, *, timeout: float = 30.0) -> None:
        self.session = session
        self.timeout = timeout
        self.seen: list[Event] = []
        self._stream: AsyncIterator[Event] = session.events()

    async def next(self, timeout: float | None = None) -> Event:
        async with asyncio.timeout(timeout or self.timeout):
            event = await anext(self._stream)
        check("line-protocol.schema.json", "Event", event.to_wire())
        self.seen.append(event)
        return event

    async def until(
        self, predicate: Callable[[Event], bool], timeout: float | None = None
    ) -> list[Event]:
        """Events up to and including the first that matches."""
        read: list[Event] = []
        async with asyncio.timeout(timeout or self.timeout):
            while True:
                event = await self.next(timeout or self.timeout)
                read.append(event)
                if predicate(event):
                    return read

    async def until_kind(self, name: str, timeout: float | None = None) -> list[Event]:
        return await self.until(lambda event: kind_name(event) == name, timeout)

    async def turn(self, timeout: float | None = None) -> list[Event]:
        return await self.until(lambda event: isinstance(event.kind, TurnEnded), timeout)

    async def rest(self, timeout: float | None = None) -> list[Event]:
        """Everything until the stream ends (after close)."""
        read: list[Event] = []
        async with asyncio.timeout(timeout or self.timeout):
            async for event in self._stream:
                check("line-protocol.schema.json", "Event", event.to_wire())
                self.seen.append(event)
                read.append(event)
        return read


class WireRecorder:
    """A telemetry observer writing every raw wire line, tagged by direction."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.lines: list[str] = []

    def process_started(self, agent: str) -> None:
        pass

    def process_exited(self, agent: str, status: str) -> None:
        pass

    def process_restarted(self, agent: str) -> None:
        pass

    def decode_error(self, agent: str, kind: str) -> None:
        pass

    def unknown_frame(self, agent: str) -> None:
        pass

    def wire_line(self, session_id: str, direction: str, line: bytes) -> None:
        self.lines.append(json.dumps({direction: json.loads(line)}, ensure_ascii=False))

    def save(self) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self.path.write_text("\n".join(self.lines) + "\n", encoding="utf-8")
