"""ACP's out-of-conversation updates: notices and context compactions.

What flows in: one `session/update` of kind `notice`, `compaction` or
`compaction_summary` (the reference's `Notice`, `Compaction` and
`CompactionSummary`). What flows out: driver events. Pure data: no I/O.

- `notice` (`severity`, `title`, `description?`) → a Diagnostic at the
  notice's level: info → Info, warning → Warning, error → Error (any
  case); a
  severity the protocol does not name yet is kept in the message and shown
  as Warning (something the agent wanted heard, of unknown weight).
- `compaction` (`compactionId`, `status`, `summary?`, `error?`) is one
  compaction, created the first time its id is seen and updated after
  that. It becomes `ContextCompacted` once per id: when it says
  `completed`, or when its first summary block arrives (a
  `compaction_summary`, or a `summary` on the compaction itself), since
  a retained summary means the context was compacted. `in_progress` is an
  Info Diagnostic (the agent is busy compacting); `failed` a Warning
  Diagnostic with the error; `cancelled` an Info Diagnostic. Unknown
  states are an Info Diagnostic naming the state.

The ids already reported are remembered, at most `_REMEMBERED` of them
(oldest forgotten first): a compaction is a rare event, and forgetting a
very old id can at worst report it twice.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Mapping
from typing import Any

from ...pipeline.driver import DriverEvent, Emitted
from ...pipeline.events import ContextCompacted, Diagnostic, DiagnosticLevel

__all__ = ["Compactions", "notice"]

_REMEMBERED = 64
_SEVERITIES = {
    "info": DiagnosticLevel.INFO,
    "warning": DiagnosticLevel.WARNING,
    "error": DiagnosticLevel.ERROR,
}


def _text(update: Mapping[str, Any], key: str) -> str | None:
    value = update.get(key)
    return value if isinstance(value, str) and value else None


def notice(update: Mapping[str, Any]) -> list[DriverEvent]:
    """`notice` → a Diagnostic at the notice's level."""
    severity = update.get("severity")
    level = _SEVERITIES.get(severity.lower()) if isinstance(severity, str) else None
    parts = [_text(update, "title") or "a notice without a title"]
    if (description := _text(update, "description")) is not None:
        parts.append(description)
    message = ": ".join(parts)
    if level is None:
        level = DiagnosticLevel.WARNING
        message = f"{message} (notice of severity {severity!r})"
    return [Emitted(kind=Diagnostic(level=level, message=message))]


class Compactions:
    """One session's compactions; see the module header."""

    def __init__(self) -> None:
        self._reported: deque[str] = deque(maxlen=_REMEMBERED)

    def _compacted(self, compaction_id: str) -> list[DriverEvent]:
        if compaction_id in self._reported:
            return []
        self._reported.append(compaction_id)
        return [Emitted(kind=ContextCompacted())]

    def summary(self, update: Mapping[str, Any]) -> list[DriverEvent]:
        """`compaction_summary`: a block of the retained summary, so it was compacted."""
        return self._compacted(_text(update, "compactionId") or "")

    def update(self, update: Mapping[str, Any]) -> list[DriverEvent]:
        """`compaction`: where one compaction got to."""
        compaction_id = _text(update, "compactionId") or ""
        raw_status = update.get("status")
        # `in_progress` on the wire; any spelling of the same name is the same state
        status = raw_status.lower().replace("_", "") if isinstance(raw_status, str) else None
        summary = update.get("summary")
        if status == "completed" or (isinstance(summary, list) and summary):
            return self._compacted(compaction_id)
        match status:
            case "inprogress":
                level, message = DiagnosticLevel.INFO, "the agent is compacting its context"
            case "failed":
                error = _text(update, "error") or "no reason given"
                level, message = DiagnosticLevel.WARNING, f"context compaction failed: {error}"
            case "cancelled":
                level, message = DiagnosticLevel.INFO, "context compaction was cancelled"
            case _:
                level, message = DiagnosticLevel.INFO, f"context compaction is {raw_status!r}"
        return [Emitted(kind=Diagnostic(level=level, message=message))]
