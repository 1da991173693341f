"""How many bytes a pipeline item holds, roughly: the measure of byte-bounded channels.

A channel bounded only in items holds 256 text deltas of a few bytes or
256 events of an agent's 16 MB lines alike. `item_size` gives a channel
(`Channel(max_bytes=..., size=item_size)`) the bytes an item keeps alive:
the characters of its strings (text, tool output, diffs, raw frames under
`extensions`) plus a constant for the object itself.

It is an estimate, cheap on the hot path: a streamed delta (most items)
costs two attribute reads. An event is measured by its JSON (`Event.json`),
which it keeps: the sinks that write it then reuse it, so measuring costs
nothing extra. A driver's `Emitted` is measured by its kind's JSON, which
it keeps too, for the event the engine makes of it. Anything else is
measured by the length of its JSON as orjson writes it, in C, with each
attrs value handed over as the list of its fields (each class's field names
read once): one Python call per attrs value, not one per field. What
orjson cannot write even so (a non-string key, bytes) is walked in Python
instead, to a bounded depth. A record is measured once for all the sinks:
its size travels with it through the fan-out (`Channel.receive_sized`).
"""

from __future__ import annotations

from typing import Any

import orjson

from .driver import Emitted
from .events import Event, ReasoningDelta, TextDelta, ToolOutputDelta

__all__ = ["ITEM_OVERHEAD", "item_size"]

ITEM_OVERHEAD = 256  # an item's own objects, ids and envelope
_FIELD = 16  # a field, a key, an element
_DEPTH = 16  # deeper than any event: a raw frame that nests further counts as flat
_DELTAS = (TextDelta, ReasoningDelta, ToolOutputDelta)


def item_size(item: object) -> int:
    """The bytes `item` (an Event, a DriverEvent, a sink record) keeps alive, roughly."""
    if type(item) is Event or type(item) is Emitted:  # the items with a kind
        kind = item.kind
        if isinstance(kind, _DELTAS) and not item.extensions:
            return ITEM_OVERHEAD + len(kind.text)
    try:
        if type(item) is Event:  # its JSON, which every sink then shares
            return ITEM_OVERHEAD + len(item.json())
        if type(item) is Emitted:  # its kind's JSON, which the event made of it reuses
            extensions = item.extensions
            held = len(orjson.dumps(extensions, default=_fields_of)) if extensions else 0
            return ITEM_OVERHEAD + len(item.kind_json()) + held
        return ITEM_OVERHEAD + len(orjson.dumps(item, default=_fields_of))
    except TypeError:  # something JSON does not hold: walk it
        return ITEM_OVERHEAD + _walk(item, 0)


def _fields_of(value: object) -> list[object]:
    """orjson's `default`: an attrs value as its fields' values, a set as a list;
    TypeError for the rest."""
    names = _names(type(value))
    if names is not None:
        return [getattr(value, name) for name in names]
    if isinstance(value, frozenset | set):
        return list(value)
    raise TypeError(type(value).__name__)


def _walk(value: Any, depth: int) -> int:
    if isinstance(value, str | bytes | bytearray):
        return len(value)
    if depth >= _DEPTH or value is None or isinstance(value, int | float | bool):
        return _FIELD
    if isinstance(value, dict):
        return sum(_walk(k, depth + 1) + _walk(v, depth + 1) for k, v in value.items())
    if isinstance(value, list | tuple):
        return sum(_walk(element, depth + 1) + _FIELD for element in value)
    names = _names(type(value))
    if names is None:
        return _FIELD  # not attrs: counted as one field
    return sum(_walk(getattr(value, name), depth + 1) + _FIELD for name in names)


_NAMES: dict[type, tuple[str, ...] | None] = {}  # each class's attrs fields, read once


def _names(cls: type) -> tuple[str, ...] | None:
    """What `attrs.fields` gives, without its checks; None for what is not attrs."""
    if cls not in _NAMES:
        fields = getattr(cls, "__attrs_attrs__", None)
        _NAMES[cls] = None if fields is None else tuple(field.name for field in fields)
    return _NAMES[cls]
