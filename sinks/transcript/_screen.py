"""Which of a batch's records may hold a secret, found before any is walked through.

Walking a record (`Redactor.redact`: decode, visit every string, encode
again) costs far more than checking it, and nearly every record holds
nothing. So the writer screens each batch first:

- a delta's text is redacted knowing its stream's recent text (`_streams.py`),
  a stream's deltas in the batch searched together; the rest of a delta is
  corral's own fields and two ids, each id checked once (`_suspect_id`);
- the other small records' encodings are searched for hints all at once
  (`Redactor.suspects`), and only those a hint lands in are checked alone;
- a large record may be one found clean before (`KnownClean`), quicker to
  look up than to search again; else it is searched alone.

Only a record found suspect here is walked; one the walk leaves unchanged
is written from its shared encoding all the same.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence

from ...pipeline.events import (
    Event,
    MessageEnded,
    ReasoningDelta,
    TextDelta,
    ToolOutputDelta,
    ToolUpdated,
    TurnContext,
)
from ...pipeline.records import SinkItem
from ._clean import KnownClean
from ._redact import Redaction, Redactor, might_hold_secret
from ._streams import DeltaRedactor

__all__ = ["Screen", "Streamed"]

Streamed = tuple[str, Redaction | None]  # a delta's redacted text, and what was masked in it
# A stream's id comes with each of its deltas: check each id once.
_suspect_id = functools.lru_cache(maxsize=4096)(might_hold_secret)


class Screen:
    """One transcript's screening: its streams' recent text, its records known clean."""

    def __init__(self, redactor: Redactor) -> None:
        self.redactor = redactor
        self._deltas = DeltaRedactor(known=redactor.known)
        self._clean = KnownClean()

    def batch(self, items: Sequence[SinkItem]) -> tuple[dict[int, Streamed], dict[int, bool]]:
        """The batch's deltas' redacted texts, and whether each event may hold a secret,
        both by index. An event with no verdict is large: `may_hold_more` decides."""
        runs: dict[str, list[tuple[int, str]]] = {}
        texts: dict[int, Streamed] = {}
        suspect: dict[int, bool] = {}
        indexes: list[int] = []
        encoded: list[bytes] = []
        for index, item in enumerate(items):
            if not isinstance(item, Event):
                continue
            kind = item.kind
            stream: str | None = None
            # Exact classes (none has subclasses): quicker to compare than `isinstance`.
            if type(kind) is TextDelta or type(kind) is ReasoningDelta:
                stream, text = kind.message_id, kind.text
            elif type(kind) is ToolOutputDelta:
                stream, text = kind.tool_id, kind.text
            elif type(kind) is MessageEnded:
                ended = kind.message_id
                self._redact_run(ended, runs.pop(ended, []), texts, suspect, ended=True)
            elif type(kind) is ToolUpdated and kind.tool.status.finished:
                ended = kind.tool.id
                self._redact_run(ended, runs.pop(ended, []), texts, suspect, ended=True)
            if stream is not None:
                runs.setdefault(stream, []).append((index, text))
                if not item.extensions:  # the rest is corral's fields and two ids
                    suspect[index] = _suspect_ids(stream, item.turn_info)
                    continue
            encoding = item.json()
            if len(encoding) < KnownClean.MIN_SIZE:
                indexes.append(index)
                encoded.append(encoding)
        for stream, run in runs.items():
            self._redact_run(stream, run, texts, suspect, ended=False)
        for index in indexes:
            suspect.setdefault(index, False)  # a delta masked already stays a suspect
        for found in self.redactor.suspects(encoded):
            suspect[indexes[found]] = True
        return texts, suspect

    def may_hold_more(self, event: Event, text: str | None, encoded: bytes) -> bool:
        """Whether a large event, besides a delta's text (`text`), may hold a secret."""
        if text is None and self._clean.holds(encoded):
            return False
        return self.redactor.might_need_redaction(encoded)

    def remember(self, encoded: bytes) -> None:
        """The walk left this event (no delta) unchanged."""
        self._clean.remember(encoded)

    def _redact_run(
        self,
        stream: str,
        run: list[tuple[int, str]],
        texts: dict[int, Streamed],
        suspect: dict[int, bool],
        *,
        ended: bool,
    ) -> None:
        """A stream's deltas in the batch, searched together (`_streams.py`)."""
        if run:
            redacted, founds = self._deltas.masked_run(stream, [text for _, text in run])
            for (index, _), text in zip(run, redacted, strict=True):
                texts[index] = (text, None)
            for place, found in founds.items():
                index = run[place][0]
                texts[index] = (redacted[place], found)
                suspect[index] = True
        if ended:
            self._deltas.end(stream)


def _suspect_ids(stream: str, turn: TurnContext | None) -> bool:
    parent = None if turn is None else turn.parent_tool_id
    return _suspect_id(stream) or (parent is not None and _suspect_id(parent))
