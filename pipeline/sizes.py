"""How many bytes a pipeline item holds, roughly: the measure of byte-bounded channels.

A channel bounded only in items holds 256 text deltas of a few bytes or
256 events of an agent's 16 MB lines alike. `item_size` gives a channel
(`Channel(max_bytes=..., size=item_size)`) the bytes an item keeps alive:
the characters of its strings (text, tool output, diffs, raw frames under
`extensions`) plus a constant for the object itself.

It is an estimate, cheap on the hot path: a streamed delta (most items)
costs two attribute reads; anything else is walked (attrs classes, dicts,
lists, tuples), to a bounded depth, which costs about what encoding it
will. No item is encoded to be measured.
"""

from __future__ import annotations

from typing import Any

from .events import ReasoningDelta, TextDelta, ToolOutputDelta

__all__ = ["ITEM_OVERHEAD", "item_size"]

ITEM_OVERHEAD = 256  # an item's own objects, ids and envelope
_FIELD = 16  # a field, a key, an element
_DEPTH = 16  # deeper than any event: a raw frame that nests further counts as flat
_DELTAS = (TextDelta, ReasoningDelta, ToolOutputDelta)


def item_size(item: object) -> int:
    """The bytes `item` (an Event, a DriverEvent, a sink record) keeps alive, roughly."""
    kind = getattr(item, "kind", None)
    if isinstance(kind, _DELTAS) and not getattr(item, "extensions", None):
        return ITEM_OVERHEAD + len(kind.text)
    return ITEM_OVERHEAD + _walk(item, 0)


def _walk(value: Any, depth: int) -> int:
    if isinstance(value, str | bytes | bytearray):
        return len(value)
    if depth >= _DEPTH or value is None or isinstance(value, int | float | bool):
        return _FIELD
    if isinstance(value, dict):
        return sum(_walk(k, depth + 1) + _walk(v, depth + 1) for k, v in value.items())
    if isinstance(value, list | tuple):
        return sum(_walk(element, depth + 1) + _FIELD for element in value)
    # What `attrs.fields` returns, without its checks: this runs for many items.
    fields = getattr(type(value), "__attrs_attrs__", None)
    if fields is not None:
        return sum(_walk(getattr(value, field.name), depth + 1) + _FIELD for field in fields)
    return _FIELD
