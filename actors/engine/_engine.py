"""The session engine: every rule about turns, status, queue and requests.

A sans-IO state machine. Inputs: the app's commands (`prompt`, `answer`,
`cancel`, ...), the driver's events (`on_driver_event`), the passing of time
(`on_time`, with `next_deadline` saying when), and `on_quiescent` (the
driver has nothing more buffered right now). Outputs accumulate in three
places the actor drains after every call: `outbox` (events with sequence
numbers, and decision records, for the sinks), `to_driver` (commands for
the agent) and settled `Pending` replies.

Invariants (ENGINE.md):
- sequence starts at 1 and grows by exactly one per event;
- exactly one TurnEnded per TurnStarted, whatever ends the turn;
- events inside a turn carry `turn_info`; bookkeeping outside carries none;
- status changes are emitted only on change and computed once per input,
  so no input ever shows a transient `Idle`;
- every request ends with exactly one `Decision` record and, if the app saw
  it, one `RequestClosed`;
- `outbox` grows only by what one input produces: the actor feeds the next
  driver event only once the previous output has been taken.

The handling of agent content and of requests lives in `_content.py` and
`_requests.py`; shared state and output helpers in `_core.py`.
"""

from __future__ import annotations

import attrs

from ...pipeline.commands import RollbackScope
from ...pipeline.driver import (
    AgentExited,
    ConfigApplied,
    ConfigRefused,
    Configure,
    DriverEvent,
    Emitted,
    InfoChanged,
    Interrupt,
    RequestAsked,
    RequestWithdrawn,
    Rollback,
    RollbackVerdict,
    SteerTurn,
    SteerVerdict,
    TurnBegan,
    TurnFinished,
    WireFailed,
)
from ...pipeline.errors import CorralError, ErrorKind
from ...pipeline.fidelity import refuse_attachments
from ...pipeline.events import (
    Cancelled,
    Capability,
    ConfigValue,
    Delivery,
    Diagnostic,
    DiagnosticLevel,
    Failed,
    Queued,
    Started,
    Steered,
    StopReason,
)
from ._content import ContentMixin
from ._requests import RequestsMixin
from ._state import Pending, QueuedPrompt

__all__ = ["Engine"]


