"""Sending the engine's commands to Codex (the write half of the Codex driver).

`DriverCore` is the kit's `JsonRpcDriver` (process, pump, inbox, `run`,
`stop`) plus the session state both halves share and the tools for
talking to Codex: `_call` (one request; Codex's refusal, our timeout or its
exit all become `_Refused`) and `_reply` (answer one of Codex's requests);
a verdict goes out as a local event of the inbox (`put_local`), served
before Codex's next message.

`Commands.send` never waits for Codex to answer: a command that needs an
answer (turn/start, turn/steer, turn/interrupt, thread/compact/start,
thread/revert, thread/settings/update) runs as a task and reports what came
of it. Codex's rules kept here: a steer goes out only once `turn/started`
named the turn (held until then); an interrupt first answers every open
approval with cancel, and waits for `turn/started` when the turn is not
named yet; a `turn/start` that Codex folded into a running turn (its id is
a turn that already began) acknowledges the engine's turn at once;
configure uses `thread/settings/update` (or, on a Codex without it, the
next turn's overrides); rollback reverts to before the N-th latest turn
(conversation only: Codex never rolls files back).
"""

from __future__ import annotations

import asyncio
import uuid
from pathlib import Path
from typing import Any

from ...pipeline import driver
from ...pipeline.commands import RollbackScope
from ...pipeline.errors import AgentGone
from ...pipeline.events import (
    ConfigOption,
    ConfigValue,
    DiagnosticLevel,
    Failed,
    Fields,
    ShapeError,
)
from ...pipeline.telemetry import SessionTelemetry
from .._jsonrpc import Incoming, RpcError
from .._kit.driver import METHOD_NOT_FOUND, JsonRpcDriver
from ._approvals import Reply
from ._appserver import AppServerNormalizer
from ._common import diagnostic
from ._handshake import ModelInfo, config_options
from ._launch import turn_input

__all__ = ["Commands", "DriverCore"]

_CALL_TIMEOUT = 120.0


class _Refused(Exception):
    def __init__(self, reason: str, code: int | None = None) -> None:
        super().__init__(reason)
        self.reason = reason
        self.code = code


class DriverCore(JsonRpcDriver[Incoming]):
    """State shared by the driver's halves, and the tools to talk to Codex."""

    def __init__(
        self, spec: driver.LaunchSpec, telemetry: SessionTelemetry, normalizer: AppServerNormalizer
    ) -> None:
        super().__init__(
            spec,
            telemetry,
            frames=256,
            inbox_name="codex",
            agent="Codex",
            wire="app-server",
            speaker="Codex",
        )
        self._normalizer = normalizer
        self._thread_id = ""
        self._models: tuple[ModelInfo, ...] = ()
        self._options: dict[str, ConfigValue] = {}
        self._turn_overrides: dict[str, ConfigValue] = {}
        self._held_steers: list[driver.SteerTurn] = []
        self._interrupt_held = False
        self._starting = 0  # turns asked for (turn/start, compact) that have not begun
        self._private_home: Path | None = None

    def _config_options(self) -> tuple[ConfigOption, ...]:
        return config_options(self._models, self._options)

    async def _reply(self, reply: Reply) -> None:
        assert self._peer is not None
        try:
            if reply.error is not None:
                await self._peer.respond_error(reply.rpc_id, *reply.error)
            else:
                await self._peer.respond(reply.rpc_id, reply.result)
        except AgentGone:
            pass  # `run` reports the exit

    async def _call(self, method: str, params: dict[str, Any]) -> Any:
        """One request to Codex; its refusal (or our giving up) is `_Refused`."""
        assert self._peer is not None
        try:
            async with asyncio.timeout(_CALL_TIMEOUT):
                return await self._peer.request(method, params)
        except RpcError as error:
            raise _Refused(error.message, error.code) from None
        except AgentGone:
            raise _Refused("Codex exited") from None
        except TimeoutError:
            raise _Refused(f"Codex did not answer {method} in {_CALL_TIMEOUT:.0f} s") from None


