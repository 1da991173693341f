"""The stream-json wire of `claude -p` as a sans-IO state machine.

What flows in: bytes from the CLI's stdout (`feed`, or `receive_line` per
line, or `receive` per decoded frame) and corral's `DriverCommand`s
(`send`). What flows out: `DriverEvent`s, the bytes to write to the CLI's
stdin (`send` returns them; `data_to_send` holds replies the CLI's own
requests need), and handshake facts (`initialized`, `startup_errors`).

Turns. corral sends one prompt at a time (the engine queues: Claude Code
cannot steer), each a `user` frame with a fresh uuid. The turn begins
(`TurnBegan`) when the CLI says it started that uuid: a `command_lifecycle`
`started`, or, from older CLIs, the replayed user message or a frame naming
it in `user_message_uuids`. It ends at its `result` frame, whose truth is
`is_error` (a `subtype` of `success` can come with an error): an error after
our interrupt is `Cancelled`, any other `Failed`. A prompt that an interrupt
cancelled before it started gets no `result`: the interrupt's response lists
it under `cancelled` (or a terminal `command_lifecycle` says so), and the
turn still begins and ends `Cancelled`.

Control protocol. Our requests (`initialize`, `interrupt` with
`cancel_queued`, `set_model`, `set_permission_mode`, `apply_flag_settings`
for the effort, `rewind_files` for a rollback, `cancel_async_message`, and
`get_usage` after each `result` on a claude.ai plan: `_usage.py`) carry
ids `corral-N` and are matched to their `control_response`. The CLI's
`can_use_tool` becomes `RequestAsked`; its `control_cancel_request`
withdraws it. Other CLI requests get an error reply
(so the CLI never waits) and an Info `Diagnostic`.

Rollback (`_rollback.py`): `send(Rollback)` refuses at once what cannot be
done; otherwise it asks `rewind_files` first (scope `ConversationAndFiles`)
or makes the fork ready (`fork`) at once; the driver forks the process and
then reports the verdict (`forked`).

Invariants: one `TurnBegan` and one `TurnFinished` per prompt; a turn that
ended never ends again (late frames for it are dropped); unknown frames and
unreadable lines always produce a `Diagnostic`.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ...pipeline.commands import RollbackScope
from ...pipeline.driver import (
    Compact,
    ConfigRefused,
    Configure,
    DriverCommand,
    DriverEvent,
    InfoChanged,
    Interrupt,
    Respond,
    Rollback,
    RollbackVerdict,
    StartTurn,
    SteerTurn,
    SteerVerdict,
    Withdraw,
)
from ._core import CONFIG_REQUESTS, Pending, Turn, new_uuid
from ._details import EFFORT_LEVELS
from ._encode import Attachment, control_success, encode, user_message
from ._inbound import InboundFrames
from ._requests import answer_payload, withdraw_payload
from ._rollback import ForkPoint

__all__ = ["ClaudeProtocol", "new_uuid"]


class ClaudeProtocol(InboundFrames):
    """The whole wire: inbound frames (`InboundFrames`) and corral's commands."""

    def initialize(self) -> bytes:
        return self._control(Pending("initialize"), {"subtype": "initialize"})

    def send(
        self, command: DriverCommand, attachments: Sequence[Attachment] = ()
    ) -> tuple[bytes, list[DriverEvent]]:
        """Bytes for the CLI, and any verdict known at once."""
        match command:
            case StartTurn(text=text):
                return self._prompt(text, attachments), []
            case Compact():
                return self._prompt("/compact", ()), []
            case Interrupt():
                return self._interrupt(), []
            case Respond(request_id=request_id, answer=answer, message=message):
                asked = self._asked.pop(request_id, None)
                if asked is None:
                    return b"", []  # the CLI withdrew it already
                return self._answer(request_id, answer_payload(asked, answer, message)), []
            case Withdraw(request_id=request_id):
                if self._asked.pop(request_id, None) is None:
                    return b"", []
                return self._answer(request_id, withdraw_payload()), []
            case Configure(option=option, value=value):
                return self._configure(option, value)
            case SteerTurn(prompt_id=prompt_id):
                reason = "Claude Code runs a mid-turn message as a turn of its own"
                return b"", [SteerVerdict(prompt_id=prompt_id, accepted=False, reason=reason)]
            case Rollback(turns=turns, scope=scope):
                return self._rollback(turns, scope)
        return b"", []

    def _prompt(self, text: str, attachments: Sequence[Attachment]) -> bytes:
        self._turn = Turn(self._new_id())
        return encode(user_message(text, self._turn.uuid, attachments))

    def _interrupt(self) -> bytes:
        turn = self._turn
        if turn is None or turn.interrupting:
            return b""
        turn.interrupting = True
        self.interrupted = True
        body = {"subtype": "interrupt", "cancel_queued": True}
        return self._control(Pending("interrupt", turn.uuid), body)

    def _answer(self, request_id: str, payload: dict[str, Any]) -> bytes:
        self._answered.append(request_id)
        return encode(control_success(request_id, payload))

    def _configure(self, option: str, value: object) -> tuple[bytes, list[DriverEvent]]:
        subtype = CONFIG_REQUESTS.get(option)
        efforts = ("default", *EFFORT_LEVELS)
        if (
            subtype is None
            or not isinstance(value, str)
            or (option == "effort" and value not in efforts)
        ):
            reason = f"Claude Code has no live option {option!r} taking {value!r}"
            return b"", [ConfigRefused(option=option, reason=reason)]
        body: dict[str, Any] = {"subtype": subtype}
        if option == "effort":  # null: back to the CLI's own default for the model
            body["settings"] = {"effortLevel": None if value == "default" else value}
        else:
            body["model" if option == "model" else "mode"] = value
        return self._control(Pending(option, value), body), []

    def _rollback(self, turns: int, scope: RollbackScope) -> tuple[bytes, list[DriverEvent]]:
        if self._turn is not None or self.rolling is not None or self.fork is not None:
            reason = "Claude Code is busy (a turn or a rollback is running)"
            return b"", [RollbackVerdict(accepted=False, reason=reason)]
        point = self.history.plan(turns)
        if isinstance(point, str):
            return b"", [RollbackVerdict(accepted=False, reason=point)]
        if scope is RollbackScope.CONVERSATION:
            self.fork = point
            return b"", []
        self.rolling = point
        body = {"subtype": "rewind_files", "user_message_id": point.prompt}
        return self._control(Pending("rewind", point.prompt), body), []

    def forked(self, point: ForkPoint, session_id: str) -> list[DriverEvent]:
        """The driver replaced the process with the fork: the rollback is done."""
        self.fork = None
        self.history.forked(point)
        self.resume_token = session_id
        return [RollbackVerdict(accepted=True), InfoChanged(resume_token=session_id)]

    def fork_failed(self, reason: str) -> list[DriverEvent]:
        self.fork = None
        return [RollbackVerdict(accepted=False, reason=f"Claude Code could not fork: {reason}")]
