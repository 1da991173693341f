"""A reading of decoded JSON, remembered for the last few distinct values read.

Agents resend the same lists over and over: every session of an agent
announces the same slash commands, modes, models and config options, and
some agents resend the commands within a session. Reading one into corral's
frozen values builds an object per entry each time; comparing the decoded
value with one read before is one C-level `==`. `Recent(read)` answers
`read(raw)` from the last `size` distinct values it read when `raw` equals
one of them, else reads it and remembers it (the oldest forgotten).

What it returns is the very object read before, so `read` must be pure
and return something immutable (frozen attrs values, tuples). `==` on
decoded JSON holds `1 == 1.0 == True`: a reading whose answer depends on
whether a value is a bool, an int or a float must not be remembered this
way; one that looks only at strings (`isinstance(x, str)`, their values),
lists and objects may (a string never equals anything but a string). The
values remembered are the decoded ones, kept as they are: nothing in
corral changes a message it decoded.

One per reading, made at import and shared by every session of the
process (like `functools.lru_cache`): what it holds is the same for all of
them, and the list of pairs is replaced whole, never changed in place, so
a reader in another thread sees the old list or the new one.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Generic, TypeVar

__all__ = ["Recent"]

T = TypeVar("T")


class Recent(Generic[T]):
    __slots__ = ("_read", "_seen", "_size")

    def __init__(self, read: Callable[[Any], T], *, size: int = 8) -> None:
        if size < 1:
            raise ValueError(f"Recent needs room for one value at least, not {size}")
        self._read = read
        self._size = size
        self._seen: list[tuple[object, T]] = []

    def __call__(self, raw: object) -> T:
        for seen, answer in self._seen:
            if seen == raw:
                return answer
        answer = self._read(raw)
        self._seen = [(raw, answer), *self._seen[: self._size - 1]]
        return answer
