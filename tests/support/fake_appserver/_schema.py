"""The seed schema of the app-server wire, as the fake checks it."""

from __future__ import annotations

import functools
import json
from importlib import resources
from typing import Any

import jsonschema

__all__ = ["notification_problem", "problem"]

_NAME = "app-server-notifications.schema.json"


@functools.cache
def _schema() -> dict[str, Any]:
    text = resources.files("corral.pipeline").joinpath(f"schema/{_NAME}").read_text("utf-8")
    loaded: dict[str, Any] = json.loads(text)
    return loaded


@functools.cache
def _validator(definition: str | None) -> jsonschema.protocols.Validator:
    schema = _schema()
    target = (
        schema
        if definition is None
        else {"$ref": f"#/$defs/{definition}", "$defs": schema["$defs"]}
    )
    cls = jsonschema.validators.validator_for(schema)
    return cls(target)  # type: ignore[no-any-return]


def _first_error(validator: jsonschema.protocols.Validator, value: object) -> str | None:
    errors = list(validator.iter_errors(value))
    if not errors:
        return None
    return str(jsonschema.exceptions.best_match(errors).message)


def problem(definition: str, value: object) -> str | None:
    """Why `value` is not a valid `$defs/<definition>`, or None."""
    return _first_error(_validator(definition), value)


def notification_problem(message: object) -> str | None:
    """Why `message` is not a valid `ServerNotification`, or None."""
    return _first_error(_validator(None), message)
