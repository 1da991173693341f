"""Codex `EventMsg` bookkeeping: usage, plans, names, diagnostics (sans-IO).

Part of `EventMsgNormalizer`. `Accounting` keeps what usage reports need
(the usage meter, the model's context window, the model) and turns
`token_count` into `ContextUsage` (and `PlanUsageUpdated` when Codex
reports a rate-limit window). The functions translate one event each.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ...pipeline.driver import DriverEvent, Emitted, InfoChanged
from ...pipeline.events import DiagnosticLevel, Fields, PlanUsageUpdated
from ._common import (
    SNAKE,
    UsageMeter,
    context_usage,
    diagnostic,
    limit_windows,
    plan_updated,
    plan_usage,
    tokens_of,
)

__all__ = [
    "INFO_EVENTS",
    "Accounting",
    "deprecation",
    "mcp_startup",
    "mcp_startup_update",
    "note",
    "plan",
    "rolled_back",
    "skill_downloaded",
    "skills_update",
    "thread_name",
]

INFO_EVENTS = {
    "background_event": DiagnosticLevel.INFO,
    "undo_started": DiagnosticLevel.INFO,
    "undo_completed": DiagnosticLevel.INFO,
    "warning": DiagnosticLevel.WARNING,
    "stream_error": DiagnosticLevel.WARNING,
    "error": DiagnosticLevel.ERROR,
}


class Accounting:
    def __init__(self, *, wall_clock_ns: Callable[[], int]) -> None:
        self.usage = UsageMeter()
        self.window: int | None = None
        self.model: str | None = None
        self._now = wall_clock_ns

    def token_count(self, payload: Fields, *, in_turn: bool) -> list[DriverEvent]:
        events: list[DriverEvent] = []
        info = payload.opt_obj("info")
        if info is not None:
            last = info.obj("last_token_usage")
            tokens = self.usage.update(
                total=tokens_of(info.obj("total_token_usage"), SNAKE),
                last=tokens_of(last, SNAKE),
                in_turn=in_turn,
            )
            window = info.opt_integer("model_context_window") or self.window
            used = last.opt_integer("total_tokens") or 0
            events.append(context_usage(used=used, window=window, tokens=tokens, model=self.model))
        limits = payload.opt_obj("rate_limits")
        if limits is not None:
            primary, secondary = limit_windows(limits, SNAKE)
            usage = plan_usage(
                primary=primary,
                secondary=secondary,
                plan=limits.opt_string("plan_type"),
                now_ns=self._now(),
            )
            if usage is not None:
                events.append(Emitted(kind=PlanUsageUpdated(usage)))
        return events

    def session_configured(self, payload: Fields) -> list[DriverEvent]:
        self.model = payload.opt_string("model") or self.model
        return [
            InfoChanged(
                resume_token=payload.string("session_id"),
                title=payload.opt_string("thread_name"),
            )
        ]


def plan(payload: Fields) -> list[DriverEvent]:
    steps = []
    for path, raw in payload.array("plan"):
        step = Fields(raw, path)
        steps.append((step.string("step"), step.string("status")))
    return [Emitted(kind=plan_updated(steps))]


def note(event_type: str, payload: Fields) -> list[DriverEvent]:
    message = payload.opt_string("message") or event_type.replace("_", " ")
    details = payload.opt_string("additional_details")
    extensions: dict[str, Any] = {}
    if payload.has("codex_error_info"):
        extensions["codex/error_info"] = payload.raw["codex_error_info"]
    if event_type == "undo_completed" and payload.raw.get("success") is False:
        message = f"undo failed: {message}"
    text = f"{message} ({details})" if details else message
    return [diagnostic(INFO_EVENTS[event_type], text, **extensions)]


def deprecation(payload: Fields) -> list[DriverEvent]:
    details = payload.opt_string("details")
    summary = payload.string("summary")
    text = f"{summary} ({details})" if details else summary
    return [diagnostic(DiagnosticLevel.WARNING, text)]


def rolled_back(payload: Fields) -> list[DriverEvent]:
    turns = payload.integer("num_turns")
    return [diagnostic(DiagnosticLevel.INFO, f"Codex rolled back {turns} turn(s)")]


def thread_name(payload: Fields) -> list[DriverEvent]:
    name = payload.opt_string("thread_name")
    return [InfoChanged(title=name)] if name else []


def mcp_startup(payload: Fields) -> list[DriverEvent]:
    failed = []
    for path, raw in payload.array("failed", True):
        entry = Fields(raw, path)
        failed.append(f"{entry.opt_string('server')}: {entry.opt_string('error')}")
    if not failed:
        return []
    return [diagnostic(DiagnosticLevel.WARNING, "MCP servers failed: " + "; ".join(failed))]


def mcp_startup_update(payload: Fields) -> list[DriverEvent]:
    """One MCP server's startup state: a Warning when it failed, Info otherwise."""
    server, status = payload.string("server"), payload.obj("status")
    state = status.string("state")
    if state == "failed":
        error = status.opt_string("error") or "no reason given"
        return [diagnostic(DiagnosticLevel.WARNING, f"MCP server {server} failed: {error}")]
    return [diagnostic(DiagnosticLevel.INFO, f"MCP server {server}: {state}")]


def skill_downloaded(payload: Fields) -> list[DriverEvent]:
    name, path = payload.string("name"), payload.string("path")
    return [diagnostic(DiagnosticLevel.INFO, f"skill {name} downloaded to {path}")]


def skills_update(payload: Fields) -> list[DriverEvent]:
    return [diagnostic(DiagnosticLevel.INFO, "skill updates are available")]
