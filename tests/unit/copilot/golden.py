"""Golden-file helpers: DriverEvents and ReplayItems as plain JSON, compared to files.

`to_json` writes any event the way a reader checks it: kinds and requests
in their line-protocol shape (`to_wire`), the rest (stops, verdicts,
replay markers) as `{ClassName: {field: value}}` without empty fields.
`assert_golden` compares with a file; `CORRAL_REGOLD=1` rewrites the file
instead (review the diff before keeping it).
"""

from __future__ import annotations

import enum
import json
import os
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import attrs
from corral.pipeline.driver import Emitted, RequestAsked
from corral.pipeline.events import RequestOpened
from corral.pipeline.extensions import wire_extensions

from tests.support.schema import check

__all__ = ["assert_golden", "check_items", "to_json"]


def to_json(value: Any) -> Any:
    if isinstance(value, Emitted):  # as the app sees it: typed fields under `extensions`
        extensions = wire_extensions(value, None)
        seen = attrs.evolve(value, tokens=None, model=None, problem=None, unknown_frame=None)
        value = attrs.evolve(seen, extensions=extensions)
    if hasattr(value, "to_wire"):
        return value.to_wire()
    if attrs.has(type(value)):
        fields = {
            field.name: to_json(getattr(value, field.name))
            for field in attrs.fields(type(value))
            if getattr(value, field.name) not in (None, {}, ())
        }
        return {type(value).__name__: fields}
    if isinstance(value, enum.Enum):
        return value.value
    if isinstance(value, list | tuple):
        return [to_json(item) for item in value]
    if isinstance(value, dict):
        return {key: to_json(item) for key, item in value.items()}
    return value


def check_items(items: Iterable[object]) -> None:
    """Every event kind and request validates against the line-protocol schema."""
    for item in items:
        match item:
            case Emitted(kind=kind):
                check("line-protocol.schema.json", "EventKind", kind.to_wire())
            case RequestAsked(request=request):
                check("line-protocol.schema.json", "EventKind", RequestOpened(request).to_wire())


def assert_golden(path: Path, items: Iterable[object]) -> None:
    actual = [to_json(item) for item in items]
    if os.environ.get("CORRAL_REGOLD") == "1":
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(actual, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    expected = json.loads(path.read_text(encoding="utf-8"))
    assert actual == expected, f"{path.name} differs; rerun with CORRAL_REGOLD=1 and review"
