"""How many bytes a pipeline item holds, roughly: the measure of byte-bounded channels.

A channel bounded only in items holds 256 text deltas of a few bytes or
256 events of an agent's 16 MB lines alike. `item_size` gives a channel
(`Channel(max_bytes=..., size=item_size)`) the bytes an item keeps alive:
the characters of its strings (text, tool output, diffs, raw frames under
`extensions`) plus a constant for the object itself.

It is an estimate, cheap on the hot path: a streamed delta (most items)
costs two attribute reads; agent JSON (raw frames, tool input) is measured
by the length orjson gives it, in C, which is far cheaper than walking it in
Python; attrs classes and tuples are walked (each class's field names read
once), to a bounded depth. A record is measured once for all the sinks:
its size travels with it through the fan-out (`Channel.receive_sized`).
"""

from __future__ import annotations

from typing import Any

import orjson

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
    if isinstance(value, dict | list):
        try:
            return len(orjson.dumps(value))
        except TypeError:
            pass  # it holds what JSON does not (an attrs value, a non-str key): walk it
        if isinstance(value, dict):
            return sum(_walk(k, depth + 1) + _walk(v, depth + 1) for k, v in value.items())
    if isinstance(value, list | tuple):
        return sum(_walk(element, depth + 1) + _FIELD for element in value)
    names = _NAMES.get(type(value))
    if names is None:
        names = _NAMES[type(value)] = _field_names(type(value))
    if not names:
        return _FIELD  # not attrs: counted as one field
    return sum(_walk(getattr(value, name), depth + 1) + _FIELD for name in names)


_NAMES: dict[type, tuple[str, ...]] = {}  # each class's attrs fields, read once


def _field_names(cls: type) -> tuple[str, ...]:
    """What `attrs.fields` gives, without its checks; () for what is not attrs."""
    return tuple(field.name for field in getattr(cls, "__attrs_attrs__", ()))
