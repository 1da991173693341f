"""Operator notes: Copilot events with no place in the model but meaning for whoever runs it.

MCP servers and their auth, model-call retries and failures, credit limits,
managed settings, custom agents and skills, schedules and the autopilot
objective: an app has no field for them, an operator wants to read them.
Each becomes a `Diagnostic` with a message that says what happened and a
level that fits it (Warning for limits, failures and things corral cannot
answer; Info otherwise), with the event's `data` under `copilot/note` and
its type under `copilot/type`. Not the raw frame: the note is the meaning.

`NOTES` maps each type to a function of the event's `data` returning
`(level, message)`; `_normalize.py` routes these types here.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from ...pipeline.events import DiagnosticLevel
from ._base import Json, as_str

__all__ = ["NOTES", "Note"]

Note = Callable[[Json], tuple[DiagnosticLevel, str]]

INFO, WARNING = DiagnosticLevel.INFO, DiagnosticLevel.WARNING
_BAD_MCP = frozenset({"failed", "needs-auth"})


def _names(data: Json, key: str, field: str = "name") -> list[str]:
    items = data.get(key)
    listed = items if isinstance(items, list) else []
    return [as_str(item, field) for item in listed if isinstance(item, Mapping)]


def _mcp_status(data: Json) -> tuple[DiagnosticLevel, str]:
    status, error = as_str(data, "status"), as_str(data, "error")
    message = f"MCP server {as_str(data, 'serverName')} is {status}"
    return (WARNING if status in _BAD_MCP else INFO), f"{message}: {error}" if error else message


def _mcp_loaded(data: Json) -> tuple[DiagnosticLevel, str]:
    servers = data.get("servers")
    listed = [s for s in servers if isinstance(s, Mapping)] if isinstance(servers, list) else []
    bad = any(as_str(server, "status") in _BAD_MCP for server in listed)
    states = ", ".join(f"{as_str(s, 'name')} ({as_str(s, 'status')})" for s in listed)
    return (WARNING if bad else INFO), f"MCP servers loaded: {states or 'none'}"


def _mcp_list(what: str) -> Note:
    return lambda data: (INFO, f"MCP server {as_str(data, 'serverName')} changed its {what}")


def _oauth_done(data: Json) -> tuple[DiagnosticLevel, str]:
    outcome = as_str(data, "outcome")
    return (WARNING if outcome == "cancelled" else INFO), f"MCP OAuth finished ({outcome})"


def _headers_done(data: Json) -> tuple[DiagnosticLevel, str]:
    outcome = as_str(data, "outcome")
    level = WARNING if outcome == "timeout" else INFO
    return level, f"MCP headers refresh finished ({outcome})"


def _call_failure(data: Json) -> tuple[DiagnosticLevel, str]:
    facts = [as_str(data, "model"), as_str(data, "failureKind"), str(data.get("statusCode", ""))]
    said = ", ".join(fact for fact in facts if fact)
    return WARNING, f"a model call failed ({said or 'no detail'}) in {as_str(data, 'source')}"


def _limits_exhausted(data: Json) -> tuple[DiagnosticLevel, str]:
    used, most = data.get("usedAiCredits"), data.get("maxAiCredits")
    return WARNING, f"the session's AI credit limit is reached ({used} of {most})"


def _custom_agents(data: Json) -> tuple[DiagnosticLevel, str]:
    problems = [p for key in ("errors", "warnings") for p in _strings(data, key)]
    names = ", ".join(_names(data, "agents")) or "none"
    message = f"custom agents: {names}"
    return (WARNING, f"{message}; {'; '.join(problems)}") if problems else (INFO, message)


def _strings(data: Json, key: str) -> list[str]:
    items = data.get(key)
    return [item for item in items if isinstance(item, str)] if isinstance(items, list) else []


def _task_complete(data: Json) -> tuple[DiagnosticLevel, str]:
    outcome = as_str(data, "outcome") or ("completed" if data.get("success") else "not completed")
    said = as_str(data, "summary") or as_str(data, "reason")
    level = INFO if outcome == "completed" else WARNING
    return level, f"autopilot task {outcome}" + (f": {said}" if said else "")


def _permissions(data: Json) -> tuple[DiagnosticLevel, str]:
    allowed = data.get("allowAllPermissions") is True
    return INFO, f"allow-all permissions {'on' if allowed else 'off'}"


def _context(data: Json) -> tuple[DiagnosticLevel, str]:
    branch = as_str(data, "branch")
    return INFO, f"working directory {as_str(data, 'cwd')}" + (f" ({branch})" if branch else "")


def _notification(data: Json) -> tuple[DiagnosticLevel, str]:
    kind = data.get("kind")
    label = as_str(kind, "type") if isinstance(kind, Mapping) else ""
    return INFO, f"Copilot notification{f' ({label})' if label else ''}: {as_str(data, 'content')}"


def _fixed(level: DiagnosticLevel, template: str) -> Note:
    """A message filled from the data's string fields (`{serverName}`...)."""

    def note(data: Json) -> tuple[DiagnosticLevel, str]:
        fields: dict[str, Any] = {key: value for key, value in data.items()}
        return level, template.format_map(_Missing(fields))

    return note


