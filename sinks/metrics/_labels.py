"""Label values: every label of every corral metric comes from a closed set.

Prometheus keeps one series per distinct label set, so a label fed from an
open set (a session id, a tool id, a model name an agent invents) grows
without bound. Two tools keep that from happening:

- normalizers map an open value onto a closed set (`exit_kind("signal 9
  (SIGKILL)")` is `"signal"`, `decided_by("rule:r17")` is `"rule"`; a
  guard keeps its id, `"guard:rm-root"`, because the built-in guards are a
  closed set of five, and an operator wants to see which one fires);
- `LabelCap` admits the first `limit` distinct values of a label that is
  closed in practice but open in principle (agent ids: ad-hoc ACP agents
  bring their own; models) and maps every later newcomer to `"other"`,
  counting each overflow so an operator sees the cap was hit.

Ids (session, turn, tool, request) never become labels; they ride on
exemplars (`exemplar_labels`), which Prometheus stores beside a sample
without creating a series.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from ...pipeline.commands import PermissionMode
from ...pipeline.records import DecidedBy, PolicyDecider, PolicyPart
from ...pipeline.rules import GUARD_IDS

__all__ = [
    "DECISIONS",
    "OTHER",
    "OUTCOMES",
    "REQUEST_KINDS",
    "TOOL_KINDS",
    "LabelCap",
    "closed",
    "decided_by_label",
    "exemplar_labels",
    "exit_kind",
    "queue_label",
]

OTHER = "other"

# OpenMetrics caps an exemplar's label names and values at 128 characters in all.
_EXEMPLAR_BUDGET = 128


class LabelCap:
    """Admits at most `limit` distinct values; later newcomers become "other"."""

    __slots__ = ("_admitted", "_limit", "_on_overflow")

    def __init__(self, limit: int, *, on_overflow: Callable[[], None] | None = None) -> None:
        if limit < 1:
            raise ValueError(f"a label cap must admit at least one value, got {limit}")
        self._limit = limit
        self._admitted: set[str] = set()
        self._on_overflow = on_overflow

    def __call__(self, value: str) -> str:
        if value in self._admitted:
            return value
        if len(self._admitted) < self._limit:
            self._admitted.add(value)
            return value
        if self._on_overflow is not None:
            self._on_overflow()
        return OTHER


OUTCOMES = frozenset({"closed", "exited", "failed", "shutdown"})
DECISIONS = frozenset(
    {"allow_once", "allow_always", "deny_once", "deny_always", "answered", "cancelled", "timeout"}
)
REQUEST_KINDS = frozenset({"Permission", "Question"})
TOOL_KINDS = frozenset(
    {
        "Read",
        "Edit",
        "Delete",
        "Move",
        "Search",
        "Execute",
        "Fetch",
        "Think",
        "Other",
        "Subagent",
        "Mcp",
        "none",
    }
)


def closed(value: str, allowed: frozenset[str]) -> str:
    """`value` when it is one of `allowed`, else "other" (a guard on strings from records)."""
    return value if value in allowed else OTHER


def exit_kind(status: str) -> str:
    """An agent process's exit status (`exit_status` of sources/_process) as a kind."""
    if status == "0":
        return "clean"
    if status.isdigit():
        return "error"
    if status.startswith("signal"):
        return "signal"
    return "unknown"


# Rule ids are the user's (open); the modes and corral's guard ids are closed.
_CLOSED_NAMES = {
    PolicyPart.MODE: frozenset(mode.value for mode in PermissionMode),
    PolicyPart.GUARD: GUARD_IDS,
}


def decided_by_label(decided_by: DecidedBy) -> str:
    """`Decision.decided_by` without its open part: `rule:<id>` is "rule".

    A mode or a built-in guard stays as it is (`mode:Ask`, `guard:secret-read`);
    any other (none today) is "mode:other" or "guard:other".
    """
    if not isinstance(decided_by, PolicyDecider):
        return decided_by.value
    part = decided_by.part
    if part is PolicyPart.RULE:
        return part.value
    return str(decided_by) if decided_by.name in _CLOSED_NAMES[part] else f"{part.value}:{OTHER}"


_SESSION_PREFIX = re.compile(r"^s\d+/")


def queue_label(channel_name: str) -> str:
    """The edge a channel stands for: its name without the session id (`s12/driver`)."""
    return _SESSION_PREFIX.sub("", channel_name, count=1)


def exemplar_labels(**ids: str | None) -> dict[str, str]:
    """Ids for an exemplar, trimmed so names and values fit OpenMetrics' budget."""
    labels: dict[str, str] = {}
    budget = _EXEMPLAR_BUDGET
    for name, value in ids.items():
        if not value:
            continue
        room = budget - len(name)
        if room <= 0:
            break
        labels[name] = value[:room]
        budget = room - len(labels[name])
    return labels
