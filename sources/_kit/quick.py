"""The bulk of a stream, built with the least Python: `Emitted(kind=Delta(message_id, text))`.

A flood of text chunks is most of what an agent says, and for each the
source builds two frozen attrs values. Built through their slots
(`pipeline/plain.py`: when that is the same, and why it is cheaper), the
pair takes ~60% of the instructions (9k against 16k, measured under
cachegrind). `text_emitter` checks once, when it is made, that both classes
are plain, and otherwise hands out their own constructors
(`tests/unit/test_quick.py` holds the two ways equal).
"""

from __future__ import annotations

from collections.abc import Callable

import attrs

from ...pipeline.driver import Emitted
from ...pipeline.events import ReasoningDelta, TextDelta, UserMessage
from ...pipeline.plain import plain, slot_setters

__all__ = ["text_emitter"]

_EMITTED_FIELDS = (
    "kind",
    "parent_tool_id",
    "tokens",
    "model",
    "problem",
    "unknown_frame",
    "extensions",
    "_kind_json",
)
_DELTA_FIELDS = ("message_id", "text")


_Delta = TextDelta | ReasoningDelta | UserMessage
TextEmitter = Callable[[str, str], Emitted]


def _defaults_plain() -> bool:
    """`Emitted(kind=...)` leaves every other field None, `extensions` a new `{}`, and
    no JSON of its kind made yet."""
    made = Emitted(kind=None)  # type: ignore[arg-type]  # only its defaults are looked at
    return attrs.astuple(made, recurse=False)[1:] == (None,) * 5 + ({}, None)


def _general(delta: type[_Delta]) -> TextEmitter:
    def emit(message_id: str, text: str) -> Emitted:
        return Emitted(kind=delta(message_id=message_id, text=text))

    return emit


def text_emitter(delta: type[_Delta]) -> TextEmitter:
    """`(message_id, text) -> Emitted(kind=delta(message_id=..., text=...))`, fast when
    both classes are plain."""
    quick = plain(delta, _DELTA_FIELDS) and plain(Emitted, _EMITTED_FIELDS)
    if not (quick and _defaults_plain()):
        return _general(delta)
    new = object.__new__
    set_id, set_text = slot_setters(delta, _DELTA_FIELDS)
    kind, parent, tokens, model, problem, unknown, extensions, kind_json = slot_setters(
        Emitted, _EMITTED_FIELDS
    )

    def emit(message_id: str, text: str) -> Emitted:
        made = new(delta)
        set_id(made, message_id)
        set_text(made, text)
        emitted = new(Emitted)
        kind(emitted, made)
        parent(emitted, None)
        tokens(emitted, None)
        model(emitted, None)
        problem(emitted, None)
        unknown(emitted, None)
        extensions(emitted, {})
        kind_json(emitted, None)
        return emitted

    return emit
