"""Checking request parameters against the real Codex app-server schema.

The schemas under tests/fixtures/codex/protocol/ are copied verbatim from
`codex app-server generate-json-schema` (see the README there). Codex
ignores fields it does not know, so its schemas leave
`additionalProperties` open; `check_params` closes every object that does
not say otherwise, so a misspelt field name fails instead of passing
silently.
"""

from __future__ import annotations

import functools
import json
from pathlib import Path
from typing import Any

import jsonschema

__all__ = ["check_params"]

SCHEMAS = Path(__file__).resolve().parents[2] / "fixtures" / "codex" / "protocol"


def _closed(node: Any) -> Any:
    if isinstance(node, list):
        return [_closed(item) for item in node]
    if not isinstance(node, dict):
        return node
    closed = {key: _closed(value) for key, value in node.items()}
    if "properties" in closed and "additionalProperties" not in closed:
        closed["additionalProperties"] = False
    return closed


@functools.cache
def _validator(name: str) -> jsonschema.protocols.Validator:
    schema = _closed(json.loads((SCHEMAS / f"{name}.json").read_text("utf-8")))
    return jsonschema.Draft7Validator(schema)


def check_params(name: str, params: object) -> None:
    """Fail with the schema's message when `params` is not a valid `name` (e.g. ThreadForkParams)."""
    errors = list(_validator(name).iter_errors(params))
    if errors:
        best = jsonschema.exceptions.best_match(errors)
        raise AssertionError(f"not valid {name}: {best.message}\nparams: {json.dumps(params)}")
