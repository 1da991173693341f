"""Tokens an agent reports spending, by kind, under corral's names.

A driver fills `Emitted.tokens` (`pipeline/driver.py`) with a `TokenCount`;
the engine writes it as `corral/tokens` and the sinks read it back
(`pipeline/extensions.py`); the metrics label their counter with
`TOKEN_NAMES`.
"""

from __future__ import annotations

from collections.abc import Mapping

import attrs

__all__ = ["TOKEN_NAMES", "TokenCount"]

TOKEN_NAMES = ("input", "output", "cache_read", "cache_write", "reasoning")


def _count(counts: Mapping[str, object], name: str) -> int | None:
    value = counts.get(name)
    return value if isinstance(value, int) and not isinstance(value, bool) else None


@attrs.frozen(kw_only=True)
class TokenCount:
    """Tokens used since the previous report, by kind; None: the wire did not say."""

    input: int | None = None
    output: int | None = None
    cache_read: int | None = None
    cache_write: int | None = None
    reasoning: int | None = None

    @classmethod
    def from_counts(cls, counts: Mapping[str, object]) -> TokenCount:
        """From counts under corral's names (`TOKEN_NAMES`); other keys, non-ints left out."""
        return cls(**{name: _count(counts, name) for name in TOKEN_NAMES})

    def counts(self) -> dict[str, int]:
        """The reported counts, by name, in `TOKEN_NAMES` order (`corral/tokens` on the wire)."""
        values = (self.input, self.output, self.cache_read, self.cache_write, self.reasoning)
        pairs = zip(TOKEN_NAMES, values, strict=True)
        return {name: value for name, value in pairs if value is not None}

    def __add__(self, other: TokenCount) -> TokenCount:
        """Two reports as one: each kind summed, None where neither said."""
        mine, theirs = self.counts(), other.counts()
        both = {name: mine.get(name, 0) + theirs.get(name, 0) for name in {*mine, *theirs}}
        return TokenCount.from_counts(both)
