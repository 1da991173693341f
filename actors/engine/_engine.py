"""The session engine: every rule about turns, status, queue and requests.

A sans-IO state machine. Inputs: the app's commands (`prompt`, `answer`,
`cancel`, ...), the driver's events (`on_driver_events`, a batch, each in
turn), time (`on_time`; `next_deadline` says when), and `on_quiescent` (the
driver holds nothing more now). Outputs accumulate in two queues the caller
drains after every call, `outbox` (records and events, for the sinks) and
`to_driver` (commands for the agent), and in settled `Pending` replies.

One object, composed of plain parts it owns and calls (none calls it back):
- `PhaseMachine` (`_phase.py`): the turn phase and its transition table;
- `Turns` (`_turns.py`): which turn content belongs to, start, end, time;
- `Requests` (`_requests.py`): policy, answers, the one `Decision` each;
- `PromptQueue` (`_prompts.py`): prompt ids, the FIFO queue, the steer;
- `Facts` (`_facts.py`): what `info` says, pending configure and rollback;
- `Output` (`_output.py`): the outbox with its sequence numbers, commands.

Invariants (ENGINE.md), besides the phase table's own:
- the outbox starts with `Opened` and, after `finish`, ends with at most
  one `SessionFailed` then exactly one `Closed`; every accepted prompt is
  one `Prompted` record, just before the events it caused; the engine is
  the only maker of these session records;
- sequence starts at 1 and grows by exactly one per event;
- events inside a turn carry `turn_info`; bookkeeping outside carries none;
- status changes are emitted only on change and computed once per input,
  so no input ever shows a transient `Idle`;
- every request ends with exactly one `Decision` record and, if the app saw
  it, one `RequestClosed`; a turn's end withdraws the requests still open
  and puts a steer still waiting back at the head of the queue;
- `outbox` grows only by what one input (one batch) produces: the actor
  feeds the next batch only once the previous output has been taken.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Iterable, Mapping

from ...pipeline.commands import PermissionMode, RollbackScope
from ...pipeline.driver import (
    AgentExited,
    ConfigApplied,
    ConfigRefused,
    DriverCommand,
    DriverEvent,
    Emitted,
    Handshake,
    InfoChanged,
    RequestAsked,
    RequestWithdrawn,
    RollbackVerdict,
    SteerTurn,
    SteerVerdict,
    TurnBegan,
    TurnFinished,
    WireFailed,
)
from ...pipeline.errors import CorralError, ErrorKind
from ...pipeline.events import (
    AgentInstallation,
    Answer,
    Cancelled,
    Capability,
    ConfigValue,
    Delivery,
    EventKind,
    Failed,
    SessionInfo,
    SessionStatus,
    SessionUpdated,
    Started,
    StatusChanged,
    StopReason,
)
from ...pipeline.fidelity import refuse_attachments
from ...pipeline.policy import ModePolicy, Policy, PolicyContext
from ...pipeline.records import Decider, Outcome, SinkItem
from ._facts import Facts
from ._output import Output
from ._phase import EngineBug, Phase, PhaseMachine, Trigger
from ._prompts import PromptQueue
from ._requests import Requests
from ._state import EngineSettings, OpenRequest, Pending, QueuedPrompt, RecentIds, Steer, Turn
from ._turns import Turns

__all__ = ["Engine"]


class Engine:
    """One session's rules. See the module header for inputs and outputs."""

    def __init__(
        self,
        *,
        session_id: str,
        agent: AgentInstallation,
        handshake: Handshake,
        clock: Callable[[], float],
        wall_clock_ns: Callable[[], int],
        session_dir: str = "",
        mode: PermissionMode = PermissionMode.ASK,
        policy: Policy | None = None,
        show_auto_decisions: bool = False,
        settings: EngineSettings | None = None,
    ) -> None:
        self.session_id = session_id
        self.agent = agent
        self.clock = clock
        self.settings = settings if settings is not None else EngineSettings()
        self.status = SessionStatus.IDLE
        self.failure: CorralError | None = None
        self._machine = PhaseMachine()
        self._out = Output(session_id=session_id, wall_clock_ns=wall_clock_ns)
        self._facts = Facts(session_id=session_id, agent=agent, handshake=handshake)
        self._prompts = PromptQueue()
        self._turns = Turns(
            output=self._out,
            machine=self._machine,
            clock=clock,
            settings=self.settings,
            reliable_turn_end=handshake.reliable_turn_end,
            agent_name=agent.name,
        )
        self._requests = Requests(
            output=self._out,
            turns=self._turns,
            clock=clock,
            policy=policy if policy is not None else ModePolicy(),
            policy_context=PolicyContext(agent_id=agent.id, session_dir=session_dir, mode=mode),
            show_auto_decisions=show_auto_decisions,
            agent_id=agent.id,
        )
        # What callers read (and the tests drain): the components' own queues.
        self.outbox: deque[SinkItem] = self._out.outbox
        self.to_driver: deque[DriverCommand] = self._out.to_driver
        self.queue: deque[QueuedPrompt] = self._prompts.waiting
        self.requests: Mapping[str, OpenRequest] = self._requests.open
        self.closed_requests: RecentIds = self._requests.closed
        self._out.opened(self.info(), session_dir)

    # ---- what callers read -------------------------------------------------------

    @property
    def sequence(self) -> int:
        return self._out.sequence

    @property
    def phase(self) -> Phase:
        return self._machine.phase

    @property
    def finished(self) -> bool:
        """The session closed or failed: it takes no more commands or driver events."""
        return self._machine.phase is Phase.CLOSED

    @property
    def turn(self) -> Turn | None:
        return self._turns.current

    @property
    def stale_dropped(self) -> int:
        return self._turns.stale_dropped

    @property
    def steer(self) -> Steer | None:
        return self._prompts.steer

    def info(self) -> SessionInfo:
        return self._facts.info(self.status)

    def emit(
        self, kind: EventKind, *, in_turn: bool = True, extensions: dict[str, object] | None = None
    ) -> None:
        """An event from outside the rules (a sink's failure), in order with the rest."""
        self._turns.emit(kind, in_turn=in_turn, extensions=extensions)

    # ---- status ----------------------------------------------------------------

    def _desired_status(self) -> SessionStatus:
        if self._turns.current is None:  # idle, unless the next prompt is about to start
            starting = bool(self._prompts) and not self.finished
            return SessionStatus.WORKING if starting else SessionStatus.IDLE
        if self._requests.asking:
            return SessionStatus.NEEDS_INPUT
        return SessionStatus.WORKING

    def _settle_status(self) -> None:
        """Emit StatusChanged if the status differs; called once per input."""
        desired = self._desired_status()
        if desired is not self.status:
            self.status = desired
            self._turns.emit(StatusChanged(desired), in_turn=False)

    def _emit_info(self) -> None:
        self._turns.emit(SessionUpdated(self.info()), in_turn=False)

    # ---- commands ------------------------------------------------------------

    def _require_open(self) -> None:
        self._machine.check()
        if self.failure is not None:
            raise CorralError(ErrorKind.SESSION_CLOSED, f"session {self.session_id} has ended")
        if self.finished:
            raise CorralError(ErrorKind.SESSION_CLOSED, f"session {self.session_id} is closing")

    def _require_idle(self, what: str) -> None:
        if self._turns.current is not None or self._prompts:
            raise CorralError(ErrorKind.SESSION_BUSY, f"{what} needs an idle session")

    def prompt(self, text: str, attachments: tuple[str, ...] = ()) -> Delivery | Pending:
        """Start, steer or queue a prompt; its `Prompted` record precedes what it caused."""
        self._require_open()
        refuse_attachments(attachments, self._facts.details, self.agent.name)
        queued = self._prompts.make(text, attachments)
        self._out.prompted(queued)
        try:
            return self._deliver(queued)
        finally:
            self._settle_status()

    def _deliver(self, queued: QueuedPrompt) -> Delivery | Pending:
        if self._machine.phase is Phase.IDLE and not self._prompts:
            return Delivery(prompt_id=queued.prompt_id, kind=Started(self._turns.start(queued)))
        if (
            self._machine.phase in (Phase.STARTING, Phase.RUNNING)
            and self._prompts.steer is None
            and Capability.STEER in self._facts.details.capabilities
        ):
            reply = self._prompts.hold_steer(queued)
            if self._machine.confirmed:
                self._send_steer()
            return reply
        return self._prompts.append(queued)

    def _send_steer(self) -> None:
        turn = self._turns.current
        queued = self._prompts.steer_to_send()
        if turn is None or queued is None:
            return
        self._out.command(
            SteerTurn(
                turn_id=turn.id,
                prompt_id=queued.prompt_id,
                text=queued.text,
                attachments=queued.attachments,
            )
        )

    def dequeue(self, prompt_id: str) -> None:
        self._require_open()
        self._prompts.remove(prompt_id)
        self._settle_status()

    def answer(self, request_id: str, answer: Answer) -> None:
        self._require_open()
        self._requests.answer(request_id, answer)
        self._settle_status()

    def cancel(self, clear_queue: bool = False) -> None:
        self._require_open()
        if clear_queue:
            self._prompts.drop_all()
        if self._turns.current is not None and not self._machine.cancelling:
            self._requests.withdraw_all(decided_by=Decider.CANCEL)
            self._turns.cancel()
        self._settle_status()

    def configure(self, option: str, value: ConfigValue) -> Pending:
        self._require_open()
        return self._facts.configure(option, value, self._out)

    def rollback(self, turns: int, scope: RollbackScope) -> Pending:
        self._require_open()
        self._facts.check_rollback(scope)
        self._require_idle("rollback")
        return self._facts.rollback(turns, scope, self._out)

    def compact(self) -> None:
        self._require_open()
        self._facts.require(Capability.COMPACT, "compact")
        self._require_idle("compact")
        self._turns.start(None, compact=True)
        self._settle_status()

    def close(self) -> None:
        """Withdraw everything and end the running turn; the actor stops the agent."""
        self._machine.check()
        if self.finished:
            return
        self._shut(Cancelled(), CorralError(ErrorKind.SESSION_CLOSED, "the session was closed"))
        self._settle_status()

    def finish(self) -> None:
        """The session's last records: its error, if it failed, then `Closed`."""
        if not self.finished or self._out.ended:
            raise EngineBug("the session's last records come once, after it closed or failed")
        self._out.closed(self.failure, self._turns.started)

    def _shut(self, stop: Cancelled | Failed, error: CorralError) -> None:
        """Everything pending fails with `error`; the running turn ends with `stop`."""
        self._requests.withdraw_all(decided_by=Decider.SHUTDOWN)
        self._prompts.drop_steer(error)
        self._facts.fail_pending(error)
        self._prompts.clear()
        if self._turns.current is not None:
            self._end_turn(stop)
        self._machine.fire(Trigger.CLOSE)

    def _end_turn(self, stop: StopReason, extensions: Mapping[str, object] | None = None) -> None:
        self._prompts.requeue_steer()
        decided_by = Decider.CANCEL if isinstance(stop, Cancelled) else Decider.TURN_END
        self._requests.withdraw_all(decided_by=decided_by)
        self._turns.end(stop, extensions)

    # ---- driver events -------------------------------------------------------

    def on_driver_events(self, events: Iterable[DriverEvent]) -> None:
        with self._out.batch_time():  # one clock reading for the batch (see `Output`)
            for event in events:  # in order; a delta of the running turn goes out at once
                if not self._turns.on_streamed(event):
                    self.on_driver_event(event)

    def on_driver_event(self, event: DriverEvent) -> None:
        self._machine.check()
        if self.finished:
            return  # the session is over; the actor is stopping the agent
        match event:
            case TurnBegan():
                if self._turns.confirm():
                    self._send_steer()  # a steer waits for the turn's confirmation
            case Emitted():
                self._turns.on_content(event)
            case TurnFinished(stop=stop, extensions=extensions):
                if self._machine.confirmed:
                    self._end_turn(stop, extensions)
                else:  # ended already, or the end of the turn before ours
                    self._turns.late_end(stop, extensions)
            case RequestAsked():
                self._requests.on_request(event)
            case RequestWithdrawn(request_id=request_id):
                self._requests.close_request(
                    request_id, decision=Outcome.CANCELLED, decided_by=Decider.AGENT
                )
            case SteerVerdict(prompt_id=prompt_id, accepted=accepted):
                self._on_steer_verdict(prompt_id, accepted)
            case ConfigApplied(option=option, value=value):
                reply = self._facts.applied(option, value)
                self._emit_info()
                if reply is not None:
                    reply.resolve(self.info())
            case ConfigRefused(option=option, reason=reason):
                self._facts.refused(option, reason)
            case RollbackVerdict(accepted=accepted, reason=reason):
                self._facts.on_rollback(accepted, reason)
            case InfoChanged():
                self._facts.on_info(event)
                self._emit_info()
            case AgentExited(status=status, stderr=stderr):
                message = f"{self.agent.name} exited (status {status})"
                self._fail(
                    CorralError(ErrorKind.PROCESS_EXITED, message, status=status, stderr=stderr)
                )
            case WireFailed(kind=kind, message=message):
                self._fail(CorralError(kind, message))
        self._settle_status()

    def _on_steer_verdict(self, prompt_id: str, accepted: bool) -> None:
        turn = self._turns.current
        taken = accepted and turn is not None
        if self._prompts.settle_steer(prompt_id, None if turn is None or not taken else turn.id):
            self._turns.touch()

    def _fail(self, error: CorralError) -> None:
        self._shut(Failed(error.message), error)
        self.failure = error
        self._out.muted = True

    # ---- time and quiescence -------------------------------------------------

    def on_quiescent(self) -> None:
        """The driver has nothing buffered: promote the next queued prompt."""
        self._machine.check()
        if self._machine.phase is Phase.IDLE and self._prompts:
            self._turns.start(self._prompts.pop())
            self._settle_status()

    def next_deadline(self) -> float | None:
        deadlines = (self._turns.deadline(asking=self._requests.asking), self._requests.deadline())
        return min((d for d in deadlines if d is not None), default=None)

    def on_time(self) -> None:
        self._machine.check()
        if self.finished:
            return
        self._requests.expire()
        stop = self._turns.expire(asking=self._requests.asking)
        if stop is not None:
            self._end_turn(stop)
        self._settle_status()
