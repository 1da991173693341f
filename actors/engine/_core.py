"""The engine's state and its output helpers (events, records, commands).

Split from the engine so the parts that handle content and requests share
one typed base. See `_engine.py` for the rules; nothing here decides.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable

from ...pipeline.commands import PermissionMode
from ...pipeline.driver import Compact, DriverCommand, Handshake, StartTurn
from ...pipeline.errors import CorralError, ErrorKind
from ...pipeline.events import (
    AgentInstallation,
    AgentOrigin,
    ConfigValue,
    Delivery,
    Event,
    EventKind,
    PromptOrigin,
    Queued,
    SessionInfo,
    SessionStatus,
    SessionUpdated,
    StatusChanged,
    StopReason,
    SystemTime,
    TurnStarted,
)
from ...pipeline.policy import ModePolicy, Policy, PolicyContext
from ...pipeline.records import Decision, SinkItem
from ._state import EngineSettings, OpenRequest, Pending, QueuedPrompt, RecentIds, Turn

__all__ = ["EngineCore"]


class EngineCore:
    """State and output helpers shared by the engine's parts."""

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
        self.details = handshake.details
        self.resume_token = handshake.resume_token
        self.title = handshake.title
        self.options: dict[str, ConfigValue] = dict(handshake.options)
        self.reliable_turn_end = handshake.reliable_turn_end
        self.clock = clock
        self.wall_clock_ns = wall_clock_ns
        self.policy: Policy = policy if policy is not None else ModePolicy()
        self.policy_context = PolicyContext(agent_id=agent.id, session_dir=session_dir, mode=mode)
        self.show_auto_decisions = show_auto_decisions
        self.settings = settings if settings is not None else EngineSettings()

        self.outbox: deque[SinkItem] = deque()
        self.to_driver: deque[DriverCommand] = deque()
        self.sequence = 0
        self.status = SessionStatus.IDLE
        self.turn: Turn | None = None
        self.queue: deque[QueuedPrompt] = deque()
        self.steer: tuple[QueuedPrompt, Pending, bool] | None = None  # prompt, reply, sent
        self.pending_config: dict[str, list[Pending]] = {}
        self.pending_rollback: Pending | None = None
        self.tool_owner: dict[str, str] = {}  # tool id -> the turn it ran in
        self.ended_messages: set[str] = set()  # of the last turn, against duplicates
        self.turns_started = 0
        self.prompts_made = 0
        self.stale_dropped = 0
        self.closing = False
        self.failure: CorralError | None = None
        self.requests: dict[str, OpenRequest] = {}
        self.closed_requests = RecentIds(4096)  # ids kept against a second answer

    # ---- output helpers ------------------------------------------------------

    @property
    def finished(self) -> bool:
        return self.closing or self.failure is not None

    def now_wall(self) -> SystemTime:
        secs, nanos = divmod(self.wall_clock_ns(), 1_000_000_000)
        return SystemTime(secs, nanos)

    def emit(
        self,
        kind: EventKind,
        *,
        in_turn: bool = True,
        parent_tool_id: str | None = None,
        extensions: dict[str, object] | None = None,
    ) -> None:
        turn = self.turn if in_turn else None
        self.sequence += 1
        self.outbox.append(
            Event(
                sequence=self.sequence,
                session_id=self.session_id,
                kind=kind,
                occurred_at=self.now_wall(),
                turn_info=None if turn is None else turn.context(parent_tool_id),
                extensions={} if extensions is None else extensions,
            )
        )

    def record(self, decision: Decision) -> None:
        self.outbox.append(decision)

    def command(self, command: DriverCommand) -> None:
        if self.failure is None:
            self.to_driver.append(command)

    def _desired_status(self) -> SessionStatus:
        if self.turn is None:
            if self.queue and not self.finished:
                return SessionStatus.WORKING  # the next prompt is about to start
            return SessionStatus.IDLE
        if self.requests:
            return SessionStatus.NEEDS_INPUT
        return SessionStatus.WORKING

    def settle_status(self) -> None:
        """Emit StatusChanged if the status differs; called once per input."""
        desired = self._desired_status()
        if desired is not self.status:
            self.status = desired
            self.emit(StatusChanged(desired), in_turn=False)

    # ---- snapshots -----------------------------------------------------------

    def info(self) -> SessionInfo:
        return SessionInfo(
            id=self.session_id,
            agent=self.agent,
            details=self.details,
            options=tuple(self.options.items()),
            resume_token=self.resume_token,
            title=self.title,
            status=self.status,
        )

    def _emit_info(self) -> None:
        self.emit(SessionUpdated(self.info()), in_turn=False)

    # ---- turns ---------------------------------------------------------------

    def start_turn(
        self, prompt: QueuedPrompt | None, *, compact: bool = False, by_content: bool = False
    ) -> str:
        """Open a turn: prompted, agent-started (`prompt` None), or a compaction.

        A turn opened because content arrived while idle is already
        acknowledged and always ends by inference if the wire never ends it.
        """
        self.turns_started += 1
        turn_id = f"t{self.turns_started}"
        if by_content:
            window: float | None = self.settings.quiet_agent_turn
        elif self.reliable_turn_end:
            window = None
        elif prompt is None:
            window = self.settings.quiet_agent_turn
        else:
            window = self.settings.quiet_prompt_turn
        self.ended_messages.clear()
        self.turn = Turn(
            id=turn_id,
            origin=AgentOrigin() if prompt is None else PromptOrigin(prompt.prompt_id),
            acked=by_content,
            quiet_window=window,
            last_activity=self.clock(),
        )
        self.emit(TurnStarted(self.turn.origin))
        if compact:
            self.command(Compact())
        elif prompt is not None:
            self.command(
                StartTurn(
                    turn_id=turn_id,
                    prompt_id=prompt.prompt_id,
                    text=prompt.text,
                    attachments=prompt.attachments,
                )
            )
        return turn_id

    def open_agent_turn(self) -> None:
        """Content arrived while no turn ran: the agent is working on its own."""
        self.start_turn(None, by_content=True)

    def require_open(self) -> None:
        if self.failure is not None:
            raise CorralError(ErrorKind.SESSION_CLOSED, f"session {self.session_id} has ended")
        if self.closing:
            raise CorralError(ErrorKind.SESSION_CLOSED, f"session {self.session_id} is closing")

    def requeue_steer(self) -> None:
        """A steer the agent did not take goes back to the head of the queue."""
        if self.steer is None:
            return
        queued, reply, _ = self.steer
        self.steer = None
        self.queue.appendleft(queued)
        reply.resolve(Delivery(prompt_id=queued.prompt_id, kind=Queued(0)))

    # ---- provided by the other parts ---------------------------------------

    def end_turn(self, stop: StopReason, extensions: dict[str, object] | None = None) -> None:
        raise NotImplementedError

    def withdraw_requests(self, *, decided_by: str) -> None:
        raise NotImplementedError
