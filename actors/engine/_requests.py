"""Requests: opened by the agent, decided by the policy or the app, closed once.

A request enters through `on_request`: it belongs to the running turn (or
opens an agent turn), and the app sees the tool before the request about
it. The policy decides at once
(`Decide`: corral answers, the app sees nothing unless it asked to) or
forwards it (`Forward`: `RequestOpened`, status `NeedsInput`, optionally a
deadline). An app answer is checked against the offer (`_answers.refusal`)
and accepted exactly once. A request that arrives while its turn is
being cancelled is refused to the agent at once. Cancel, turn
end and close withdraw what is still open. Every path ends in `_close`,
which writes the one `Decision` record and, for a request the app saw, the
one `RequestClosed`.

At most `MAX_OPEN_REQUESTS` requests wait on the app at once: an agent that
asks without end (a loop, a bug) would otherwise grow the session's memory
and the app's list without bound. Past it, a request the policy would
forward is declined to the agent at once (`DenyOnce` when offered, else
withdrawn), with a Warning `Diagnostic` and a decision `decided_by` "limit".
"""

from __future__ import annotations

from collections.abc import Callable

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
from ...pipeline.extensions import decision_mark
from ...pipeline.policy import Decide, Policy, PolicyContext, decision_name
from ...pipeline.records import DecidedBy, Decider, Decision, Outcome
from ._answers import refusal
from ._output import Output
from ._state import OpenRequest, RecentIds
from ._turns import Turns

__all__ = ["MAX_OPEN_REQUESTS", "Requests"]

MAX_OPEN_REQUESTS = 64
CLOSED_IDS_KEPT = 4096


def _tool_kind(request: Request) -> str | None:
    if not isinstance(request, PermissionRequest):
        return None
    kind = request.tool.kind
    return "Mcp" if isinstance(kind, Mcp) else kind.value


