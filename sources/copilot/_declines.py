"""Copilot's waiting requests that corral does not serve, and how each is declined.

Copilot announces some requests as `SessionEvent`s (`elicitation.requested`,
`exit_plan_mode.requested`, `sampling.requested`, `external_tool.requested`,
...) and then waits until a client resolves them with the matching
`session.*.handlePending*` call. corral surfaces permissions and user input
(the normalizer maps them to `RequestAsked`); every other such request is
declined at once, in the shape Copilot's SDK itself uses when no handler is
registered, so no turn ever hangs on one. Each decline is reported by a
Warning `Diagnostic` carrying the event type under `corral/declined` and
the raw event under `copilot/raw_frame`.

The methods and shapes are the SDK's (`copilot-sdk/generated/rpc.d.ts` of
Copilot CLI 1.0.102): the `requestId` of the event goes back with a
refusing result.

Pure functions: the live driver sends the call; replays never do.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import attrs

from ...pipeline.driver import Emitted
from ...pipeline.events import Diagnostic, DiagnosticLevel
from ...pipeline.fidelity import DECLINED
from ._base import RAW_KEY

__all__ = ["DECLINED_KEY", "DECLINES", "Decline", "decline_for"]

DECLINED_KEY = DECLINED

# event type -> (method, the refusing params besides `requestId`, what it asked)
DECLINES: Mapping[str, tuple[str, Mapping[str, Any], str]] = {
    "elicitation.requested": (
        "session.ui.handlePendingElicitation",
        {"result": {"action": "decline"}},
        "input corral cannot show (elicitation)",
    ),
    "exit_plan_mode.requested": (
        "session.ui.handlePendingExitPlanMode",
        {"response": {"approved": False}},
        "approval to leave plan mode",
    ),
    "sampling.requested": (
        "session.ui.handlePendingSampling",
        {},  # no `response`: rejected
        "a model sampling for an MCP server",
    ),
    "external_tool.requested": (
        "session.tools.handlePendingToolCall",
        {"error": "corral serves no external tools"},
        "an external tool corral does not serve",
    ),
    "auto_mode_switch.requested": (
        "session.ui.handlePendingAutoModeSwitch",
        {"response": "no"},
        "a switch to auto mode",
    ),
    "session_limits_exhausted.requested": (
        "session.ui.handlePendingSessionLimitsExhausted",
        {"response": {"action": "cancel"}},
        "more credits for the session",
    ),
    "mcp.oauth_required": (
        "session.mcp.oauth.handlePendingRequest",
        {"result": {"kind": "cancelled"}},
        "an OAuth login for an MCP server",
    ),
    "mcp.headers_refresh_required": (
        "session.mcp.headers.handlePendingHeadersRefreshRequest",
        {"result": {"kind": "none"}},
        "fresh headers for an MCP server",
    ),
}


@attrs.frozen(kw_only=True)
class Decline:
    """The call that refuses one waiting request, and the note that reports it."""

    method: str
    params: dict[str, Any]
    note: Emitted


def decline_for(event: object) -> Decline | None:
    """The decline of a waiting request event; None for any other event."""
    if not isinstance(event, Mapping):
        return None
    event_type = event.get("type")
    known = DECLINES.get(event_type) if isinstance(event_type, str) else None
    data = event.get("data")
    request_id = data.get("requestId") if isinstance(data, Mapping) else None
    if known is None or not isinstance(request_id, str):
        return None
    method, refusal, asked = known
    note = Emitted(
        kind=Diagnostic(
            level=DiagnosticLevel.WARNING,
            message=f"Copilot asked for {asked}; corral declined it ({event_type})",
        ),
        extensions={RAW_KEY: dict(event), DECLINED_KEY: event_type},
    )
    return Decline(method=method, params={"requestId": request_id, **refusal}, note=note)
