"""`system` frames and the frames corral reads but does not show.

What flows in: one decoded frame whose `type` is `system` (or another
frame the protocol has no handler for). What flows out: DriverEvents, or
`None` when the frame is unknown, so the caller reports it (an Info
`Diagnostic` with the raw frame; never silence).

- `init`: the session id (the resume token) and the model;
- `status`: `compacting` is progress (silent); a `permissionMode` the CLI
  changed by itself is a configuration change; a failed compaction is a
  Warning;
- `compact_boundary`: `ContextCompacted`, and the context now holds
  `post_tokens`. The issue named `status: compacting` for this, but that
  frame only says a compaction started: it may still fail (a `status` with
  `compact_result: failed` follows), and the real CLI sends the boundary,
  with the new size, once the context really was replaced. So the boundary
  is the event, and `compacting` stays silent;
- `permission_denied` (a rule or mode refused a tool without asking),
  `api_retry`, `api_error`: Warnings; `local_command_output`,
  `notification`, `informational`: Info;
- `session_title_changed`: the title.

Frames that only pace the CLI's own UI (hooks, task progress, keep-alives,
rate-limit notes) are known and silent.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ...pipeline.driver import DriverEvent, Emitted, InfoChanged, ProblemKind
from ...pipeline.events import ContextCompacted, Diagnostic, DiagnosticLevel
from ...pipeline.framing import Oversized
from ._json import field_obj

__all__ = ["QUIET_FRAMES", "QUIET_SYSTEM", "decode_problem", "note", "unknown_frame"]

SOURCE = "claude"
QUIET_FRAMES = frozenset({"keep_alive", "rate_limit_event", "tool_progress", "streamlined_text"})
QUIET_SYSTEM = frozenset(
    {
        "hook_started",
        "hook_progress",
        "hook_response",
        "session_state_changed",
        "turn_duration",
        "thinking_tokens",
        "task_progress",
        "task_updated",
        "background_tasks_changed",
        "stop_hook_summary",
        "file_snapshot",
    }
)


def note(level: DiagnosticLevel, message: str, frame: Mapping[str, Any]) -> Emitted:
    return Emitted(
        kind=Diagnostic(level=level, message=message),
        extensions={f"{SOURCE}/raw_frame": dict(frame)},
    )


def unknown_frame(frame: Mapping[str, Any], name: str) -> Emitted:
    return Emitted(
        kind=Diagnostic(level=DiagnosticLevel.INFO, message=f"Claude Code sent a {name} frame"),
        unknown_frame=name,
        extensions={f"{SOURCE}/raw_frame": dict(frame)},
    )


def decode_problem(prefix: str, reason: str, kind: ProblemKind) -> Emitted:
    return Emitted(
        kind=Diagnostic(
            level=DiagnosticLevel.WARNING,
            message=f"Claude Code wrote a line corral cannot read ({reason})",
        ),
        problem=kind,
        extensions={f"{SOURCE}/raw_line": prefix},
    )


def oversized(line: Oversized) -> Emitted:
    return decode_problem("", f"a line of {line.length} bytes is too long", ProblemKind.OVERSIZED)


def _text(frame: Mapping[str, Any], *keys: str) -> str:
    for key in keys:
        value = frame.get(key)
        if isinstance(value, str) and value:
            return value
        if isinstance(value, dict) and isinstance(value.get("message"), str):
            return str(value["message"])
    return ""


def _status(frame: Mapping[str, Any]) -> list[DriverEvent]:
    if frame.get("compact_result") == "failed":
        reason = _text(frame, "compact_error") or "no reason given"
        return [note(DiagnosticLevel.WARNING, f"Claude Code could not compact: {reason}", frame)]
    return []


def _denied(frame: Mapping[str, Any]) -> list[DriverEvent]:
    tool = _text(frame, "tool_name") or "a tool"
    reason = _text(frame, "decision_reason", "decision_reason_type", "message")
    suffix = f" ({reason})" if reason else ""
    message = f"Claude Code refused {tool} without asking{suffix}"
    return [note(DiagnosticLevel.WARNING, message, frame)]


def _retry(frame: Mapping[str, Any]) -> list[DriverEvent]:
    attempt, most = frame.get("attempt"), frame.get("max_retries")
    error = _text(frame, "error") or f"status {frame.get('error_status')}"
    message = f"Claude Code is retrying the model request ({attempt} of {most}): {error}"
    return [note(DiagnosticLevel.WARNING, message, frame)]


def _api_error(frame: Mapping[str, Any]) -> list[DriverEvent]:
    error = field_obj(frame, "error")
    message = _text(error, "formatted", "message") or "unknown error"
    return [note(DiagnosticLevel.WARNING, f"The model API failed: {message}", frame)]


def _info(frame: Mapping[str, Any]) -> list[DriverEvent]:
    text = _text(frame, "content", "message", "text", "title") or str(frame.get("subtype"))
    return [note(DiagnosticLevel.INFO, text, frame)]


def _title(frame: Mapping[str, Any]) -> list[DriverEvent]:
    title = _text(frame, "title")
    return [InfoChanged(title=title)] if title else []


def _compacted(frame: Mapping[str, Any]) -> list[DriverEvent]:
    return [Emitted(kind=ContextCompacted(), extensions={f"{SOURCE}/raw_frame": dict(frame)})]


_HANDLERS = {
    "status": _status,
    "permission_denied": _denied,
    "api_retry": _retry,
    "api_error": _api_error,
    "local_command_output": _info,
    "notification": _info,
    "informational": _info,
    "session_title_changed": _title,
    "compact_boundary": _compacted,
}


def system_frame(frame: Mapping[str, Any]) -> list[DriverEvent] | None:
    """Events for a `system` frame other than `init`; None if unknown."""
    subtype = frame.get("subtype")
    if isinstance(subtype, str) and subtype in QUIET_SYSTEM:
        return []
    handler = _HANDLERS.get(str(subtype))
    return None if handler is None else handler(frame)