class Requests:
    def __init__(
        self,
        *,
        output: Output,
        turns: Turns,
        clock: Callable[[], float],
        policy: Policy,
        policy_context: PolicyContext,
        show_auto_decisions: bool,
        agent_id: str,
    ) -> None:
        self._out = output
        self._turns = turns
        self._clock = clock
        self._policy = policy
        self._policy_context = policy_context
        self._show_auto_decisions = show_auto_decisions
        self._agent_id = agent_id
        self.open: dict[str, OpenRequest] = {}
        self.closed = RecentIds(CLOSED_IDS_KEPT)  # ids kept against a second answer

    @property
    def asking(self) -> bool:
        """The app has at least one request to answer."""
        return bool(self.open)

    def on_request(self, asked: RequestAsked) -> None:
        """A request from the agent: inside a turn (one opens if none runs), once."""
        request = asked.request
        if request.id in self.open or request.id in self.closed:
            self._turns.emit(
                Diagnostic(
                    level=DiagnosticLevel.WARNING,
                    message=f"the agent asked request {request.id} twice; the second is ignored",
                ),
                in_turn=self._turns.current is not None,
                extensions=asked.extensions,
            )
            return
        if self._turns.current is None:
            self._turns.open_by_content()
        self._turns.touch()
        if self._turns.cancelling:
            # The turn is being cancelled: the answer can only be "no".
            self._out.command(Withdraw(request.id))
            self.closed.add(request.id)
            self._out.record(self._decision(request, Outcome.CANCELLED, Decider.CANCEL, 0.0))
            return
        if isinstance(request, PermissionRequest) and request.tool.id not in self._turns.tool_owner:
            # The app sees the tool before the request about it.
            self._turns.on_content(
                Emitted(kind=ToolUpdated(request.tool), parent_tool_id=asked.parent_tool_id)
            )
        self._decide(asked)

    def _decide(self, asked: RequestAsked) -> None:
        """The policy decides at once, or the app is asked (within the limit)."""
        request = asked.request
        verdict = self._policy.decide(request, self._policy_context)
        if isinstance(verdict, Decide):
            self._auto_decide(asked, verdict)
            return
        if len(self.open) >= MAX_OPEN_REQUESTS:
            self._decline_over_limit(asked)
            return
        turn = self._turns.current
        assert turn is not None, "a request is asked inside a turn"
        now = self._clock()
        self.open[request.id] = OpenRequest(
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
        self._turns.emit(
            RequestOpened(request), parent_tool_id=asked.parent_tool_id, extensions=extensions
        )

    def _auto_decide(self, asked: RequestAsked, verdict: Decide) -> None:
        request = asked.request
        answer, message = verdict.answer, verdict.message
        self._out.command(Respond(request_id=request.id, answer=answer, message=message))
        self.closed.add(request.id)
        decision = self._decision(request, decision_name(verdict.answer), verdict.decided_by, 0.0)
        if self._show_auto_decisions:
            marked = {**asked.extensions, **decision_mark(decision.to_wire())}
            self._turns.emit(
                RequestOpened(request), parent_tool_id=asked.parent_tool_id, extensions=marked
            )
            self._turns.emit(
                RequestClosed(request.id),
                parent_tool_id=asked.parent_tool_id,
                extensions=decision_mark(decision.to_wire()),
            )
        self._out.record(decision)

    def _decline_over_limit(self, asked: RequestAsked) -> None:
        request = asked.request
        message = (
            f"the agent has {len(self.open)} requests open, the most corral keeps "
            f"({MAX_OPEN_REQUESTS}); request {request.id} was declined"
        )
        if isinstance(request, PermissionRequest) and PermissionChoice.DENY_ONCE in request.options:
            deny = PermissionAnswer(PermissionChoice.DENY_ONCE)
            self._out.command(Respond(request_id=request.id, answer=deny, message=message))
            decision = Outcome.DENY_ONCE
        else:
            self._out.command(Withdraw(request.id))
            decision = Outcome.CANCELLED
        self.closed.add(request.id)
        self._turns.emit(
            Diagnostic(level=DiagnosticLevel.WARNING, message=message),
            parent_tool_id=asked.parent_tool_id,
            extensions={"corral/declined_request": request.id},
        )
        self._out.record(self._decision(request, decision, Decider.LIMIT, 0.0))

    def _decision(
        self, request: Request, decision: Outcome, decided_by: DecidedBy, waited: float
    ) -> Decision:
        turn = self._turns.current
        return Decision(
            session_id=self._out.session_id,
            request_id=request.id,
            decision=decision,
            decided_by=decided_by,
            at=self._out.now_wall(),
            waited_seconds=waited,
            request_kind="Permission" if isinstance(request, PermissionRequest) else "Question",
            tool_kind=_tool_kind(request),
            agent=self._agent_id,
            turn_id=None if turn is None else turn.id,
        )

    def answer(self, request_id: str, answer: Answer) -> None:
        open_request = self.open.get(request_id)
        if open_request is None:
            if request_id in self.closed:
                problem = f"request {request_id} is already closed"
            else:
                problem = f"session {self._out.session_id} has no request {request_id}"
            raise CorralError(ErrorKind.INVALID_REQUEST, problem, request=request_id)
        refused = refusal(open_request.request, answer)
        if refused is not None:
            raise CorralError(ErrorKind.INVALID_REQUEST, refused, request=request_id)
        self._out.command(Respond(request_id=request_id, answer=answer))
        self._close(open_request, decision_name(answer), Decider.APP)

    def _close(self, open_request: OpenRequest, decision: Outcome, decided_by: DecidedBy) -> None:
        request = open_request.request
        del self.open[request.id]
        self.closed.add(request.id)
        waited = self._clock() - open_request.opened_at
        record = self._decision(request, decision, decided_by, waited)
        turn = self._turns.current
        in_turn = turn is not None and turn.id == open_request.turn_id
        self._turns.emit(
            RequestClosed(request.id),
            in_turn=in_turn,
            parent_tool_id=open_request.parent_tool_id,
            extensions=decision_mark(record.to_wire()),
        )
        self._out.record(record)
        self._turns.touch()  # an answer re-arms the quiet window

    def close_request(self, request_id: str, *, decision: Outcome, decided_by: Decider) -> None:
        """Withdraw one open request; the agent is told unless it withdrew it."""
        open_request = self.open.get(request_id)
        if open_request is None:
            return
        if decided_by is not Decider.AGENT:
            self._out.command(Withdraw(request_id))
        self._close(open_request, decision, decided_by)

    def withdraw_all(self, *, decided_by: Decider) -> None:
        for request_id in list(self.open):
            self.close_request(request_id, decision=Outcome.CANCELLED, decided_by=decided_by)

    # ---- deadlines -------------------------------------------------------------

    def deadline(self) -> float | None:
        return min((r.deadline for r in self.open.values() if r.deadline is not None), default=None)

    def expire(self) -> None:
        now = self._clock()
        for open_request in list(self.open.values()):
            if open_request.deadline is None or now < open_request.deadline:
                continue
            request = open_request.request
            default = open_request.on_timeout
            if default is not None:
                self._out.command(
                    Respond(request_id=request.id, answer=default.answer, message=default.message)
                )
                self._close(open_request, decision_name(default.answer), Decider.TIMEOUT)
            elif (
                isinstance(request, PermissionRequest)
                and PermissionChoice.DENY_ONCE in request.options
            ):
                self._out.command(
                    Respond(
                        request_id=request.id,
                        answer=PermissionAnswer(PermissionChoice.DENY_ONCE),
                        message="no answer before the deadline",
                    )
                )
                self._close(open_request, Outcome.TIMEOUT, Decider.TIMEOUT)
            else:
                self._out.command(Withdraw(request.id))
                self._close(open_request, Outcome.TIMEOUT, Decider.TIMEOUT)
