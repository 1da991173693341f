"""The bulk of a stream, built with the least Python: `Emitted(kind=Delta(message_id, text))`.

A flood of text chunks is most of what an agent says, and for each the
source builds two frozen attrs values. attrs' generated `__init__` of a
frozen class sets each field through `object.__setattr__` with keyword
arguments; setting the slots through their descriptors, in one straight
function, does the same with ~60% of the instructions (9k against 16k for the
pair, measured under cachegrind). That is only the same when
the classes are plain: slotted, with no validator, converter or init hook,
and the fields this module names. `text_emitter` checks that once, when it
is made, and otherwise hands out the classes' own constructors, so a change
to the events makes this slower, never wrong (`tests/unit/test_quick.py`
holds the two ways equal).
"""

from __future__ import annotations

from collections.abc import Callable

import attrs

from ...pipeline.driver import Emitted
from ...pipeline.events import ReasoningDelta, TextDelta, UserMessage

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


def _plain(cls: type, names: tuple[str, ...]) -> bool:
    """A slotted attrs class of exactly `names`, set as given (nothing runs on init)."""
    if not attrs.has(cls) or "__slots__" not in cls.__dict__:
        return False
    fields = attrs.fields(cls)
    hooks = ("__attrs_pre_init__", "__attrs_post_init__")
    return (
        tuple(field.name for field in fields) == names
        and all(field.validator is None and field.converter is None for field in fields)
        and not any(hasattr(cls, hook) for hook in hooks)
    )


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
    plain = _plain(delta, _DELTA_FIELDS) and _plain(Emitted, _EMITTED_FIELDS)
    if not (plain and _defaults_plain()):
        return _general(delta)
    new = object.__new__
    set_id, set_text = (delta.__dict__[name].__set__ for name in _DELTA_FIELDS)
    kind, parent, tokens, model, problem, unknown, extensions, kind_json = (
        Emitted.__dict__[name].__set__ for name in _EMITTED_FIELDS
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
