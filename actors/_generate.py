"""`generate`: one prompt, one answer, then the session closes.

Opens a session, sends the prompt, collects the text of that prompt's turn
and closes. The session's events still reach the app like any other's;
the reply carries the session id, the answer text and the stop reason.
"""

from __future__ import annotations

import asyncio

from ..pipeline.channels import Channel
from ..pipeline.commands import SessionOptions
from ..pipeline.errors import CorralError, ErrorKind
from ..pipeline.events import Event, TextDelta, TurnEnded, stop_to_wire
from ..pipeline.records import SinkItem
from ..pipeline.stages import Sink
from .runtime import Runtime

__all__ = ["generate"]


class _Collector:
    """Collects each turn's text; the prompt's turn id is known only later."""

    name = "generate"

    def __init__(self) -> None:
        self.texts: dict[str, list[str]] = {}
        self.ends: dict[str, TurnEnded] = {}
        self.changed = asyncio.Event()
        self.finished = False

    async def run(self, items_in: Channel[SinkItem]) -> None:
        async for item in items_in:
            if not isinstance(item, Event) or item.turn_info is None:
                continue
            match item.kind:
                case TextDelta(text=text):
                    self.texts.setdefault(item.turn_info.id, []).append(text)
                case TurnEnded() as ended:
                    self.ends[item.turn_info.id] = ended
                    self.changed.set()
        self.finished = True
        self.changed.set()

    async def wait_end(self, turn_id: str) -> TurnEnded | None:
        while turn_id not in self.ends and not self.finished:
            self.changed.clear()
            await self.changed.wait()
        return self.ends.get(turn_id)


async def generate(
    runtime: Runtime, options: SessionOptions, prompt: str, app_sink: Sink
) -> dict[str, object]:
    collector = _Collector()
    session = await runtime.open(options, app_sink=app_sink, extra_sinks=[collector])
    try:
        delivery = await session.prompt(prompt)
        turn_id = str(getattr(delivery.kind, "turn_id", ""))
        ended = await collector.wait_end(turn_id)
    finally:
        await session.close()
    if ended is None:
        failure = session.failure
        if failure is not None:
            raise failure
        raise CorralError(ErrorKind.SESSION_CLOSED, "the session ended before the answer")
    return {
        "session": session.id,
        "text": "".join(collector.texts.get(turn_id, [])),
        "stop": stop_to_wire(ended.stop),
    }
