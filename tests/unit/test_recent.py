"""`Recent` (`sources/_kit/recent.py`) and the ACP readings it remembers: the remembered
answer is the one a fresh reading gives."""

from __future__ import annotations

import copy
from typing import Any

import orjson
import pytest
from corral.sources._choices import slash_commands
from corral.sources._kit.recent import Recent
from corral.sources.acp._settings import (
    Settings,
    _read_option,
    _select,
    config_option,
    mode_option,
    model_option,
)
from corral.sources.acp._translate import Translator, _input_hint


def _counted() -> tuple[Recent[tuple[str, ...]], list[object]]:
    reads: list[object] = []

    def read(raw: Any) -> tuple[str, ...]:
        reads.append(raw)
        return tuple(raw)

    return Recent(read, size=2), reads


def test_an_equal_value_gets_the_same_answer_without_a_reading() -> None:
    recent, reads = _counted()
    first = recent(["a", "b"])
    assert recent(["a", "b"]) is first
    assert reads == [["a", "b"]]


def test_only_the_last_few_distinct_values_are_remembered() -> None:
    recent, reads = _counted()
    recent(["a"])
    recent(["b"])
    recent(["c"])  # forgets ["a"], the oldest
    recent(["b"])
    recent(["a"])
    assert reads == [["a"], ["b"], ["c"], ["a"]]


def test_a_recent_holds_one_value_at_least() -> None:
    with pytest.raises(ValueError):
        Recent(tuple, size=0)


_COMMANDS = [
    {"name": "review", "description": "Review the diff", "input": {"hint": "what"}},
    {"name": "init", "description": 7},
    {"description": "no name"},
]
_SELECT = {
    "id": "mode",
    "name": "Mode",
    "category": "mode",
    "type": "select",
    "currentValue": "default",
    "options": [
        {"value": "default", "name": "Default"},
        {"group": "g", "options": [{"value": "plan", "name": "Plan"}, {"value": "yolo"}]},
    ],
}
_MODES = {
    "currentModeId": "default",
    "availableModes": [{"id": "default", "name": "Default"}, {"id": "bypassPermissions"}],
}
_MODELS = {"currentModelId": "m1", "availableModels": [{"modelId": "m1", "name": "One"}]}


def _fresh(raw: Any) -> Any:
    """The same JSON decoded again: equal, not the same object."""
    return orjson.loads(orjson.dumps(raw))


def test_remembered_readings_equal_fresh_ones() -> None:
    translator = Translator()
    update = {"sessionUpdate": "available_commands_update", "availableCommands": _COMMANDS}
    translator.update(copy.deepcopy(update))
    [again] = translator.update(copy.deepcopy(update))
    assert again.commands == slash_commands(_COMMANDS, _input_hint)  # type: ignore[union-attr]
    assert config_option(_fresh(_SELECT)) == _read_option(_SELECT)
    assert config_option(_fresh(_SELECT)) is config_option(_fresh(_SELECT))
    assert mode_option(_fresh(_MODES)) == _select(
        _MODES, "mode", "Mode", ("availableModes", "id", "currentModeId")
    )
    assert model_option(_fresh(_MODELS)) == _select(
        _MODELS, "model", "Model", ("availableModels", "modelId", "currentModelId")
    )


def test_a_boolean_option_is_read_each_time_as_true_equals_one() -> None:
    flag = {"id": "fast", "name": "Fast", "type": "boolean", "currentValue": True}
    assert config_option(flag) is not None and config_option(flag).current is True  # type: ignore[union-attr]
    as_number = {**flag, "currentValue": 1}  # == flag, but not a boolean value
    assert config_option(as_number).current is None  # type: ignore[union-attr]


def test_sessions_get_their_own_settings_from_remembered_options() -> None:
    result = {"sessionId": "s1", "modes": _MODES, "configOptions": [_SELECT]}
    first = Settings.from_session(_fresh(result))
    second = Settings.from_session(_fresh(result))
    second.applied("mode", "plan", None)
    assert second.current() == (("mode", "plan"),)
    assert (
        first.current() == Settings.from_session(_fresh(result)).current() == (("mode", "default"),)
    )
