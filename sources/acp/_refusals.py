"""The events a refused request of the agent shows the app.

Pure functions over what `_asks` and `_requests` decided: a refused command
is a Warning Diagnostic carrying the agent's own frame, and a refused or
changed request is its tool cancelled plus the warning it carries, if any.
Kept apart from `_requests.py`, which serves the requests.
"""

from __future__ import annotations

from ...pipeline.driver import DriverEvent, Emitted
from ...pipeline.events import Diagnostic, DiagnosticLevel, ToolUpdated
from ._actions import Reply, ReplyError
from ._frames import RAW_FRAME

__all__ = ["refusal_events", "refused_command"]


def refused_command(reason: str, params: object) -> Emitted:
    return Emitted(
        kind=Diagnostic(
            level=DiagnosticLevel.WARNING,
            message=f"corral refused to run the agent's command: {reason}",
        ),
        extensions={"acp/terminal_refused": reason, RAW_FRAME: params},
    )


def refusal_events(action: Reply | ReplyError) -> list[DriverEvent]:
    """What the app sees of a refused request: its tool cancelled, a warning if any."""
    events: list[DriverEvent] = []
    if isinstance(action, ReplyError) and action.tool is not None:
        events.append(Emitted(kind=ToolUpdated(action.tool)))
    if action.warning is not None:
        warning = Diagnostic(level=DiagnosticLevel.WARNING, message=action.warning)
        key = "acp/terminal_refused" if isinstance(action, ReplyError) else "acp/changed_tool"
        events.append(Emitted(kind=warning, extensions={key: action.warning}))
    return events