class Commands(DriverCore):
    """The engine's commands, onto Codex's wire."""

    async def send(self, command: driver.DriverCommand) -> None:
        match command:
            case driver.StartTurn():
                self._start_turn(command)
            case driver.SteerTurn():
                if self._normalizer.active_turn is not None:
                    self._spawn(self._steer(command))
                elif self._starting:
                    self._held_steers.append(command)
                else:
                    await self._inbox.put_local(
                        driver.SteerVerdict(
                            prompt_id=command.prompt_id, accepted=False, reason="no turn"
                        )
                    )
            case driver.Interrupt():
                await self._interrupt()
            case driver.Respond(request_id=request_id, answer=answer, message=message):
                reply = self._normalizer.requests.answer(request_id, answer, message)
                if reply is not None:
                    await self._reply(reply)
            case driver.Withdraw(request_id=request_id):
                reply = self._normalizer.requests.withdraw(request_id)
                if reply is not None:
                    await self._reply(reply)
            case driver.Configure():
                self._spawn(self._configure(command))
            case driver.Rollback():
                self._spawn(self._rollback(command))
            case driver.Compact():
                self._starting += 1
                self._spawn(self._compact())

    def _turn_began(self) -> None:
        self._starting = max(self._starting - 1, 0)
        held, self._held_steers = self._held_steers, []
        for steer in held:
            self._spawn(self._steer(steer))
        if self._interrupt_held:
            self._interrupt_held = False
            self._spawn(self._interrupt_turn())

    # ---- turns -----------------------------------------------------------------------

    def _start_turn(self, command: driver.StartTurn) -> None:
        client_id = uuid.uuid4().hex
        self._normalizer.expect_prompt(client_id, command.text)
        params: dict[str, Any] = {
            "threadId": self._thread_id,
            "input": turn_input(command.text, command.attachments),
            "clientUserMessageId": client_id,
            **self._turn_overrides,
        }
        begun = frozenset(self._normalizer.begun_turns)
        self._starting += 1
        self._spawn(self._run_start(params, begun))

    async def _run_start(self, params: dict[str, Any], begun: frozenset[str]) -> None:
        try:
            result = await self._call("turn/start", params)
        except _Refused as refused:
            await self._start_refused(refused.reason)
            return
        turn_id = result.get("turn", {}).get("id") if isinstance(result, dict) else None
        if turn_id in begun:  # folded into a turn that was already running
            self._starting = max(self._starting - 1, 0)
            await self._inbox.put_local(driver.TurnBegan())

    async def _steer(self, command: driver.SteerTurn) -> None:
        turn_id = self._normalizer.active_turn
        if turn_id is None:
            await self._inbox.put_local(
                driver.SteerVerdict(prompt_id=command.prompt_id, accepted=False, reason="no turn")
            )
            return
        client_id = uuid.uuid4().hex
        self._normalizer.expect_prompt(client_id, command.text)
        params = {
            "threadId": self._thread_id,
            "expectedTurnId": turn_id,
            "input": turn_input(command.text, command.attachments),
            "clientUserMessageId": client_id,
        }
        try:
            await self._call("turn/steer", params)
        except _Refused as refused:
            verdict = driver.SteerVerdict(
                prompt_id=command.prompt_id, accepted=False, reason=refused.reason
            )
        else:
            verdict = driver.SteerVerdict(prompt_id=command.prompt_id, accepted=True)
        await self._inbox.put_local(verdict)

    async def _interrupt(self) -> None:
        for reply in self._normalizer.requests.withdraw_all():
            await self._reply(reply)
        if self._normalizer.active_turn is not None:
            self._spawn(self._interrupt_turn())
        elif self._starting:
            self._interrupt_held = True

    async def _interrupt_turn(self) -> None:
        turn_id = self._normalizer.active_turn
        if turn_id is None:
            return
        try:
            await self._call("turn/interrupt", {"threadId": self._thread_id, "turnId": turn_id})
        except _Refused as refused:
            message = f"Codex refused to interrupt the turn: {refused.reason}"
            await self._inbox.put_local(diagnostic(DiagnosticLevel.WARNING, message))

    async def _compact(self) -> None:
        try:
            await self._call("thread/compact/start", {"threadId": self._thread_id})
        except _Refused as refused:
            await self._start_refused(refused.reason)

    async def _start_refused(self, reason: str) -> None:
        """A turn Codex would not start fails; with none left starting, nothing stays held."""
        self._starting = max(self._starting - 1, 0)
        held: list[driver.SteerTurn] = []
        if not self._starting:
            held, self._held_steers = self._held_steers, []
            self._interrupt_held = False
        await self._inbox.put_local(driver.TurnBegan())
        for steer in held:  # rejected inside the turn: the engine requeues them first
            await self._inbox.put_local(
                driver.SteerVerdict(prompt_id=steer.prompt_id, accepted=False, reason=reason)
            )
        await self._inbox.put_local(driver.TurnFinished(stop=Failed(reason)))

    # ---- settings and history ------------------------------------------------------

    async def _configure(self, command: driver.Configure) -> None:
        option, value = command.option, command.value
        if option not in ("model", "effort"):
            await self._inbox.put_local(
                driver.ConfigRefused(option=option, reason="chosen when a session opens")
            )
            return
        try:
            await self._call("thread/settings/update", {"threadId": self._thread_id, option: value})
        except _Refused as refused:
            if refused.code != METHOD_NOT_FOUND:
                await self._inbox.put_local(
                    driver.ConfigRefused(option=option, reason=refused.reason)
                )
                return
            self._turn_overrides[option] = value  # older Codex: applied with the next turn
        self._options[option] = value
        if option == "model":
            self._normalizer.model = str(value)
            await self._inbox.put_local(driver.InfoChanged(config_options=self._config_options()))
        await self._inbox.put_local(driver.ConfigApplied(option=option, value=value))

    async def _rollback(self, command: driver.Rollback) -> None:
        if command.scope is not RollbackScope.CONVERSATION:
            reason = "Codex rolls back the conversation only, never files"
            await self._inbox.put_local(driver.RollbackVerdict(accepted=False, reason=reason))
            return
        try:
            listed = await self._call(
                "thread/turns/list",
                {
                    "threadId": self._thread_id,
                    "sortDirection": "desc",
                    "limit": command.turns,
                    "itemsView": "notLoaded",
                },
            )
            turns = [Fields(t, p) for p, t in Fields(listed, "thread/turns/list").array("data")]
            if len(turns) < command.turns or command.turns < 1:
                raise _Refused(f"the thread has {len(turns)} turn(s)")
            first = turns[command.turns - 1].string("id")
            await self._call("thread/revert", {"threadId": self._thread_id, "beforeTurnId": first})
        except _Refused as refused:
            await self._inbox.put_local(
                driver.RollbackVerdict(accepted=False, reason=refused.reason)
            )
        except ShapeError as error:
            await self._inbox.put_local(driver.RollbackVerdict(accepted=False, reason=str(error)))
        else:
            await self._inbox.put_local(driver.RollbackVerdict(accepted=True))
