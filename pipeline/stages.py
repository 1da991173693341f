"""Stages and the fan-out: how a session's records reach every sink.

A stage has one async `run` that consumes its input channel until the clean
end. `FanOut` copies each batch of records to every sink's own bounded
channel, in order, waiting on the slowest: a stalled sink stalls the session
(and, up the chain, the agent) instead of losing anything. Each record is
measured once, by the input channel, and its size goes on with it. When its
input ends it closes every output, so each sink sees the same ordered stream
and its end.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

from .channels import Channel, EndOfChannel
from .records import SinkItem

__all__ = ["FanOut", "Sink"]


class Sink(Protocol):
    """A consumer of one session's records (lines, transcript, metrics)."""

    name: str

    async def run(self, items_in: Channel[SinkItem]) -> None: ...


class FanOut:
    name = "fanout"

    def __init__(self, outputs: Sequence[Channel[SinkItem]]) -> None:
        self._outputs = tuple(outputs)

    async def run(self, items_in: Channel[SinkItem]) -> None:
        outputs = self._outputs
        try:
            while True:
                try:
                    batch, sizes = await items_in.receive_sized()
                except EndOfChannel:
                    return
                for output in outputs:
                    await output.send_batch(batch, sizes)
        finally:
            for output in self._outputs:
                output.close()
