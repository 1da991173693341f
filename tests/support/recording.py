"""A sink that records what the transcript and metrics sinks see, per session.

`Recorders` is a sink factory for `Runtime(sinks=[...])`: one
`RecordingSink` per session, kept by session id, holding every record
(events and `Decision`s) in order.
"""

from __future__ import annotations

from corral.pipeline.channels import Channel
from corral.pipeline.records import Decision, SinkItem


class RecordingSink:
    name = "recording"

    def __init__(self) -> None:
        self.items: list[SinkItem] = []

    async def run(self, items_in: Channel[SinkItem]) -> None:
        async for item in items_in:
            self.items.append(item)

    def decisions(self) -> list[Decision]:
        return [item for item in self.items if isinstance(item, Decision)]


class Recorders:
    def __init__(self) -> None:
        self.by_session: dict[str, RecordingSink] = {}

    def __call__(self, session_id: str, agent_id: str, folder: str) -> RecordingSink:
        return self.by_session.setdefault(session_id, RecordingSink())
