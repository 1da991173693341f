"""What the list page shows: a status a person reads, the filters, the rows.

Pure functions over the index's `Summary` rows (no I/O but `is_live`, a
lock probe). The index stores the footer's end reason; a person wants one
of a few states, so `state()` folds them:

    live         a writer holds the transcript (re-probed at each request: a
                 writer that died leaves its last row saying "live")
    completed    closed by corral
    failed       closed by corral after a session error
    interrupted  no footer and no writer: the session died, nothing repaired it
    repaired     corral found it unfinished and closed it (footer `interrupted`)

A footer written after a disk error is marked "incomplete" beside its state.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence

import attrs

from .._view import Summary

__all__ = ["STATES", "Filters", "Row", "rows_of", "state"]

STATES = ("completed", "failed", "interrupted", "repaired", "live")


def state(status: str) -> str:
    reason = status.removesuffix(" (incomplete)")
    return {
        "live": "live",
        "closed": "completed",
        "failed": "failed",
        "unfinished": "interrupted",
        "interrupted": "repaired",
    }.get(reason, reason)


@attrs.frozen(kw_only=True)
class Filters:
    agent: str = ""
    status: str = ""
    text: str = ""

    @classmethod
    def of(cls, query: Callable[[str], str | None]) -> Filters:
        def get(name: str) -> str:
            return (query(name) or "").strip()[:200]

        return cls(agent=get("agent"), status=get("status"), text=get("q"))


@attrs.frozen(kw_only=True)
class Row:
    transcript_id: str
    agent: str
    title: str
    started: str
    duration: str
    state: str
    incomplete: bool
    problems: int
    turns: int
    tokens: str
    cost: str


def _when(seconds: float | None) -> str:
    if not seconds:
        return "-"
    return time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(seconds))


def _duration(seconds: float) -> str:
    seconds = max(0, int(seconds))
    hours, rest = divmod(seconds, 3600)
    minutes, secs = divmod(rest, 60)
    if hours:
        return f"{hours}h {minutes:02d}m"
    return f"{minutes}m {secs:02d}s" if minutes else f"{secs}s"


def _row(summary: Summary, now: float, live: Callable[[str], bool]) -> Row:
    current = state(summary.status)
    if current == "live" and not live(summary.transcript_id):
        current = "interrupted"
    end = summary.ended if summary.ended is not None else (now if current == "live" else None)
    return Row(
        transcript_id=summary.transcript_id,
        agent=summary.agent,
        title=summary.title or "",
        started=_when(summary.started),
        duration=_duration(end - summary.started) if end and summary.started else "-",
        state=current,
        incomplete=summary.status.endswith("(incomplete)"),
        problems=summary.problems,
        turns=summary.turns,
        tokens=f"{summary.tokens:,}" if summary.tokens else "-",
        cost=f"${summary.cost_usd:.4f}" if summary.cost_usd else "-",
    )


def rows_of(
    summaries: Sequence[Summary],
    filters: Filters,
    *,
    live: Callable[[str], bool],
    matching: set[str] | None = None,
    now: float | None = None,
) -> list[Row]:
    """The list's rows, newest first, those the filters (and a search) keep."""
    clock = time.time() if now is None else now
    ordered = sorted(summaries, key=lambda s: (s.started, s.transcript_id), reverse=True)
    rows = []
    for summary in ordered:
        if filters.agent and summary.agent != filters.agent:
            continue
        if matching is not None and summary.transcript_id not in matching:
            continue
        row = _row(summary, clock, live)
        if filters.status and row.state != filters.status:
            continue
        rows.append(row)
    return rows