class _Missing(dict[str, Any]):
    def __missing__(self, key: str) -> str:
        return "?"


NOTES: dict[str, Note] = {
    "session.mcp_server_status_changed": _mcp_status,
    "session.mcp_servers_loaded": _mcp_loaded,
    "mcp.tools.list_changed": _mcp_list("tools"),
    "mcp.resources.list_changed": _mcp_list("resources"),
    "mcp.prompts.list_changed": _mcp_list("prompts"),
    "mcp.oauth_required": _fixed(WARNING, "MCP server {serverName} needs OAuth ({reason})"),
    "mcp.oauth_completed": _oauth_done,
    "mcp.headers_refresh_required": _fixed(
        INFO, "MCP server {serverName} needs fresh headers ({reason})"
    ),
    "mcp.headers_refresh_completed": _headers_done,
    "model.call_failure": _call_failure,
    "assistant.turn_retry": _fixed(WARNING, "Copilot retries the model call ({reason})"),
    "session_limits_exhausted.requested": _limits_exhausted,
    "session_limits_exhausted.completed": _fixed(INFO, "the credit limit prompt was answered"),
    "session.session_limits_changed": _fixed(INFO, "the session limits changed"),
    "auto_mode_switch.requested": _fixed(
        WARNING, "the model is unavailable ({errorCode}); Copilot asks to switch models"
    ),
    "auto_mode_switch.completed": _fixed(INFO, "model switch answered: {response}"),
    "session.auto_mode_resolved": _fixed(INFO, "auto mode chose {chosenModel}"),
    "session.managed_settings_enforced": _fixed(WARNING, "managed settings: {message}"),
    "session.managed_settings_resolved": _fixed(INFO, "managed settings from {source}"),
    "session.custom_agents_updated": _custom_agents,
    "session.skills_loaded": lambda data: (
        INFO,
        f"skills loaded: {', '.join(_names(data, 'skills')) or 'none'}",
    ),
    "elicitation.requested": _fixed(
        WARNING, "Copilot asks: {message} (corral declines elicitations on this wire)"
    ),
    "elicitation.completed": _fixed(INFO, "elicitation {requestId} closed ({action})"),
    "exit_plan_mode.requested": _fixed(INFO, "Copilot proposes to leave plan mode: {summary}"),
    "exit_plan_mode.completed": _fixed(INFO, "leaving plan mode answered ({selectedAction})"),
    "session.permissions_changed": _permissions,
    "session.remote_steerable_changed": _fixed(INFO, "remote steering: {remoteSteerable}"),
    "session.schedule_created": _fixed(INFO, "schedule {id} created: {prompt}"),
    "session.schedule_cancelled": _fixed(INFO, "schedule {id} cancelled"),
    "session.schedule_rearmed": _fixed(INFO, "schedule {id} rearmed"),
    "session.autopilot_objective_changed": _fixed(INFO, "autopilot objective {operation}"),
    "session.task_complete": _task_complete,
    "session.snapshot_rewind": _fixed(
        INFO, "Copilot rewound the session to event {upToEventId} ({eventsRemoved} removed)"
    ),
    "session.context_changed": _context,
    "assistant.intent": _fixed(INFO, "intent: {intent}"),
    "system.notification": _notification,
    "tool_search.activated": lambda data: (
        INFO,
        f"tools activated by search: {', '.join(_strings(data, 'toolNames'))}",
    ),
}
