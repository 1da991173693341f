"""Driving an in-process session against the fake app-server, every event schema-checked.

`Watcher.until(name)` reads events up to the first of that kind; every
event read is checked against the line-protocol `Event` definition; every
wait is bounded.
"""

from __future__ import annotations

import asyncio
import sys
from collections.abc import AsyncIterator
from pathlib import Path

from corral.actors.handle import Session
from corral.pipeline.commands import AppServerRef
from corral.pipeline.events import Event

from tests.support.schema import check

from . import MODULE

__all__ = ["REPO_ROOT", "Watcher", "fake_ref", "kind_name"]

REPO_ROOT = Path(__file__).resolve().parents[3]


def fake_ref(name: str = "fake") -> AppServerRef:
    """The fake as an ad-hoc agent; run it with `PYTHONPATH` = `REPO_ROOT`."""
    return AppServerRef(name=name, path=sys.executable, args=("-m", MODULE))


def kind_name(event: Event) -> str:
    wire = event.kind.to_wire()
    return wire if isinstance(wire, str) else next(iter(wire))  # type: ignore[arg-type]


class Watcher:
    def __init__(self, session: Session, *, timeout: float = 30.0) -> None:
        self.session = session
        self.timeout = timeout
        self._stream: AsyncIterator[Event] = session.events()

    async def next(self) -> Event:
        async with asyncio.timeout(self.timeout):
            event = await anext(self._stream)
        check("line-protocol.schema.json", "Event", event.to_wire())
        return event

    async def until(self, name: str) -> list[Event]:
        """Events up to and including the first `name` event."""
        read: list[Event] = []
        while True:
            read.append(await self.next())
            if kind_name(read[-1]) == name:
                return read

    async def rest(self) -> list[Event]:
        """Everything until the stream ends."""
        read: list[Event] = []
        async with asyncio.timeout(self.timeout):
            async for event in self._stream:
                check("line-protocol.schema.json", "Event", event.to_wire())
                read.append(event)
        return read
