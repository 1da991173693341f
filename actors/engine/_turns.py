"""Turns: which turn agent content belongs to, how a turn starts and ends.

The phase of the turn (idle, starting, running, cancelling, closed) is the
`PhaseMachine`'s (`_phase.py`); this component moves it and keeps the
turn's bookkeeping. It decides nothing about prompts or requests: the
engine asks it to start or end a turn and tells it what the agent said.

Content kinds (text, reasoning, user messages, a tool starting, plans) that
arrive while no turn runs open an agent-origin turn. Bookkeeping (usage, a
diagnostic, a finished tool, an update of a tool from an earlier turn)
never opens a turn and outside a turn carries no `turn_info`. Content that
arrives after a new turn was started but before the wire confirmed it
belongs to the previous turn and is dropped, never misattributed (counted
in `stale_dropped`).

A turn ends in one place, `end`: every message that never ended gets a
synthesized `MessageEnded`, the usage reported during the turn rides on it,
and `TurnEnded` lists the tools still running (`background`). (The engine
withdraws open requests and requeues a waiting steer just before.)

Time: a wire without a reliable turn end gets an inferred end after a quiet
window, paused while a tool runs or the app is asked something; a long
silence earns one stall warning; a cancel the wire never confirms ends the
turn after the grace. `deadline` says when `expire` has something to do.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

import attrs

from ...pipeline.driver import Compact, Emitted, Interrupt, StartTurn
from ...pipeline.events import (
    AgentOrigin,
    Cancelled,
    Completed,
    CompletionSource,
    ContextUsage,
    Diagnostic,
    DiagnosticLevel,
    EventKind,
    MessageEnded,
    PlanUpdated,
    PromptOrigin,
    ReasoningDelta,
    StopReason,
    TextDelta,
    ToolOutputDelta,
    ToolUpdated,
    TurnEnded,
    TurnStarted,
    UserMessage,
)
from ._output import Output
from ._phase import PhaseMachine, Trigger
from ._state import EngineSettings, QueuedPrompt, Turn

__all__ = ["Turns", "merge_usage"]


def merge_usage(held: Emitted | None, fresh: Emitted) -> Emitted:
    """Two usage reports of a turn as one: the latest figures, tokens summed, the rest newest."""
    if held is None:
        return fresh
    tokens = held.tokens if fresh.tokens is None else fresh.tokens
    if held.tokens is not None and fresh.tokens is not None:
        tokens = held.tokens + fresh.tokens
    return attrs.evolve(
        fresh,
        tokens=tokens,
        model=held.model if fresh.model is None else fresh.model,
        extensions={**held.extensions, **fresh.extensions},
    )


def _tool_id(kind: EventKind) -> str | None:
    match kind:
        case ToolUpdated(tool=tool):
            return tool.id
        case ToolOutputDelta(tool_id=tool_id):
            return tool_id
    return None


def _opens_turn(kind: EventKind) -> bool:
    match kind:
        case TextDelta() | ReasoningDelta() | UserMessage() | ToolOutputDelta() | PlanUpdated():
            return True
        case ToolUpdated(tool=tool):
            return not tool.status.finished
    return False


class Turns:
    def __init__(
        self,
        *,
        output: Output,
        machine: PhaseMachine,
        clock: Callable[[], float],
        settings: EngineSettings,
        reliable_turn_end: bool,
        agent_name: str,
    ) -> None:
        self._out = output
        self._machine = machine
        self._clock = clock
        self._settings = settings
        self._reliable_turn_end = reliable_turn_end
        self._agent_name = agent_name
        self.current: Turn | None = None  # not None exactly in a turn phase
        self.started = 0
        self.stale_dropped = 0
        self.tool_owner: dict[str, str] = {}  # tool id -> the turn it ran in
        self._ended_messages: set[str] = set()  # of the last turn, against duplicates

    # ---- output ----------------------------------------------------------------

    def emit(
        self,
        kind: EventKind,
        *,
        in_turn: bool = True,
        parent_tool_id: str | None = None,
        extensions: Mapping[str, object] | None = None,
        said: Emitted | None = None,
    ) -> None:
        """One event; `said`: the driver's, whose typed fields the output writes."""
        turn = self.current if in_turn else None
        turn_info = None if turn is None else turn.context(parent_tool_id)
        self._out.emit(kind, turn_info=turn_info, extensions=extensions, said=said)

    @property
    def cancelling(self) -> bool:
        return self._machine.cancelling

    def touch(self) -> None:
        """Something happened in the turn: the quiet window starts again."""
        if self.current is not None:
            self.current.last_activity = self._clock()

    # ---- beginning and end -----------------------------------------------------

    def start(self, prompt: QueuedPrompt | None, *, compact: bool = False) -> str:
        """Open a turn and send it: prompted, agent-started (`prompt` None), or a compaction."""
        if self._reliable_turn_end:
            window: float | None = None
        elif prompt is None:
            window = self._settings.quiet_agent_turn
        else:
            window = self._settings.quiet_prompt_turn
        self._machine.fire(Trigger.START)
        turn = self._open(prompt, window)
        if compact:
            self._out.command(Compact())
        elif prompt is not None:
            self._out.command(
                StartTurn(
                    turn_id=turn.id,
                    prompt_id=prompt.prompt_id,
                    text=prompt.text,
                    attachments=prompt.attachments,
                )
            )
        return turn.id

    def open_by_content(self) -> None:
        """Content arrived while no turn ran: the agent is working on its own.

        Such a turn is confirmed already and always ends by inference if the
        wire never ends it.
        """
        self._machine.fire(Trigger.OPEN)
        self._open(None, self._settings.quiet_agent_turn)

    def _open(self, prompt: QueuedPrompt | None, window: float | None) -> Turn:
        self.started += 1
        self._ended_messages.clear()
        turn = self.current = Turn(
            id=f"t{self.started}",
            origin=AgentOrigin() if prompt is None else PromptOrigin(prompt.prompt_id),
            quiet_window=window,
            last_activity=self._clock(),
        )
        self.emit(TurnStarted(turn.origin))
        return turn

    def confirm(self) -> bool:
        """The wire says a turn began; True when that confirmed the current one."""
        if self.current is None:
            self.start(None)  # the agent started a turn on its own
        if self._machine.confirmed:
            return False
        self._machine.fire(Trigger.CONFIRM)
        self.touch()
        return True

    def cancel(self) -> bool:
        """Interrupt the turn once; False when there is none or it is cancelling already."""
        turn = self.current
        if turn is None or self._machine.cancelling:
            return False
        self._machine.fire(Trigger.CANCEL)
        turn.cancel_deadline = self._clock() + self._settings.cancel_grace
        self._out.command(Interrupt(turn.id))
        return True

    def end(self, stop: StopReason, extensions: Mapping[str, object] | None = None) -> None:
        turn = self.current
        self._machine.fire(Trigger.END)  # raises (and breaks) when no turn runs
        assert turn is not None
        for message_id in turn.open_messages:
            self.emit(MessageEnded(message_id))
            self._ended_messages.add(message_id)
        if turn.usage is not None:
            self.emit(turn.usage.kind, said=turn.usage)
        self.emit(
            TurnEnded(stop=stop, background=tuple(turn.running_tools)),
            extensions=extensions,
        )
        self.current = None

    def late_end(self, stop: StopReason, extensions: Mapping[str, object]) -> None:
        """The end of a turn that already ended (or of the one before ours): a warning."""
        self.emit(
            Diagnostic(
                level=DiagnosticLevel.WARNING,
                message="late turn end: the agent ended a turn that had already ended",
            ),
            in_turn=False,
            extensions={"corral/late_turn_end": {"stop": repr(stop)}, **extensions},
        )

    # ---- content ---------------------------------------------------------------

    def on_streamed(self, event: object) -> bool:
        """A text or reasoning delta of the confirmed turn, emitted: True. Anything
        else is left alone (False), for the engine's dispatch and `on_content`.

        Most of a stream is such deltas, so the engine's batch loop tells them
        apart first, the short way: for them, every other rule of `on_content`
        is settled already (no tool owns them; the turn is there and
        confirmed), and nothing the session's status depends on changes with
        them. `on_content` decides them the same way, the long way.
        """
        if type(event) is not Emitted:
            return False
        kind = event.kind
        if type(kind) is not TextDelta and type(kind) is not ReasoningDelta:
            return False
        turn = self.current
        if turn is None or not self._machine.confirmed:
            return False
        self._account(turn, kind)
        turn.last_activity = self._clock()
        turn.stall_warned = False
        self._out.emit(kind, turn_info=turn.context(event.parent_tool_id), said=event)
        return True

    def on_content(self, emitted: Emitted) -> None:
        kind = emitted.kind
        turn = self.current
        tool_id = _tool_id(kind)
        owner = None if tool_id is None else self.tool_owner.get(tool_id)
        if owner is not None and (turn is None or owner != turn.id):
            self._background_tool(emitted)
            return
        confirmed = self._machine.confirmed
        if isinstance(kind, ContextUsage) and confirmed:
            # Rides on this turn's end: the latest figures, with the tokens of
            # every report of the turn added up (each counts since the last).
            assert turn is not None
            turn.usage = merge_usage(turn.usage, emitted)
            return
        if isinstance(kind, MessageEnded) and kind.message_id in self._ended_messages:
            return  # already ended when its turn ended
        if turn is None:
            if not _opens_turn(kind):
                self.emit(kind, in_turn=False, said=emitted)
                return
            self.open_by_content()
            turn = self.current
            assert turn is not None
        elif not confirmed:
            if _opens_turn(kind) or isinstance(kind, MessageEnded):
                self.stale_dropped += 1  # the previous turn's tail
            else:
                self.emit(kind, in_turn=False, said=emitted)
            return
        self._account(turn, kind)
        turn.last_activity = self._clock()
        turn.stall_warned = False
        self.emit(kind, parent_tool_id=emitted.parent_tool_id, said=emitted)

    def _account(self, turn: Turn, kind: EventKind) -> None:
        match kind:
            case TextDelta(message_id=message_id) | ReasoningDelta(message_id=message_id):
                turn.open_messages[message_id] = None
            case MessageEnded(message_id=message_id):
                turn.open_messages.pop(message_id, None)
                self._ended_messages.add(message_id)
            case ToolUpdated(tool=tool):
                self.tool_owner[tool.id] = turn.id
                if tool.status.finished:
                    turn.running_tools.pop(tool.id, None)
                else:
                    turn.running_tools[tool.id] = None

    def _background_tool(self, emitted: Emitted) -> None:
        """An update of a tool that outlived its turn: bookkeeping."""
        kind = emitted.kind
        if isinstance(kind, ToolUpdated) and kind.tool.status.finished:
            self.tool_owner.pop(kind.tool.id, None)
        self.emit(kind, in_turn=False, said=emitted)

    # ---- time ------------------------------------------------------------------

    def deadline(self, *, asking: bool) -> float | None:
        """When `expire` has something to do; `asking`: the app has a request open."""
        turn = self.current
        if turn is None:
            return None
        deadlines = []
        if turn.cancel_deadline is not None:
            deadlines.append(turn.cancel_deadline)
        if turn.quiet_window is not None and not turn.running_tools and not asking:
            deadlines.append(turn.last_activity + turn.quiet_window)
        if not turn.stall_warned and not asking:
            deadlines.append(turn.last_activity + self._settings.stall_after)
        return min(deadlines, default=None)

    def expire(self, *, asking: bool) -> StopReason | None:
        """Warn about a stall; return how the turn ends now if its time is up."""
        turn = self.current
        if turn is None:
            return None
        now = self._clock()
        if turn.cancel_deadline is not None and now >= turn.cancel_deadline:
            self.emit(
                Diagnostic(
                    level=DiagnosticLevel.WARNING,
                    message=f"{self._agent_name} did not confirm the cancel in time; "
                    "corral ended the turn",
                ),
                extensions={"corral/cancel_timeout": True},
            )
            return Cancelled()
        silent = now - turn.last_activity
        paused = bool(turn.running_tools or asking)
        if turn.quiet_window is not None and not paused and silent >= turn.quiet_window:
            return Completed(CompletionSource.INFERRED)
        if not turn.stall_warned and not asking and silent >= self._settings.stall_after:
            turn.stall_warned = True
            self.emit(
                Diagnostic(
                    level=DiagnosticLevel.WARNING,
                    message=f"{self._agent_name} has been silent for {silent:.0f} s mid-turn",
                ),
                extensions={"corral/stall": {"silent_seconds": round(silent, 3)}},
            )
        return None
