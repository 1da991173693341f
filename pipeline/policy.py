"""Permission decisions: who answers a request, corral or the app.

The engine consults a `Policy` the moment a request enters the session,
before anything is shown, so an auto-decided request never makes the status
flash `NeedsInput` and never costs a sequence number. A verdict is either
`Decide` (corral answers now, with who decided) or `Forward` (the app
answers, optionally within a deadline after which `on_timeout` applies).

`ModePolicy` is the wire's permission modes: `Ask` forwards everything;
`AutoApprove` answers `AllowOnce` wherever it is offered; `AcceptEdits` does
so only for Edit/Delete/Move tools. Questions are never auto-answered by a
mode. Rule-based policies implement the same protocol.
"""

from __future__ import annotations

from typing import Protocol

import attrs

from .commands import PermissionMode
from .events import (
    Answer,
    PermissionAnswer,
    PermissionChoice,
    PermissionRequest,
    QuestionsAnswer,
    Request,
    ToolKind,
)
from .records import DecidedBy, Outcome, PolicyDecider, PolicyPart

__all__ = ["Decide", "Forward", "ModePolicy", "Policy", "PolicyContext", "Verdict", "decision_name"]


@attrs.frozen(kw_only=True)
class PolicyContext:
    agent_id: str
    session_dir: str
    mode: PermissionMode


@attrs.frozen(kw_only=True)
class Decide:
    answer: Answer
    decided_by: DecidedBy
    message: str | None = None  # read by the agent on a deny


@attrs.frozen(kw_only=True)
class Forward:
    deadline_seconds: float | None = None
    on_timeout: Decide | None = None
    reason: DecidedBy | None = None  # who forwarded it (a rule, a guard), for the record


Verdict = Decide | Forward


class Policy(Protocol):
    def decide(self, request: Request, context: PolicyContext) -> Verdict: ...


_EDIT_KINDS = frozenset({ToolKind.EDIT, ToolKind.DELETE, ToolKind.MOVE})


@attrs.frozen
class ModePolicy:
    """The permission modes of the wire, and nothing more."""

    def decide(self, request: Request, context: PolicyContext) -> Verdict:
        if not isinstance(request, PermissionRequest):
            return Forward()
        if PermissionChoice.ALLOW_ONCE not in request.options:
            return Forward()
        mode = context.mode
        if mode is PermissionMode.AUTO_APPROVE or (
            mode is PermissionMode.ACCEPT_EDITS and request.tool.kind in _EDIT_KINDS
        ):
            return Decide(
                answer=PermissionAnswer(PermissionChoice.ALLOW_ONCE),
                decided_by=PolicyDecider(PolicyPart.MODE, mode.value),
            )
        return Forward()


_OUTCOMES = {
    PermissionChoice.ALLOW_ONCE: Outcome.ALLOW_ONCE,
    PermissionChoice.ALLOW_ALWAYS: Outcome.ALLOW_ALWAYS,
    PermissionChoice.DENY_ONCE: Outcome.DENY_ONCE,
    PermissionChoice.DENY_ALWAYS: Outcome.DENY_ALWAYS,
}


def decision_name(answer: Answer) -> Outcome:
    """The `Decision.decision` an answer makes."""
    if isinstance(answer, QuestionsAnswer):
        return Outcome.ANSWERED
    return _OUTCOMES[answer.choice]
