"""Session settings an agent advertises (`model`, `effort`, `mode`...).

A `ConfigOption` is either a boolean or a select with its `ConfigChoice`s;
`current` is the value in force and `live` says whether it may change in the
middle of a session. A `ConfigValue` is a string or a boolean; anything else
on the wire is a `ShapeError`.
"""

from __future__ import annotations

import attrs

from ._shape import Fields, ShapeError, tag_of

__all__ = [
    "ConfigChoice",
    "ConfigOption",
    "ConfigValue",
    "config_value_from_wire",
]

ConfigValue = str | bool


def config_value_from_wire(raw: object, path: str) -> ConfigValue:
    if isinstance(raw, str | bool):
        return raw
    raise ShapeError(path, "expected a string or a boolean")


@attrs.frozen(kw_only=True)
class ConfigChoice:
    value: str
    label: str
    description: str | None = None


@attrs.frozen(kw_only=True)
class ConfigOption:
    """A session setting the agent advertises (`model`, `effort`, `mode`...).

    `choices` empty with `boolean` false is never built: a Select has choices.
    """

    id: str
    name: str
    live: bool
    boolean: bool = False
    choices: tuple[ConfigChoice, ...] = ()
    category: str | None = None
    current: ConfigValue | None = None

    def to_wire(self) -> dict[str, object]:
        kind: object = (
            "Boolean"
            if self.boolean
            else {
                "Select": {
                    "choices": [
                        {"value": c.value, "label": c.label, "description": c.description}
                        for c in self.choices
                    ]
                }
            }
        )
        return {
            "id": self.id,
            "name": self.name,
            "category": self.category,
            "kind": kind,
            "current": self.current,
            "live": self.live,
        }

    def accepts(self, value: ConfigValue) -> bool:
        if self.boolean:
            return isinstance(value, bool)
        return isinstance(value, str) and any(c.value == value for c in self.choices)

    @classmethod
    def from_wire(cls, raw: object, path: str) -> ConfigOption:
        fields = Fields(raw, path)
        tag, payload = tag_of(fields.value("kind"), f"{path}.kind", frozenset({"Boolean"}))
        choices: list[ConfigChoice] = []
        if payload is not None:
            if tag != "Select":
                raise ShapeError(f"{path}.kind", f"unknown config kind {tag!r}")
            select = Fields(payload, f"{path}.kind.{tag}")
            for item_path, item in select.array("choices"):
                choice = Fields(item, item_path)
                choices.append(
                    ConfigChoice(
                        value=choice.string("value"),
                        label=choice.string("label"),
                        description=choice.opt_string("description"),
                    )
                )
        current = fields.raw.get("current")
        return cls(
            id=fields.string("id"),
            name=fields.string("name"),
            live=fields.flag("live"),
            boolean=payload is None,
            choices=tuple(choices),
            category=fields.opt_string("category"),
            current=None if current is None else config_value_from_wire(current, f"{path}.current"),
        )
