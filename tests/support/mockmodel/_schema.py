"""Build small JSON values that fit a JSON schema.

The mock model must answer structured-output requests (Gemini's model
router, its next-speaker check) and fill the required arguments of tool
calls. `minimal_instance(schema)` returns a small value valid for the common
subset of JSON Schema those requests use: `type` (also Gemini's upper-case
spelling and type lists), `properties`/`required`, `items`/`minItems`,
`enum`, `const`, `default`, `anyOf`/`oneOf` (first branch that is not null),
`allOf` (merged), local `$ref`, numeric bounds and `minLength`/`maxLength`.
Only required properties are filled. `fill_object(schema, values)` starts
from chosen property values (dropping names the schema does not declare) and
fills the remaining required properties minimally.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

__all__ = ["fill_object", "minimal_instance"]

_MAX_DEPTH = 32


def minimal_instance(schema: Any) -> Any:
    """A small JSON value valid against `schema` (best effort for exotic keywords)."""
    return _minimal(schema, root=schema, depth=0)


def _minimal(schema: Any, *, root: Any, depth: int) -> Any:
    if not isinstance(schema, Mapping) or depth > _MAX_DEPTH:
        return None
    if "$ref" in schema:
        return _minimal(_resolve(root, str(schema["$ref"])), root=root, depth=depth + 1)
    if "const" in schema:
        return schema["const"]
    if isinstance(schema.get("enum"), list) and schema["enum"]:
        return schema["enum"][0]
    if "default" in schema:
        return schema["default"]
    for key in ("anyOf", "oneOf"):
        branches = schema.get(key)
        if isinstance(branches, list) and branches:
            chosen = next((b for b in branches if _type_of(b) != "null"), branches[0])
            return _minimal(chosen, root=root, depth=depth + 1)
    if isinstance(schema.get("allOf"), list):
        return _minimal(_merge_all_of(schema), root=root, depth=depth + 1)
    return _by_type(schema, _type_of(schema), root, depth)


def fill_object(schema: Any, values: Mapping[str, Any]) -> dict[str, Any]:
    """`values` limited to the declared properties, plus minimal required ones."""
    properties = schema.get("properties") if isinstance(schema, Mapping) else None
    if not isinstance(properties, Mapping):
        return dict(values)
    filled = {name: value for name, value in values.items() if name in properties}
    for name in _required(schema):
        if name not in filled:
            filled[name] = _minimal(properties.get(name, {}), root=schema, depth=0)
    return filled


def _by_type(schema: Mapping[str, Any], kind: str, root: Any, depth: int) -> Any:
    if kind == "object":
        properties = schema.get("properties")
        properties = properties if isinstance(properties, Mapping) else {}
        return {
            name: _minimal(properties.get(name, {}), root=root, depth=depth + 1)
            for name in _required(schema)
        }
    if kind == "array":
        count = int(schema.get("minItems", 0))
        prefix = schema.get("prefixItems")
        if isinstance(prefix, list) and prefix:
            return [_minimal(item, root=root, depth=depth + 1) for item in prefix]
        item = _minimal(schema.get("items", {}), root=root, depth=depth + 1)
        return [item for _ in range(count)]
    if kind in ("integer", "number"):
        return _number(schema, integer=kind == "integer")
    if kind == "boolean":
        return False
    if kind == "null":
        return None
    return _string(schema)


def _type_of(schema: Any) -> str:
    if not isinstance(schema, Mapping):
        return "any"
    declared = schema.get("type")
    if isinstance(declared, list):
        declared = next((t for t in declared if str(t).lower() != "null"), "null")
    if isinstance(declared, str):
        return declared.lower()
    if "properties" in schema:
        return "object"
    if "items" in schema or "prefixItems" in schema:
        return "array"
    return "string"


def _required(schema: Mapping[str, Any]) -> list[str]:
    required = schema.get("required")
    return [str(name) for name in required] if isinstance(required, list) else []


def _number(schema: Mapping[str, Any], *, integer: bool) -> int | float:
    value: float = 1  # not 0: scores and counts are often 1-based (Gemini's router)
    if isinstance(schema.get("minimum"), int | float):
        value = schema["minimum"]
    if isinstance(schema.get("exclusiveMinimum"), int | float):
        value = schema["exclusiveMinimum"] + 1
    if isinstance(schema.get("maximum"), int | float) and value > schema["maximum"]:
        value = schema["maximum"]
    return int(value) if integer else value


def _string(schema: Mapping[str, Any]) -> str:
    if schema.get("format") == "date-time":
        return "1970-01-01T00:00:00Z"
    text = "mock"
    max_length = schema.get("maxLength")
    if isinstance(max_length, int):
        text = text[:max_length]
    min_length = schema.get("minLength")
    if isinstance(min_length, int) and len(text) < min_length:
        text = text + "x" * (min_length - len(text))
    return text


def _resolve(root: Any, ref: str) -> Any:
    if not ref.startswith("#"):
        return {}
    node = root
    for part in ref.lstrip("#").strip("/").split("/"):
        if not part:
            continue
        key = part.replace("~1", "/").replace("~0", "~")
        if not isinstance(node, Mapping) or key not in node:
            return {}
        node = node[key]
    return node


def _merge_all_of(schema: Mapping[str, Any]) -> dict[str, Any]:
    merged: dict[str, Any] = {k: v for k, v in schema.items() if k != "allOf"}
    properties: dict[str, Any] = dict(merged.get("properties", {}))
    required: list[str] = list(merged.get("required", []))
    for part in schema["allOf"]:
        if not isinstance(part, Mapping):
            continue
        properties.update(part.get("properties", {}))
        required += [r for r in part.get("required", []) if r not in required]
        merged.update({k: v for k, v in part.items() if k not in ("properties", "required")})
    if properties:
        merged["properties"] = properties
    if required:
        merged["required"] = required
    return merged
