"""ACP session modes and config options as corral `ConfigOption`s.

An ACP agent advertises settings two ways in `session/new` (and
`session/load`): `modes` (`currentModeId` + `availableModes`, set with
`session/set_mode`) and `configOptions` (select or boolean, set with
`session/set_config_option`). corral shows both as live `ConfigOption`s:
each config option under its own id, and the modes as one select option
`mode` (unless a config option already is the mode: same id, or category
"mode"). `Settings` remembers which wire call sets which option.

Changes the agent makes on its own (`current_mode_update`,
`config_option_update`) become `ConfigApplied` for each changed value,
so the engine's configuration follows; a new set of options also becomes
`InfoChanged(config_options=...)`. Pure data in, data out: no I/O.

Every agent stays in the mode that asks: a choice that lets the agent
allow tools by itself (Claude adapter `bypassPermissions`, `acceptEdits`,
`dontAsk`; Gemini `yolo`, `autoEdit`; Copilot `#autopilot` and its
`allow_all = on`; Codex `full-access`) is never offered, so neither the app
nor `configure` can pick it (`InvalidConfiguration`, like any value not
offered). corral's own `AcceptEdits` and `AutoApprove` modes do that job,
with the policy and its guards still deciding.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import attrs

from ...pipeline.driver import ConfigApplied, DriverEvent, InfoChanged
from ...pipeline.events import ConfigChoice, ConfigOption, ConfigValue
from .._choices import choice_of, choices_of
from .._kit.recent import Recent

__all__ = ["MODEL_OPTION", "MODE_OPTION", "Settings"]

MODE_OPTION = "mode"
MODEL_OPTION = "model"

# Mode ids (or the `#fragment` of a URL id) in which the agent decides by itself.
_SELF_APPROVING_MODES = frozenset(
    {
        "bypassPermissions",  # Claude Code adapter
        "acceptEdits",  # Claude Code adapter: edits without asking
        "dontAsk",  # Claude Code adapter: denies what is not pre-approved, without asking
        "yolo",  # Gemini CLI
        "autoEdit",  # Gemini CLI
        "autopilot",  # Copilot: "enables allow-all"
        "full-access",  # Codex adapter's preset that never asks
    }
)
# Other options with values that stop the asking.
_SELF_APPROVING_VALUES: Mapping[str, frozenset[str]] = {
    "allow_all": frozenset({"on"}),  # Copilot, category "permissions"
}


def _self_approving(option: str, category: str | None, value: str) -> bool:
    """Whether choosing `value` would let the agent allow tools without asking corral."""
    if value in _SELF_APPROVING_VALUES.get(option, ()):
        return True
    is_mode = option == MODE_OPTION or category == "mode"
    return is_mode and value.rpartition("#")[2] in _SELF_APPROVING_MODES


def _choices(raw: object) -> tuple[ConfigChoice, ...]:
    """Select values, flattening grouped options."""
    out: list[ConfigChoice] = []
    for item in raw if isinstance(raw, list) else []:
        if isinstance(item, dict) and isinstance(item.get("options"), list):
            out.extend(_choices(item["options"]))
        elif (choice := choice_of(item, "value", "name")) is not None:
            out.append(choice)
    return tuple(out)


def config_option(raw: object) -> ConfigOption | None:
    """One ACP config option, or None when it is not one corral can offer."""
    if isinstance(raw, dict) and raw.get("type") != "boolean":
        return _select_option(raw)  # a boolean's value is not a string: read it each time
    return _read_option(raw)


def _read_option(raw: object) -> ConfigOption | None:
    if not isinstance(raw, dict) or not isinstance(raw.get("id"), str):
        return None
    category = raw.get("category")
    name = raw.get("name")
    common: dict[str, Any] = {
        "id": raw["id"],
        "name": name if isinstance(name, str) else raw["id"],
        "live": True,
        "category": category if isinstance(category, str) else None,
    }
    current = raw.get("currentValue")
    if raw.get("type") == "boolean":
        return ConfigOption(
            boolean=True, current=current if isinstance(current, bool) else None, **common
        )
    choices = tuple(
        choice
        for choice in _choices(raw.get("options"))
        if not _self_approving(raw["id"], common["category"], choice.value)
    )
    if not choices:
        return None
    return ConfigOption(
        choices=choices, current=current if isinstance(current, str) else None, **common
    )


def _select(
    raw: object, option_id: str, name: str, keys: tuple[str, str, str]
) -> ConfigOption | None:
    """The legacy `modes` or the unstable `models` state as one select option."""
    if not isinstance(raw, dict):
        return None
    listed, value_key, current_key = keys
    choices = [
        choice
        for choice in choices_of(raw.get(listed), value_key, "name")
        if not _self_approving(option_id, option_id, choice.value)
    ]
    if not choices:
        return None
    current = raw.get(current_key)
    return ConfigOption(
        id=option_id,
        name=name,
        live=True,
        category=option_id,
        choices=tuple(choices),
        current=current if isinstance(current, str) else None,
    )


# Every session of an agent offers the same options; a select option, the modes and
# the models are read from strings only, so each is remembered (`Recent`).
_select_option = Recent(_read_option, size=32)
mode_option = Recent(
    lambda raw: _select(raw, MODE_OPTION, "Mode", ("availableModes", "id", "currentModeId"))
)
model_option = Recent(
    lambda raw: _select(
        raw, MODEL_OPTION, "Model", ("availableModels", "modelId", "currentModelId")
    )
)


def _has(options: Mapping[str, ConfigOption], option_id: str) -> bool:
    """A config option already is `option_id` (same id, or that category)."""
    return option_id in options or any(o.category == option_id for o in options.values())


@attrs.define
class Settings:
    """The session's options, in the agent's order, and how each is set."""

    options: dict[str, ConfigOption] = attrs.field(factory=dict)
    via_mode: bool = False  # `mode` is set with session/set_mode
    via_model: bool = False  # `model` is set with session/set_model

    @classmethod
    def from_session(cls, result: Mapping[str, Any]) -> Settings:
        options: dict[str, ConfigOption] = {}
        for raw in result.get("configOptions") or []:
            option = config_option(raw)
            if option is not None:
                options[option.id] = option
        settings = cls(options=options)
        mode = mode_option(result.get("modes"))
        if mode is not None and not _has(options, MODE_OPTION):
            settings.options = {MODE_OPTION: mode, **settings.options}
            settings.via_mode = True
        model = model_option(result.get("models"))
        if model is not None and not _has(options, MODEL_OPTION):
            settings.options = {**settings.options, MODEL_OPTION: model}
            settings.via_model = True
        return settings

    def config_options(self) -> tuple[ConfigOption, ...]:
        return tuple(self.options.values())

    def current(self) -> tuple[tuple[str, ConfigValue], ...]:
        return tuple((o.id, o.current) for o in self.options.values() if o.current is not None)

    def set_call(self, session_id: str, option: str, value: ConfigValue) -> tuple[str, object]:
        """The wire call (method, params) that sets `option` to `value`."""
        if option == MODE_OPTION and self.via_mode:
            return "session/set_mode", {"sessionId": session_id, "modeId": value}
        if option == MODEL_OPTION and self.via_model:
            return "session/set_model", {"sessionId": session_id, "modelId": value}
        params: dict[str, object] = {"sessionId": session_id, "configId": option, "value": value}
        if isinstance(value, bool):
            params["type"] = "boolean"
        return "session/set_config_option", params

    def _apply(self, option: str, value: ConfigValue) -> bool:
        known = self.options.get(option)
        if known is None or known.current == value:
            return False
        self.options[option] = attrs.evolve(known, current=value)
        return True

    def applied(self, option: str, value: ConfigValue, result: object) -> list[DriverEvent]:
        """A set call succeeded; its answer may carry the whole new option set."""
        events: list[DriverEvent] = []
        if isinstance(result, dict) and isinstance(result.get("configOptions"), list):
            before = self._shape()
            events += self.replaced(result["configOptions"], skip=option)
            if self._shape() == before:
                events = events[1:]  # the same options: only values changed
        self._apply(option, value)
        events.append(ConfigApplied(option=option, value=value))
        return events

    def _shape(self) -> list[ConfigOption]:
        """The options without their current values."""
        return [attrs.evolve(o, current=None) for o in self.options.values()]

    def mode_changed(self, mode_id: object) -> list[DriverEvent]:
        if not isinstance(mode_id, str) or not self.via_mode:
            return []
        if not self._apply(MODE_OPTION, mode_id):
            return []
        return [ConfigApplied(option=MODE_OPTION, value=mode_id)]

    def replaced(self, raw_options: Sequence[object], skip: str | None = None) -> list[DriverEvent]:
        """`config_option_update`: a new full set; report the set and each changed value."""
        before = {o.id: o.current for o in self.options.values()}
        fresh = {o.id: o for raw in raw_options if (o := config_option(raw)) is not None}
        if self.via_mode and MODE_OPTION in self.options and MODE_OPTION not in fresh:
            fresh = {MODE_OPTION: self.options[MODE_OPTION], **fresh}
        if self.via_model and MODEL_OPTION in self.options and MODEL_OPTION not in fresh:
            fresh = {**fresh, MODEL_OPTION: self.options[MODEL_OPTION]}
        self.options = fresh
        events: list[DriverEvent] = [InfoChanged(config_options=self.config_options())]
        for option in fresh.values():
            if option.id == skip or option.current is None:
                continue
            if before.get(option.id) != option.current:
                events.append(ConfigApplied(option=option.id, value=option.current))
        return events
