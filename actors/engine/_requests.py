"""Requests: opened by the agent, decided by the policy or the app, closed once.

A request enters through `on_request`. The policy decides at once
(`Decide`: corral answers, the app sees nothing unless it asked to) or
forwards it (`Forward`: `RequestOpened`, status `NeedsInput`, optionally a
deadline). An app answer is checked against the offer (`_answers.refusal`)
and accepted exactly once. Cancel, turn end and close withdraw what is
still open. Every path ends in `_close`, which writes the one `Decision`
record and, for a request the app saw, the one `RequestClosed`.

At most `MAX_OPEN_REQUESTS` requests wait on the app at once: an agent that
asks without end (a loop, a bug) would otherwise grow the session's memory
and the app's list without bound. Past it, a request the policy would
forward is declined to the agent at once (`DenyOnce` when offered, else
withdrawn), with a Warning `Diagnostic` and a decision `decided_by` "limit".
"""

from __future__ import annotations

from ...pipeline.driver import Emitted, RequestAsked, Respond, Withdraw
from ...pipeline.errors import CorralError, ErrorKind
from ...pipeline.events import (
    Answer,
    Diagnostic,
    DiagnosticLevel,
    Mcp,
    PermissionAnswer,
    PermissionChoice,
    PermissionRequest,
    Request,
    RequestClosed,
    RequestOpened,
    ToolUpdated,
)
from ...pipeline.policy import Decide, decision_name
from ...pipeline.records import Decision
from ._answers import refusal
from ._core import EngineCore
from ._state import OpenRequest

__all__ = ["MAX_OPEN_REQUESTS", "RequestsMixin"]

MAX_OPEN_REQUESTS = 64


def _tool_kind(request: Request) -> str | None:
    if not isinstance(request, PermissionRequest):
        return None
    kind = request.tool.kind
    return "Mcp" if isinstance(kind, Mcp) else kind.value


