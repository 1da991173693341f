"""Plain attrs classes, built through their slots: the hot path's constructors.

attrs' generated `__init__` of a frozen class sets each field through
`object.__setattr__`, called with keyword arguments: the call packs a tuple
and a dict, and each field's set another tuple. Setting the slots through
their descriptors, in one straight function, makes the same object with
about half the instructions (measured under cachegrind). That is only the
same object when the class is *plain*: slotted, with no validator,
converter or init hook, and exactly the fields the caller names, in order.
`plain` checks that once, when a quick constructor is made (`slot_maker`
checks it itself); the makers
(`sources/_kit/quick.py` for a text chunk's two objects, `new_event` in
`pipeline/events/_event.py` for an event, `new_notification` in
`sources/_jsonrpc.py` for a JSON-RPC notification) fall back to the
class's own constructor otherwise, so a change to a class makes them
slower, never wrong. Tests hold each maker equal to the constructor.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

import attrs

__all__ = ["plain", "slot_maker", "slot_setters"]

Setter = Callable[[object, object], None]


def plain(cls: type, names: tuple[str, ...]) -> bool:
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


def slot_setters(cls: type, names: tuple[str, ...]) -> tuple[Setter, ...]:
    """Each named slot's own setter (`cls` must be `plain` for `names`)."""
    return tuple(cls.__dict__[name].__set__ for name in names)


def slot_maker(
    cls: type,
    names: tuple[str, ...],
    *,
    otherwise: Callable[..., Any],
    fixed: Mapping[str, object] | None = None,
) -> Callable[..., Any]:
    """A function of one positional argument per name (but the `fixed` ones, set to
    their value), in order, making a `cls` through its slots; `otherwise` (the same
    call, by the constructor) when `cls` is not `plain` for `names`. Written out as
    one straight function, as attrs writes its own `__init__`: a loop over the
    setters would cost what the slots save."""
    if not plain(cls, names):
        return otherwise
    fixed = {} if fixed is None else fixed
    namespace: dict[str, Any] = {"new": object.__new__, "cls": cls}
    arguments, sets = [], []
    for index, (name, setter) in enumerate(zip(names, slot_setters(cls, names), strict=True)):
        namespace[f"s{index}"] = setter
        if name in fixed:
            namespace[f"v{index}"] = fixed[name]
        else:
            arguments.append(f"v{index}")
        sets.append(f"    s{index}(made, v{index})\n")
    source = (
        f"def make({', '.join(arguments)}):\n    made = new(cls)\n{''.join(sets)}    return made\n"
    )
    exec(compile(source, f"<slot maker of {cls.__qualname__}>", "exec"), namespace)
    made: Callable[..., Any] = namespace["make"]
    return made
