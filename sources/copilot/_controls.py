"""Copilot's live settings, compaction, plan and todos, as its SDK server offers them.

What Copilot CLI 1.0.102's SDK server answers (`copilot-sdk/generated/rpc.d.ts`,
checked against the real CLI in offline provider mode):

- `session.model.list` lists the models of the session (empty under a
  bring-your-own-key provider), and `session.create` answers the current
  one (`modelState.modelId`) and mode (`mode`). They are the live `model`
  option (the listed ids and the current one) and the live `mode` option
  (`interactive`, `plan`: the SDK's `SessionMode`s but `autopilot`, which
  corral never offers, as it offers no mode that acts without asking).
- `configure model X` → `session.model.switchTo {modelId: X}`; `configure
  mode M` → `session.mode.set {mode: M}`. Copilot emits
  `session.model_change` / `session.mode_changed` before it answers (the
  normalizer maps those to `ConfigApplied`, which answers the configure).
  `switchTo` emits its event even for the current model; `mode.set` emits
  none for the mode Copilot is in, so there the driver confirms with a
  `ConfigApplied` of its own, and only there (a second one would answer
  the next configure of the option with a stale value). A refusal is a
  `ConfigRefused`.
- `compact` → `session.history.compact`: a turn. Copilot emits
  `session.compaction_start` / `session.compaction_complete` (mapped to a
  note and `ContextCompacted`, or a Warning when there was nothing to
  compact) before it answers; the turn ends behind them, Completed, or
  Failed with Copilot's message.
- `session.todos_changed` and `session.plan_changed` (create / update) only
  signal: the driver reads `session.plan.readSqlTodos` (the todo rows) or
  `session.plan.read` (the plan file, markdown) and emits `PlanUpdated`;
  the plan file's list items are the entries (`[x]` completed, `[ ]`
  pending), the whole text under `copilot/plan`. Replays have no RPC:
  there the signals stay Info notes.

Pure functions, no I/O: the driver makes the calls.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from ...pipeline.driver import Emitted
from ...pipeline.events import ConfigChoice, ConfigOption, PlanEntry, PlanStatus, PlanUpdated

__all__ = [
    "MODES",
    "PLAN_SIGNALS",
    "configure_call",
    "mode_option",
    "model_option",
    "plan_call",
    "plan_from",
]

# The SDK's `SessionMode`s but `autopilot`, where Copilot goes on by itself: modes that let
# an agent act without asking are never offered to `configure` (see the README).
MODES = ("interactive", "plan")
_TODO_STATUS = {
    "pending": PlanStatus.PENDING,
    "in_progress": PlanStatus.IN_PROGRESS,
    "done": PlanStatus.COMPLETED,
    "completed": PlanStatus.COMPLETED,
}
_ITEM = re.compile(r"^\s*(?:[-*+]|\d+[.)])\s+(?:\[(?P<box>[ xX~-])\]\s*)?(?P<text>\S.*)$")
PLAN_SIGNALS = frozenset({"session.todos_changed", "session.plan_changed"})


def mode_option(current: object) -> ConfigOption:
    """The live `mode` option; `current` is `session.create`'s `mode`."""
    choices = tuple(ConfigChoice(value=mode, label=mode.capitalize()) for mode in MODES)
    now = current if isinstance(current, str) and current in MODES else None
    return ConfigOption(id="mode", name="Mode", live=True, choices=choices, current=now)


def model_option(listed: object, current: object) -> ConfigOption | None:
    """The live `model` option: `session.model.list`'s models and the current one."""
    entries = listed.get("list") if isinstance(listed, Mapping) else None
    choices: dict[str, ConfigChoice] = {}
    for entry in entries if isinstance(entries, list) else ():
        ident = entry.get("id") if isinstance(entry, Mapping) else entry
        if isinstance(ident, str) and ident:
            name = entry.get("name") if isinstance(entry, Mapping) else None
            label = name if isinstance(name, str) and name else ident
            choices.setdefault(ident, ConfigChoice(value=ident, label=label))
    now = current if isinstance(current, str) and current else None
    if now is not None:
        choices.setdefault(now, ConfigChoice(value=now, label=now))
    if not choices:
        return None
    return ConfigOption(
        id="model", name="Model", live=True, choices=tuple(choices.values()), current=now
    )


def configure_call(option: str, value: object) -> tuple[str, dict[str, Any]] | None:
    """The SDK call that sets `option` to `value`; None for an option it has no call for."""
    if option == "model" and isinstance(value, str):
        return "session.model.switchTo", {"modelId": value}
    if option == "mode" and isinstance(value, str):
        return "session.mode.set", {"mode": value}
    return None


def plan_call(event: object) -> str | None:
    """The read a plan or todo signal calls for; None for any other event (or a delete)."""
    if not isinstance(event, Mapping):
        return None
    kind, data = event.get("type"), event.get("data")
    if kind == "session.todos_changed":
        return "session.plan.readSqlTodos"
    if kind == "session.plan_changed":
        operation = data.get("operation") if isinstance(data, Mapping) else None
        return None if operation == "delete" else "session.plan.read"  # delete: the normalizer's
    return None


def plan_from(method: str, result: object) -> Emitted | None:
    """`PlanUpdated` from what `plan_call`'s read answered; None for a shape it cannot read."""
    if not isinstance(result, Mapping):
        return None
    if method == "session.plan.readSqlTodos":
        rows = result.get("rows")
        if not isinstance(rows, list):
            return None
        return Emitted(kind=PlanUpdated(tuple(_todo(row) for row in rows if _todo_text(row))))
    content = result.get("content") if result.get("exists") is True else ""
    text = content if isinstance(content, str) else ""
    lines = text.replace("\r\n", "\n").split("\n")  # never splitlines(): U+2028 is text
    entries = tuple(_plan_entry(line) for line in lines if _ITEM.match(line))
    return Emitted(kind=PlanUpdated(entries), extensions={"copilot/plan": text})


def _todo_text(row: object) -> str:
    if not isinstance(row, Mapping):
        return ""
    for key in ("title", "description", "id"):
        value = row.get(key)
        if isinstance(value, str) and value.strip():
            return value.strip()
    return ""


def _todo(row: Mapping[str, Any]) -> PlanEntry:
    status = row.get("status")
    known = _TODO_STATUS.get(status.lower() if isinstance(status, str) else "")
    return PlanEntry(text=_todo_text(row), status=known or PlanStatus.PENDING)


def _plan_entry(line: str) -> PlanEntry:
    item = _ITEM.match(line)
    assert item is not None
    box = item.group("box")
    status = {"x": PlanStatus.COMPLETED, "~": PlanStatus.IN_PROGRESS, "-": PlanStatus.IN_PROGRESS}
    return PlanEntry(
        text=item.group("text").strip(),
        status=status.get((box or " ").lower(), PlanStatus.PENDING),
    )
