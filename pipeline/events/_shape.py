"""Reading decoded JSON into typed values, with errors that say where.

Every `from_wire` constructor in the model reads through `Fields`: a view of
one JSON object that knows its path (`answer.Question[1].Choices`), so a bad
command from the app gets a message that names the exact field. Nothing here
does I/O; `ShapeError` is the only exception raised.

Externally tagged enums (`{"TextDelta": {...}}`) and unit variants as bare
strings (`"ContextCompacted"`) are read with `tag_of`.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, NoReturn, TypeVar

__all__ = ["Fields", "ShapeError", "tag_of"]

T = TypeVar("T")


class ShapeError(ValueError):
    """A JSON value does not have the shape the protocol requires."""

    def __init__(self, path: str, problem: str) -> None:
        super().__init__(f"{path}: {problem}" if path else problem)
        self.path = path
        self.problem = problem


def _kind_name(value: object) -> str:
    match value:
        case None:
            return "null"
        case bool():
            return "a boolean"
        case int() | float():
            return "a number"
        case str():
            return "a string"
        case list():
            return "an array"
        case dict():
            return "an object"
    return type(value).__name__


def _join(path: str, key: str | int) -> str:
    if isinstance(key, int):
        return f"{path}[{key}]"
    return f"{path}.{key}" if path else key


class Fields:
    """One JSON object being read, with its path for error messages."""

    __slots__ = ("path", "raw")

    def __init__(self, raw: object, path: str = "") -> None:
        if not isinstance(raw, dict):
            raise ShapeError(path, f"expected an object, got {_kind_name(raw)}")
        self.raw: dict[str, Any] = raw
        self.path = path

    def fail(self, key: str, problem: str) -> NoReturn:
        raise ShapeError(_join(self.path, key), problem)

    def has(self, key: str) -> bool:
        return self.raw.get(key) is not None

    def _get(self, key: str) -> object:
        if key not in self.raw:
            self.fail(key, "missing")
        return self.raw[key]

    def _typed(self, key: str, value: object, kind: type[T], name: str) -> T:
        # bool is an int subclass; the protocol never accepts one for the other.
        if not isinstance(value, kind) or (kind is int and isinstance(value, bool)):
            self.fail(key, f"expected {name}, got {_kind_name(value)}")
        return value

    # The readers below return at once when the value is the JSON type asked for
    # (`type(...) is`, the common case and the cheapest test); anything else takes
    # the checked path, which says what is wrong.

    def string(self, key: str) -> str:
        value = self.raw.get(key)
        if type(value) is str:
            return value
        return self._typed(key, self._get(key), str, "a string")

    def opt_string(self, key: str) -> str | None:
        value = self.raw.get(key)
        if value is None or type(value) is str:
            return value
        return self._typed(key, value, str, "a string")

    def flag(self, key: str, default: bool | None = None) -> bool:
        if default is not None and self.raw.get(key) is None:
            return default
        return self._typed(key, self._get(key), bool, "a boolean")

    def integer(self, key: str, minimum: int = 0) -> int:
        value = self.raw.get(key)
        if type(value) is int and value >= minimum:
            return value
        value = self._typed(key, self._get(key), int, "an integer")
        if value < minimum:
            self.fail(key, f"must be at least {minimum}")
        return value

    def opt_integer(self, key: str) -> int | None:
        value = self.raw.get(key)
        if value is None or (type(value) is int and value >= 0):
            return value
        return self.integer(key)

    def opt_number(self, key: str) -> float | None:
        value = self.raw.get(key)
        if value is None:
            return None
        if isinstance(value, bool) or not isinstance(value, int | float):
            self.fail(key, f"expected a number, got {_kind_name(value)}")
        return float(value)

    def obj(self, key: str) -> Fields:
        return Fields(self._get(key), _join(self.path, key))

    def opt_obj(self, key: str) -> Fields | None:
        return None if self.raw.get(key) is None else self.obj(key)

    def array(self, key: str, default_empty: bool = False) -> list[tuple[str, object]]:
        """Items of an array field, each with its path."""
        if default_empty and self.raw.get(key) is None:
            return []
        items = self._typed(key, self._get(key), list, "an array")
        base = _join(self.path, key)
        return [(_join(base, index), item) for index, item in enumerate(items)]

    def strings(self, key: str, default_empty: bool = False) -> tuple[str, ...]:
        out = []
        for path, item in self.array(key, default_empty):
            if not isinstance(item, str):
                raise ShapeError(path, f"expected a string, got {_kind_name(item)}")
            out.append(item)
        return tuple(out)

    def string_map(self, key: str, default_empty: bool = False) -> Mapping[str, str]:
        if default_empty and self.raw.get(key) is None:
            return {}
        table = self.obj(key)
        for name, value in table.raw.items():
            table._typed(name, value, str, "a string")
        return dict(table.raw)

    def value(self, key: str) -> object:
        return self._get(key)

    def choice(self, key: str, allowed: Mapping[str, T]) -> T:
        value = self.string(key)
        if value not in allowed:
            self.fail(key, f"expected one of {', '.join(allowed)}, got {value!r}")
        return allowed[value]


def tag_of(raw: object, path: str, units: frozenset[str] = frozenset()) -> tuple[str, object]:
    """Split an externally tagged enum value into (tag, payload).

    A unit variant is a bare string and must be one of `units`; it comes back
    with payload None. A data variant is a one-key object.
    """
    if isinstance(raw, str):
        if raw not in units:
            raise ShapeError(path, f"unknown variant {raw!r}")
        return raw, None
    if not isinstance(raw, dict) or len(raw) != 1:
        raise ShapeError(path, "expected a one-key object naming the variant")
    ((tag, payload),) = raw.items()
    return tag, payload


def as_str(raw: object, path: str) -> str:
    if not isinstance(raw, str):
        raise ShapeError(path, f"expected a string, got {_kind_name(raw)}")
    return raw
