"""What an agent offers to pick from, read off its wire: setting choices and slash commands.

Agents list models, modes, option values and slash commands as arrays of
objects whose keys differ by wire (`value`, `modelId`, `id`; `name`,
`displayName`). The rule of reading them is the same everywhere and lives
here: an entry without a string id is skipped, the label falls back to the
id, a description counts only when it is a string. Which keys a wire uses
stays with its provider. Pure functions over decoded JSON.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

from ..pipeline.events import ConfigChoice, ConfigOption, ConfigValue, SlashCommand

__all__ = ["choice_of", "choices_of", "model_select", "slash_commands"]


def choice_of(raw: object, value_key: str, label_key: str) -> ConfigChoice | None:
    """One choice, or None when `raw` has no string `value_key`."""
    if not isinstance(raw, dict):
        return None
    value = raw.get(value_key)
    if not isinstance(value, str):
        return None
    label, description = raw.get(label_key), raw.get("description")
    return ConfigChoice(
        value=value,
        label=label if isinstance(label, str) else value,
        description=description if isinstance(description, str) else None,
    )


def choices_of(raw: object, value_key: str, label_key: str) -> list[ConfigChoice]:
    """The choices of a JSON array (anything else holds none)."""
    return [
        choice
        for item in (raw if isinstance(raw, list) else ())
        if (choice := choice_of(item, value_key, label_key)) is not None
    ]


def model_select(choices: Iterable[ConfigChoice], current: ConfigValue | None) -> ConfigOption:
    """The live `model` option every agent with a model list offers."""
    return ConfigOption(
        id="model",
        name="Model",
        live=True,
        choices=tuple(choices),
        category="model",
        current=current,
    )


def slash_commands(
    raw: object, hint_of: Callable[[dict[str, Any]], object]
) -> tuple[SlashCommand, ...]:
    """A JSON array of commands; `hint_of` finds a command's input hint, if a string."""
    commands = []
    for command in raw if isinstance(raw, list) else ():
        if not isinstance(command, dict):
            continue
        name = command.get("name")
        if not isinstance(name, str):
            continue
        hint, description = hint_of(command), command.get("description")
        commands.append(
            SlashCommand(
                name=name,
                description=description if isinstance(description, str) else "",
                input_hint=hint if isinstance(hint, str) else None,
            )
        )
    return tuple(commands)
