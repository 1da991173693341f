"""Every labelled series at zero, from the start: dashboards show 0, not "No data".

A Prometheus series exists only once a sample carries its label set, so a
counter of failed turns first appears when a turn fails, and until then a
dashboard panel reading it says "No data", which a person reads as
"broken", not "none yet". Every label corral uses comes from a closed set
(`_labels`), so the series can be made up front: `zero(families, agents)`
creates each family's series for every known label value with the value
0 (counters and gauges) or an empty histogram (count 0, every bucket 0).

Not the full product of the label sets: for each agent, each other label
takes each of its values once, the rest at their first value (a
"diagonal"). Every value of every label is then there for a `sum by` to
show as 0, in tens of series per agent where the product (decisions alone:
2 request kinds x 7 decisions x 17 deciders) would be hundreds.

The agent label is the one open set: the Runtime passes the ids of its
catalog's agents (ad-hoc agents appear when they first run). Labels whose
values appear only with a session (a model name) get the value the
session itself uses before it knows one (`unknown`).
"""

from __future__ import annotations

import typing
from collections.abc import Iterable, Sequence

from ...pipeline.errors import ErrorKind
from ...pipeline.events import DiagnosticLevel, EventKind, SessionStatus
from ...pipeline.records import decided_by_from
from ...pipeline.rules import GUARD_IDS
from ...pipeline.tokens import TOKEN_NAMES
from ._families import Families
from ._labels import DECISIONS, OUTCOMES, REQUEST_KINDS, TOOL_KINDS, decided_by_label
from ._store import Counter, Family, Gauge, Histogram

__all__ = ["DECIDED_BY", "zero"]

DECIDED_BY = (
    "app",
    "rule",
    "timeout",
    "cancel",
    "turn_end",
    "shutdown",
    "agent",
    "generate",
    "limit",
    "mode:Ask",
    "mode:AutoApprove",
    "mode:AcceptEdits",
    *(f"guard:{guard}" for guard in sorted(GUARD_IDS)),
)
_STOPS = ("Completed", "Failed", "Cancelled", "Refused")
_TOOL_ENDS = ("Completed", "Failed", "Cancelled", "Unfinished")
_LINE_TYPES = ("hello", "reply", "error", "event", "session_error", "closed")


def _values(agents: Sequence[str]) -> dict[str, Sequence[str]]:
    """Each label name's known values."""
    return {
        "agent": agents,
        "outcome": (*sorted(OUTCOMES), "aborted"),
        "status": [status.value for status in SessionStatus],
        "level": [level.value for level in DiagnosticLevel],
        "origin": ("prompt", "agent"),
        "stop": _STOPS,
        "request_kind": sorted(REQUEST_KINDS),
        "tool_kind": sorted(TOOL_KINDS),
        "decision": sorted(DECISIONS),
        "decided_by": DECIDED_BY,
        "type": TOKEN_NAMES,
        "model": ("unknown",),
        "exit": ("clean", "error", "signal", "unknown"),
        "direction": ("in", "out"),
        "sink": ("transcript",),
        "label": ("agent", "model", "queue", "node"),
        # `serve --ray`'s nodes appear as sessions are placed; before, the front's own.
        "node": ("local",),
    }


def _kinds(family: Family) -> Sequence[str]:
    """`kind` means a different closed set in each family that has it."""
    if family.name == "corral_agent_errors_total":
        return [kind.value for kind in ErrorKind]
    if family.name == "corral_decode_errors_total":
        return ("not_json", "oversized", "bad_shape")
    if family.name == "corral_events_total":
        return [kind.__name__ for kind in typing.get_args(EventKind)]
    return sorted(TOOL_KINDS)


def _combinations(family: Family, values: dict[str, Sequence[str]]) -> Iterable[tuple[str, ...]]:
    """Every agent, with every value of each other label once (the rest at their first)."""
    columns = _columns(family, values)
    if any(not column for column in columns):
        return ()
    agent = family.labelnames.index("agent") if "agent" in family.labelnames else None
    found: dict[tuple[str, ...], None] = {}
    for who in columns[agent] if agent is not None else (None,):
        base = [column[0] for column in columns]
        if agent is not None and who is not None:
            base[agent] = who
        found[tuple(base)] = None
        for index, column in enumerate(columns):
            if index == agent:
                continue
            for value in column:
                found[(*base[:index], value, *base[index + 1 :])] = None
    return found


def _columns(family: Family, values: dict[str, Sequence[str]]) -> list[Sequence[str]]:
    columns: list[Sequence[str]] = []
    for name in family.labelnames:
        if name == "kind":
            columns.append(_kinds(family))
        elif name == "type" and family.name == "corral_line_messages_total":
            columns.append(_LINE_TYPES)
        elif name == "status" and family.name == "corral_tool_calls_total":
            columns.append(_TOOL_ENDS)
        else:
            columns.append(values.get(name, ()))
    return columns


def zero(families: Families, agents: Iterable[str]) -> None:
    """Create every series of every family, for these agents, at zero.

    Label sets that are already there keep their values (safe to call twice).
    """
    values = _values(sorted(set(agents)))
    words = [value for value in DECIDED_BY if value != "rule"]  # "rule" is a label, not a word
    assert [decided_by_label(decided_by_from(word)) for word in words] == words
    for family in families.store.families:
        if family.name == "corral_build_info":
            continue  # one series, its version, set at start
        for labels in _combinations(family, values):
            if isinstance(family, Counter):
                family.inc(labels, 0.0)
            elif isinstance(family, Gauge):
                family.add(labels, 0.0)
            elif isinstance(family, Histogram):
                family.touch(labels)
