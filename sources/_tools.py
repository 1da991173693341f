"""Reading a tool's arguments the way agents spell them.

Agents name the same argument several ways (`path`, `file_path`,
`filePath`; `command`, `cmd`), so each provider's tool mapping asks for
the first of a few keys that holds a non-empty string. That one rule
lives here; which keys mean what stays with each provider.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

__all__ = ["first_text"]


def first_text(arguments: Mapping[str, Any], *keys: str) -> str | None:
    """The value of the first of `keys` that holds a non-empty string, or None."""
    for key in keys:
        value = arguments.get(key)
        if isinstance(value, str) and value:
            return value
    return None
