"""A session's token and cost totals: one definition for the footer and the list.

The writer adds each event as it writes it (the footer's `tokens` and
`cost_usd`); `corral transcripts list` adds the events it reads back.
Both go through `Usage`, so the two never disagree.

Tokens: the sum of the reported input + output tokens (`reported_tokens`) over the session's
`ContextUsage` events (each is that turn's usage), when any carries them;
otherwise the largest `used_tokens` seen (an agent that reports only how
full its context is). Cost: the sum of their `cost_usd`.
"""

from __future__ import annotations

from collections.abc import Iterable

import attrs

from ...pipeline.events import ContextUsage, Event
from ...pipeline.extensions import reported_tokens

__all__ = ["Usage"]


@attrs.define
class Usage:
    counted: int = 0  # reported input + output tokens, summed
    largest_used: int = 0  # the largest used_tokens
    cost_usd: float = 0.0

    @property
    def tokens(self) -> int:
        return self.counted or self.largest_used

    @classmethod
    def of(cls, events: Iterable[Event]) -> Usage:
        usage = cls()
        for event in events:
            usage.add(event)
        return usage

    def add(self, event: Event) -> None:
        kind = event.kind
        if not isinstance(kind, ContextUsage):
            return
        self.largest_used = max(self.largest_used, kind.used_tokens)
        self.cost_usd += kind.cost_usd or 0.0
        counted = reported_tokens(event)
        if counted is not None:
            self.counted += (counted.input or 0) + (counted.output or 0)