class Engine(ContentMixin, RequestsMixin):
    """One session's rules. See the module header for inputs and outputs."""

    # ---- commands ------------------------------------------------------------

    def _require(self, feature: Capability, what: str) -> None:
        if feature not in self.details.capabilities:
            raise CorralError(
                ErrorKind.UNSUPPORTED_FEATURE,
                f"{self.agent.name} does not support {what}",
                feature=feature.value,
            )

    def _require_idle(self, what: str) -> None:
        if self.turn is not None or self.queue:
            raise CorralError(ErrorKind.SESSION_BUSY, f"{what} needs an idle session")

    def prompt(self, text: str, attachments: tuple[str, ...] = ()) -> Delivery | Pending:
        self.require_open()
        refuse_attachments(attachments, self.details, self.agent.name)
        self.prompts_made += 1
        queued = QueuedPrompt(prompt_id=f"p{self.prompts_made}", text=text, attachments=attachments)
        try:
            if self.turn is None and not self.queue:
                return Delivery(prompt_id=queued.prompt_id, kind=Started(self.start_turn(queued)))
            turn = self.turn
            if (
                turn is not None
                and self.steer is None
                and turn.cancel_deadline is None
                and Capability.STEER in self.details.capabilities
            ):
                reply = Pending()
                self.steer = (queued, reply, False)
                if turn.acked:
                    self._send_steer()
                return reply
            self.queue.append(queued)
            return Delivery(prompt_id=queued.prompt_id, kind=Queued(len(self.queue) - 1))
        finally:
            self.settle_status()

    def _send_steer(self) -> None:
        assert self.steer is not None and self.turn is not None
        queued, reply, _ = self.steer
        self.steer = (queued, reply, True)
        self.command(
            SteerTurn(
                turn_id=self.turn.id,
                prompt_id=queued.prompt_id,
                text=queued.text,
                attachments=queued.attachments,
            )
        )

    def dequeue(self, prompt_id: str) -> None:
        self.require_open()
        for queued in self.queue:
            if queued.prompt_id == prompt_id:
                self.queue.remove(queued)
                self.settle_status()
                return
        raise CorralError(ErrorKind.INVALID_REQUEST, f"prompt {prompt_id} is not queued")

    def cancel(self, clear_queue: bool = False) -> None:
        self.require_open()
        if clear_queue:
            self.queue.clear()
            if self.steer is not None:
                queued, reply, _ = self.steer
                self.steer = None
                reply.fail(
                    CorralError(
                        ErrorKind.INVALID_REQUEST,
                        f"prompt {queued.prompt_id} was dropped by cancel before the agent took it",
                    )
                )
        turn = self.turn
        if turn is not None and turn.cancel_deadline is None:
            self.withdraw_requests(decided_by="cancel")
            turn.cancel_deadline = self.clock() + self.settings.cancel_grace
            self.command(Interrupt(turn.id))
        self.settle_status()

    def configure(self, option: str, value: ConfigValue) -> Pending:
        self.require_open()
        offered = {o.id: o for o in self.details.config_options}
        known = offered.get(option)
        if known is None:
            names = ", ".join(offered) or "none"
            raise CorralError(
                ErrorKind.INVALID_CONFIGURATION,
                f"{self.agent.name} has no option {option!r} (options: {names})",
            )
        if not known.live:
            raise CorralError(
                ErrorKind.INVALID_CONFIGURATION, f"{option} cannot change in a live session"
            )
        if not known.accepts(value):
            allowed = (
                "true or false" if known.boolean else ", ".join(c.value for c in known.choices)
            )
            raise CorralError(
                ErrorKind.INVALID_CONFIGURATION,
                f"{value!r} is not a valid value for {option} (allowed: {allowed})",
            )
        reply = Pending()
        self.pending_config.setdefault(option, []).append(reply)
        self.command(Configure(option=option, value=value))
        return reply

    def rollback(self, turns: int, scope: RollbackScope) -> Pending:
        self.require_open()
        self._require(Capability.ROLLBACK, "rollback")
        if scope is RollbackScope.CONVERSATION_AND_FILES:
            self._require(Capability.ROLLBACK_FILES, "rolling back files")
        if self.pending_rollback is not None:
            raise CorralError(ErrorKind.SESSION_BUSY, "a rollback is already pending")
        self._require_idle("rollback")
        self.pending_rollback = Pending()
        self.command(Rollback(turns=turns, scope=scope))
        return self.pending_rollback

    def compact(self) -> None:
        self.require_open()
        self._require(Capability.COMPACT, "compact")
        self._require_idle("compact")
        self.start_turn(None, compact=True)
        self.settle_status()

    def close(self) -> None:
        """Withdraw everything and end the running turn; the actor stops the agent."""
        if self.closing:
            return
        self._shut(Cancelled(), CorralError(ErrorKind.SESSION_CLOSED, "the session was closed"))
        self.closing = True
        self.settle_status()

    def _shut(self, stop: Cancelled | Failed, error: CorralError) -> None:
        self.withdraw_requests(decided_by="shutdown")
        if self.steer is not None:
            _, reply, _ = self.steer
            self.steer = None
            reply.fail(error)
        for replies in self.pending_config.values():
            for reply in replies:
                reply.fail(error)
        self.pending_config.clear()
        if self.pending_rollback is not None:
            self.pending_rollback.fail(error)
            self.pending_rollback = None
        self.queue.clear()
        if self.turn is not None:
            self.end_turn(stop)

    # ---- driver events -------------------------------------------------------

    def on_driver_event(self, event: DriverEvent) -> None:
        if self.finished:
            return  # the session is over; the actor is stopping the agent
        match event:
            case TurnBegan():
                self._on_turn_began()
            case Emitted():
                self.on_content(event)
            case TurnFinished(stop=stop, extensions=extensions):
                self._on_turn_finished(stop, extensions)
            case RequestAsked():
                self.on_request(event)
            case RequestWithdrawn(request_id=request_id):
                self.close_request(request_id, decision="cancelled", decided_by="agent")
            case SteerVerdict(prompt_id=prompt_id, accepted=accepted):
                self._on_steer_verdict(prompt_id, accepted)
            case ConfigApplied(option=option, value=value):
                self._on_config(option, value, None)
            case ConfigRefused(option=option, reason=reason):
                self._on_config(option, None, reason)
            case RollbackVerdict(accepted=accepted, reason=reason):
                self._on_rollback(accepted, reason)
            case InfoChanged():
                self._on_info(event)
            case AgentExited(status=status, stderr=stderr):
                self._fail(
                    CorralError(
                        ErrorKind.PROCESS_EXITED,
                        f"{self.agent.name} exited (status {status})",
                        status=status,
                        stderr=stderr,
                    )
                )
            case WireFailed(kind=kind, message=message):
                self._fail(CorralError(ErrorKind(kind), message))
        self.settle_status()

    def _on_turn_began(self) -> None:
        if self.turn is None:
            self.start_turn(None)  # the agent started a turn on its own
        turn = self.turn
        assert turn is not None
        if not turn.acked:
            turn.acked = True
            turn.last_activity = self.clock()
            if self.steer is not None and not self.steer[2]:
                self._send_steer()

    def _on_turn_finished(self, stop: StopReason, extensions: dict[str, object]) -> None:
        turn = self.turn
        if turn is None or not turn.acked:
            # The end of a turn that already ended (or of the one before the
            # turn we just started): never a second TurnEnded.
            self.emit(
                Diagnostic(
                    level=DiagnosticLevel.WARNING,
                    message="late turn end: the agent ended a turn that had already ended",
                ),
                in_turn=False,
                extensions={"corral/late_turn_end": {"stop": repr(stop)}, **extensions},
            )
            return
        self.end_turn(stop, extensions)

    def _on_steer_verdict(self, prompt_id: str, accepted: bool) -> None:
        if self.steer is None or self.steer[0].prompt_id != prompt_id:
            return  # a verdict for a steer already settled (e.g. by the turn's end)
        if not accepted or self.turn is None:
            self.requeue_steer()
            return
        _, reply, _ = self.steer
        self.steer = None
        reply.resolve(Delivery(prompt_id=prompt_id, kind=Steered(self.turn.id)))
        self.turn.last_activity = self.clock()

    def _on_config(self, option: str, value: ConfigValue | None, reason: str | None) -> None:
        replies = self.pending_config.get(option, [])
        reply = replies.pop(0) if replies else None
        if not replies:
            self.pending_config.pop(option, None)
        if value is None:
            if reply is not None:
                reply.fail(
                    CorralError(
                        ErrorKind.INVALID_CONFIGURATION,
                        f"{self.agent.name} refused {option}: {reason}",
                    )
                )
            return
        self.options[option] = value
        self._emit_info()
        if reply is not None:
            reply.resolve(self.info())

    def _on_rollback(self, accepted: bool, reason: str | None) -> None:
        reply, self.pending_rollback = self.pending_rollback, None
        if reply is None:
            return
        if accepted:
            reply.resolve(None)
        else:
            reply.fail(
                CorralError(
                    ErrorKind.INVALID_REQUEST,
                    f"{self.agent.name} refused the rollback: {reason or 'no reason given'}",
                )
            )

    def _on_info(self, change: InfoChanged) -> None:
        if change.resume_token is not None:
            self.resume_token = change.resume_token
        if change.title is not None:
            self.title = change.title
        if change.config_options is not None:
            self.details = attrs.evolve(self.details, config_options=change.config_options)
        if change.commands is not None:
            self.details = attrs.evolve(self.details, commands=change.commands)
        self._emit_info()

    def _fail(self, error: CorralError) -> None:
        self._shut(Failed(error.message), error)
        self.failure = error

    # ---- time and quiescence -------------------------------------------------

    def on_quiescent(self) -> None:
        """The driver has nothing buffered: promote the next queued prompt."""
        if self.turn is None and self.queue and not self.finished:
            self.start_turn(self.queue.popleft())
            self.settle_status()

    def next_deadline(self) -> float | None:
        deadlines = [d for d in (self.turn_deadline(), self.request_deadline()) if d is not None]
        return min(deadlines, default=None)

    def on_time(self) -> None:
        if self.finished:
            return
        self.expire_requests()
        self.expire_turn()
        self.settle_status()