class RequestsMixin(EngineCore):
    def on_request(self, asked: RequestAsked) -> None:
        request = asked.request
        if request.id in self.requests or request.id in self.closed_requests:
            self.emit(
                Diagnostic(
                    level=DiagnosticLevel.WARNING,
                    message=f"the agent asked request {request.id} twice; the second is ignored",
                ),
                in_turn=self.turn is not None,
                extensions=asked.extensions,
            )
            return
        if self.turn is None:
            self.open_agent_turn()
        turn = self.turn
        assert turn is not None
        now = self.clock()
        turn.last_activity = now
        if turn.cancel_deadline is not None:
            # The turn is being cancelled: the answer can only be "no".
            self.command(Withdraw(request.id))
            self.closed_requests.add(request.id)
            self.record(self._decision(request, "cancelled", "cancel", 0.0))
            return
        if isinstance(request, PermissionRequest) and request.tool.id not in self.tool_owner:
            # The app sees the tool before the request about it.
            self.on_content(  # type: ignore[attr-defined]
                Emitted(kind=ToolUpdated(request.tool), parent_tool_id=asked.parent_tool_id)
            )
        verdict = self.policy.decide(request, self.policy_context)
        if isinstance(verdict, Decide):
            self._auto_decide(asked, verdict)
            return
        if len(self.requests) >= MAX_OPEN_REQUESTS:
            self._decline_over_limit(asked)
            return
        self.requests[request.id] = OpenRequest(
            request=request,
            turn_id=turn.id,
            opened_at=now,
            parent_tool_id=asked.parent_tool_id,
            deadline=None if verdict.deadline_seconds is None else now + verdict.deadline_seconds,
            on_timeout=verdict.on_timeout,
        )
        extensions = dict(asked.extensions)
        if verdict.reason is not None:
            extensions["corral/forwarded_by"] = verdict.reason
        if verdict.deadline_seconds is not None:
            extensions["corral/deadline_seconds"] = verdict.deadline_seconds
        self.emit(
            RequestOpened(request), parent_tool_id=asked.parent_tool_id, extensions=extensions
        )

    def _auto_decide(self, asked: RequestAsked, verdict: Decide) -> None:
        request = asked.request
        self.command(Respond(request_id=request.id, answer=verdict.answer, message=verdict.message))
        self.closed_requests.add(request.id)
        decision = self._decision(request, decision_name(verdict.answer), verdict.decided_by, 0.0)
        if self.show_auto_decisions:
            marked = {**asked.extensions, "corral/decision": decision.to_wire()}
            self.emit(
                RequestOpened(request), parent_tool_id=asked.parent_tool_id, extensions=marked
            )
            self.emit(
                RequestClosed(request.id),
                parent_tool_id=asked.parent_tool_id,
                extensions={"corral/decision": decision.to_wire()},
            )
        self.record(decision)

    def _decline_over_limit(self, asked: RequestAsked) -> None:
        request = asked.request
        message = (
            f"the agent has {len(self.requests)} requests open, the most corral keeps "
            f"({MAX_OPEN_REQUESTS}); request {request.id} was declined"
        )
        if isinstance(request, PermissionRequest) and PermissionChoice.DENY_ONCE in request.options:
            deny = PermissionAnswer(PermissionChoice.DENY_ONCE)
            self.command(Respond(request_id=request.id, answer=deny, message=message))
            decision = "deny_once"
        else:
            self.command(Withdraw(request.id))
            decision = "cancelled"
        self.closed_requests.add(request.id)
        self.emit(
            Diagnostic(level=DiagnosticLevel.WARNING, message=message),
            parent_tool_id=asked.parent_tool_id,
            extensions={"corral/declined_request": request.id},
        )
        self.record(self._decision(request, decision, "limit", 0.0))

    def _decision(
        self, request: Request, decision: str, decided_by: str, waited: float
    ) -> Decision:
        return Decision(
            session_id=self.session_id,
            request_id=request.id,
            decision=decision,
            decided_by=decided_by,
            at=self.now_wall(),
            waited_seconds=waited,
            request_kind="Permission" if isinstance(request, PermissionRequest) else "Question",
            tool_kind=_tool_kind(request),
            agent=self.agent.id,
            turn_id=None if self.turn is None else self.turn.id,
        )

    def answer(self, request_id: str, answer: Answer) -> None:
        self.require_open()
        open_request = self.requests.get(request_id)
        if open_request is None:
            if request_id in self.closed_requests:
                problem = f"request {request_id} is already closed"
            else:
                problem = f"session {self.session_id} has no request {request_id}"
            raise CorralError(ErrorKind.INVALID_REQUEST, problem, request=request_id)
        refused = refusal(open_request.request, answer)
        if refused is not None:
            raise CorralError(ErrorKind.INVALID_REQUEST, refused, request=request_id)
        self.command(Respond(request_id=request_id, answer=answer))
        self._close(open_request, decision_name(answer), "app")
        self.settle_status()

    def _close(self, open_request: OpenRequest, decision: str, decided_by: str) -> None:
        request = open_request.request
        del self.requests[request.id]
        self.closed_requests.add(request.id)
        waited = self.clock() - open_request.opened_at
        record = self._decision(request, decision, decided_by, waited)
        in_turn = self.turn is not None and self.turn.id == open_request.turn_id
        self.emit(
            RequestClosed(request.id),
            in_turn=in_turn,
            parent_tool_id=open_request.parent_tool_id,
            extensions={"corral/decision": record.to_wire()},
        )
        self.record(record)
        if self.turn is not None:
            self.turn.last_activity = self.clock()  # an answer re-arms the quiet window

    def close_request(self, request_id: str, *, decision: str, decided_by: str) -> None:
        """Withdraw one open request; the agent is told unless it withdrew it."""
        open_request = self.requests.get(request_id)
        if open_request is None:
            return
        if decided_by != "agent":
            self.command(Withdraw(request_id))
        self._close(open_request, decision, decided_by)

    def withdraw_requests(self, *, decided_by: str) -> None:
        for request_id in list(self.requests):
            self.close_request(request_id, decision="cancelled", decided_by=decided_by)

    # ---- deadlines -------------------------------------------------------------

    def request_deadline(self) -> float | None:
        return min(
            (r.deadline for r in self.requests.values() if r.deadline is not None), default=None
        )

    def expire_requests(self) -> None:
        now = self.clock()
        for open_request in list(self.requests.values()):
            if open_request.deadline is None or now < open_request.deadline:
                continue
            request = open_request.request
            default = open_request.on_timeout
            if default is not None:
                self.command(
                    Respond(request_id=request.id, answer=default.answer, message=default.message)
                )
                self._close(open_request, decision_name(default.answer), "timeout")
            elif (
                isinstance(request, PermissionRequest)
                and PermissionChoice.DENY_ONCE in request.options
            ):
                self.command(
                    Respond(
                        request_id=request.id,
                        answer=PermissionAnswer(PermissionChoice.DENY_ONCE),
                        message="no answer before the deadline",
                    )
                )
                self._close(open_request, "timeout", "timeout")
            else:
                self.command(Withdraw(request.id))
                self._close(open_request, "timeout", "timeout")
