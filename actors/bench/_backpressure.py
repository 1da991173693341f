"""Backpressure: a stalled sink pauses the agent, memory stays flat, nothing is lost.

One mock session floods text deltas into a sink that stops consuming.
While it is stalled the bench samples resident memory and the number of
events the engine has produced (both must stay flat: the agent is paused,
not buffered); then the sink resumes and every event must arrive, in order.
"""

from __future__ import annotations

import asyncio
from typing import Any

import attrs

from ...pipeline.channels import Channel
from ...pipeline.events import Event
from ...pipeline.records import SinkItem
from ...sinks.transcript import TranscriptSettings
from ...sources.mock import MockScript, parse_script
from ..runtime import Runtime
from ._scale import rss_mib
from ._scratch import scratch_transcripts

__all__ = ["Backpressure", "measure_backpressure"]


@attrs.frozen(kw_only=True)
class Backpressure:
    events: int
    stalled_seconds: float
    produced_while_stalled: int  # events the engine made after the stall filled up
    rss_growth_mib: float  # during the stall
    delivered: int
    in_order: bool

    @property
    def lost(self) -> int:
        return self.events - self.delivered


class _Gate:
    name = "gate"

    def __init__(self) -> None:
        self.open = asyncio.Event()
        self.sequences: list[int] = []

    async def run(self, items_in: Channel[SinkItem]) -> None:
        async for item in items_in:
            await self.open.wait()
            if isinstance(item, Event):
                self.sequences.append(item.sequence)


async def _until_blocked(channel: Channel[Any]) -> None:
    """Yield until a producer waits on `channel` (a bounded number of turns)."""
    for _ in range(100_000):
        if channel.statistics().waiting_senders:
            return
        await asyncio.sleep(0)
    raise RuntimeError("the producer never blocked")


async def measure_backpressure(events: int, stall: float) -> Backpressure:
    step = {"Emit": {"TextDelta": {"message_id": "m1", "text": "x" * 200}}}
    script = parse_script(
        {
            "turns": [
                [
                    {"Repeat": {"times": events, "steps": [step]}},
                    {"End": {"Completed": {"source": "Protocol"}}},
                ]
            ]
        }
    )
    with scratch_transcripts() as transcripts:
        return await _measure(script, events, stall, transcripts)


async def _measure(
    script: MockScript, events: int, stall: float, transcripts: TranscriptSettings
) -> Backpressure:
    gate = _Gate()
    async with Runtime(mock=script, transcripts=transcripts) as rt:
        session = await rt.open("mock", dir=".", app_sink=gate)
        await session.prompt("flood")
        await _until_blocked(session.channels()[0])  # the driver's
        await asyncio.sleep(0.2)  # let every channel on the way finish filling up
        produced, rss = session.events_made, rss_mib()
        await asyncio.sleep(stall)
        produced_after, rss_after = session.events_made, rss_mib()
        gate.open.set()
        await session.wait_idle()
        total = session.events_made
        await session.close()
        await session.wait_closed()
    return Backpressure(
        events=total,
        stalled_seconds=stall,
        produced_while_stalled=produced_after - produced,
        rss_growth_mib=rss_after - rss,
        delivered=len(gate.sequences),
        in_order=gate.sequences == list(range(1, len(gate.sequences) + 1)),
    )
