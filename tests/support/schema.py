"""Validation against the seed schemas, as every test that reads corral's output uses it.

`check_line(obj)` asserts one line corral wrote is a valid `definitions.Line`
of the line-protocol schema (the project's own copy, which a test keeps
equal to the seed). `validator(schema_file, definition)` builds a validator
for any definition of any seed schema the project carries.
"""

from __future__ import annotations

import functools
import json
from importlib import resources
from typing import Any

import jsonschema

__all__ = ["check_line", "schema_text", "validator"]


def schema_text(name: str) -> str:
    return resources.files("corral.pipeline").joinpath(f"schema/{name}").read_text("utf-8")


@functools.cache
def _schema(name: str) -> dict[str, Any]:
    loaded: dict[str, Any] = json.loads(schema_text(name))
    return loaded


@functools.cache
def validator(name: str, definition: str | None) -> jsonschema.protocols.Validator:
    schema = _schema(name)
    if definition is None:
        target: dict[str, Any] = schema
    else:
        target = {"$ref": f"#/definitions/{definition}", "definitions": schema["definitions"]}
    cls = jsonschema.validators.validator_for(schema)
    return cls(target)  # type: ignore[no-any-return]


def check_line(line: object) -> None:
    """Fail with the schema's own message when `line` is not a valid Line."""
    errors = sorted(
        validator("line-protocol.schema.json", "Line").iter_errors(line), key=lambda e: e.path
    )
    if errors:
        # anyOf errors are terse; show the best match and the line itself.
        best = jsonschema.exceptions.best_match(errors)
        raise AssertionError(f"not a valid Line: {best.message}\nline: {json.dumps(line)[:2000]}")


def check(name: str, definition: str, value: object) -> None:
    errors = list(validator(name, definition).iter_errors(value))
    if errors:
        best = jsonschema.exceptions.best_match(errors)
        raise AssertionError(
            f"not a valid {definition} of {name}: {best.message}\nvalue: {json.dumps(value)[:2000]}"
        )
