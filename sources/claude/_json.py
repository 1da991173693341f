"""Typed reads of decoded JSON: an object or a list, or an empty one.

Frames are read defensively (a field of the wrong type is treated as
absent), so the normalizers never raise on a frame of an unexpected shape.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

__all__ = ["field_list", "field_obj"]

_EMPTY: Mapping[str, Any] = {}


def field_obj(source: Mapping[str, Any], key: str) -> Mapping[str, Any]:
    value = source.get(key)
    return value if isinstance(value, dict) else _EMPTY


def field_list(source: Mapping[str, Any], key: str) -> list[Any]:
    value = source.get(key)
    return value if isinstance(value, list) else []
