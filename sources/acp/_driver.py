"""The ACP driver: one agent process, one ACP session, the driver contract.

```
agent stdout ─► JsonRpcPeer.pump ─► incoming (bounded) ─► run ─► Translator ─► events_out
                      │ responses settle our requests          │ replies to the agent's requests
engine ─► send ─► session/prompt, session/cancel, answers ─────┴─► agent stdin
```

Ordering: everything that becomes an event passes through the one
`incoming` channel, consumed only by `run`. Work that must wait on the
agent (a prompt, a configure, a permitted file write) runs as a task in
the session's task group and, when done, puts a typed local value
(`_TurnStarting`, `_PromptAnswered`, `Local` events...) into `incoming`
behind whatever the agent said before (`Inbox.put_behind`): a prompt's
`TurnBegan` goes in before the request is written, and its `stopReason`
after every update the agent sent ahead of its answer. `send` itself never waits on
that channel (the engine may be the one that must drain it), and never
raises for a dead agent. The agent's own requests (permission, files,
anything unsupported) are served by `AgentRequests` (`_requests.py`).

During the handshake nobody else reads `incoming`, so a drain task keeps
it moving (else a long `session/load` history replay could fill it and
block the very answer the handshake waits for); what it drained is
delivered first by `run`, except the replayed history, which is counted
and reported once.

corral offers `fs` and, unless the recipe says otherwise, `terminal`: the
agent's commands run as processes of this session (`_terminals.py`), each
judged by the policy first, all killed when the session stops; a
command's output (as `ToolOutputDelta`s) and its end come back through
`incoming` like everything else.

The process, the pump, the reading loop and the stop are the kit's
`JsonRpcDriver` (`sources/_kit/driver.py`). Stopping aborts `incoming` (so
nothing blocks on it any more), kills every terminal, then ends the
agent's process group; `run` reports `AgentExited`.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
from collections.abc import Awaitable, Mapping, Sequence
from typing import Any, TypeVar

import attrs

from ...pipeline import driver
from ...pipeline.channels import EndOfChannel
from ...pipeline.errors import AgentGone
from ...pipeline.events import AgentInstallation
from ...pipeline.telemetry import SessionTelemetry
from .._jsonrpc import (
    PARSE_ERROR,
    Incoming,
    JsonRpcPeer,
    RpcError,
    RpcNotification,
    RpcRequest,
    WireProblem,
)
from .._kit.driver import JsonRpcDriver
from .._kit.inbox import Local
from .._sandbox import command_box
from ._asks import ReadFile, Reply, ReplyError, RunCommand, WriteFile
from ._frames import history_note, is_history, prompt_blocks
from ._handshake import AuthPolicy, OpenedSession, open_session
from ._requests import AgentRequests, refusal_events
from ._terminals import Terminals
from ._translate import Translator

__all__ = ["AcpDriver", "AcpRecipe", "prompt_blocks"]

T = TypeVar("T")
_EARLY_LIMIT = 1000


# What the driver puts into `incoming` behind the agent's frames (typed, never fake frames).
@attrs.frozen
class _TurnStarting:
    pass


@attrs.frozen
class _PromptAnswered:
    result: Any


@attrs.frozen
class _PromptRefused:
    error: RpcError


@attrs.frozen
class _TerminalExited:
    terminal_id: str


@attrs.frozen
class _TerminalOutput:
    terminal_id: str
    text: str


_Item = (
    Incoming | _TurnStarting | _PromptAnswered | _PromptRefused | _TerminalExited | _TerminalOutput
)


@attrs.frozen(kw_only=True)
class AcpRecipe:
    """How a catalog entry launches its ACP agent and logs it in."""

    args: tuple[str, ...] = ()  # after the executable
    cwd_flag: str | None = None  # `opencode acp --cwd DIR`
    auth: AuthPolicy = attrs.Factory(AuthPolicy)
    env: tuple[tuple[str, str], ...] = ()  # set last: what keeps the agent asking
    bypass_env: tuple[str, ...] = ()  # the agent's own "allow everything" switches: dropped
    incoming_capacity: int = 256
    terminal: bool = True  # offer the `terminal` client capability


class AcpDriver(JsonRpcDriver[_Item]):
    abort_frames_on_stop = True

    def __init__(
        self,
        *,
        installation: AgentInstallation,
        launch: driver.LaunchSpec,
        recipe: AcpRecipe,
        telemetry: SessionTelemetry,
        environ: Mapping[str, str] | None = None,
    ) -> None:
        super().__init__(
            launch,
            telemetry,
            frames=recipe.incoming_capacity,
            inbox_name="acp-incoming",
            agent=installation.name,
            wire="ACP",
        )
        self._installation = installation
        self._recipe = recipe
        self._environ = dict(os.environ if environ is None else environ)
        self._translator = Translator()
        self._files: AgentRequests
        self._terminals: Terminals | None = None
        self._session_id = ""
        self._early: list[_Item | Local] = []
        self._dropped_history = 0
        self._loading = False

    # ---- launching ----------------------------------------------------------------

    def argv(self) -> list[str]:
        argv = [self._installation.executable_path, *self._recipe.args]
        argv += list(self._installation.acp_args or ())
        if self._recipe.cwd_flag is not None:
            argv += [self._recipe.cwd_flag, self._spec.dir]
        return argv + list(self._spec.args)

    def env(self) -> dict[str, str]:
        env = dict(self._environ)
        env.update(self._spec.env)
        for name in self._recipe.bypass_env:  # from corral's environment or the app's
            env.pop(name, None)
        env.update(self._recipe.env)  # after the app's: it cannot turn the asking off
        env["PWD"] = self._spec.dir  # some agents (opencode) read $PWD, not the cwd
        return env

    async def start(self, tasks: asyncio.TaskGroup) -> driver.Handshake:
        peer = await self._launch_agent(tasks)
        self._loading = self._spec.resume is not None
        opened = await self._during_handshake(
            open_session(
                peer,
                launch=self._spec,
                auth=self._recipe.auth,
                environ=self.env(),
                terminal=self._terminals is not None,
            )
        )
        self._loading = False
        self._session_id = opened.session_id
        self._translator.settings = opened.settings
        return self._handshake(opened)

    async def _launch_agent(self, tasks: asyncio.TaskGroup) -> JsonRpcPeer:
        peer = await self._launch(tasks, self.argv(), self.env())
        if self._recipe.terminal:
            self._terminals = Terminals(
                tasks=tasks,
                env=self.env(),
                on_exit=self._terminal_exited,
                on_output=self._terminal_output,
                name=self._spec.session_id,
                box=command_box(self._spec),
            )
        self._files = AgentRequests(
            peer,
            self._spec.dir,
            self._translator,
            terminals=self._terminals,
            spawn=self._spawn,
        )
        return peer

    @staticmethod
    def _handshake(opened: OpenedSession) -> driver.Handshake:
        return driver.Handshake(
            details=opened.details,
            resume_token=opened.session_id,
            options=opened.settings.current(),
        )

    async def _during_handshake(self, work: Awaitable[T]) -> T:
        """Run the handshake while keeping `incoming` drained (nobody else reads it yet)."""
        assert self._tasks is not None
        drain = self._tasks.create_task(self._drain_early())
        try:
            return await self._handshaking(work)
        finally:
            drain.cancel()
            await asyncio.wait([drain])

    async def _drain_early(self) -> None:
        try:
            while True:
                item = await self._inbox.frames.receive()
                history = isinstance(item, RpcNotification) and is_history(item)
                if (self._loading and history) or len(self._early) >= _EARLY_LIMIT:
                    self._dropped_history += 1
                else:
                    self._early.append(item)
        except EndOfChannel:
            return

    # ---- reading ------------------------------------------------------------------

    async def run(self, events_out: driver.EventSink) -> None:
        if self._dropped_history:
            await events_out.send(history_note(self._dropped_history))
        early, self._early = self._early, []
        for item in early:
            await self._deliver(item, events_out)
        await super().run(events_out)

    def _translate_now(self, item: _Item) -> list[driver.DriverEvent] | None:
        if type(item) is RpcNotification:  # the bulk of a stream, translated without a wait
            return self._translator.notification(item.method, item.params)
        return None

    async def _translate(self, item: _Item) -> list[driver.DriverEvent]:
        translator = self._translator
        match item:  # the bulk of a stream first: each case missed is a class check
            case RpcNotification(method=method, params=params):
                return translator.notification(method, params)
            case _TurnStarting():
                return translator.turn_began()
            case _PromptAnswered(result=result):
                return translator.prompt_done(result)
            case _PromptRefused(error=error):
                return translator.prompt_failed(error.code, error.message)
            case _TerminalExited(terminal_id=terminal_id):
                return self._files.terminal_exited(terminal_id)
            case _TerminalOutput(terminal_id=terminal_id, text=text):
                return self._files.terminal_output(terminal_id, text)
            case RpcRequest():
                return await self._files.agent_request(item)
            case WireProblem(reason=reason, request_id=request_id):
                if request_id is not None:  # a request we cannot read still gets an answer
                    unreadable = f"corral could not read this request: {reason}"
                    await self._files.reply(ReplyError(request_id, PARSE_ERROR, unreadable))
                return [item.event(speaker="the agent", wire="ACP", raw_key="acp/raw_line")]

    async def _push_local(self, events: list[driver.DriverEvent]) -> None:
        await self._inbox.put_behind(Local(tuple(events)))

    async def _terminal_exited(self, terminal_id: str) -> None:
        await self._inbox.put_behind(_TerminalExited(terminal_id))

    async def _terminal_output(self, terminal_id: str, text: str) -> None:
        await self._inbox.put_behind(_TerminalOutput(terminal_id, text))

    async def send(self, command: driver.DriverCommand) -> None:
        match command:
            case driver.StartTurn(text=text, attachments=attachments):
                self._spawn(self._prompt(text, attachments), "acp-prompt")
            case driver.Interrupt():
                await self._notify("session/cancel", {"sessionId": self._session_id})
            case driver.Respond(request_id=request_id, answer=answer, message=message):
                action = self._translator.asks.answer(request_id, answer, message)
                await self._act(action)
            case driver.Withdraw(request_id=request_id):
                await self._act(self._translator.asks.withdraw(request_id))
            case driver.Configure(option=option, value=value):
                self._spawn(self._configure(option, value), "acp-configure")
            case driver.SteerTurn(prompt_id=prompt_id):
                refused = driver.SteerVerdict(
                    prompt_id=prompt_id, accepted=False, reason="ACP cannot steer"
                )
                self._spawn(self._push_local([refused]), "acp-local")
            case driver.Rollback():
                no_rollback = driver.RollbackVerdict(accepted=False, reason="ACP has no rollback")
                self._spawn(self._push_local([no_rollback]), "acp-local")

    async def _notify(self, method: str, params: object) -> None:
        assert self._peer is not None
        with contextlib.suppress(AgentGone):  # run reports the exit
            await self._peer.notify(method, params)

    async def _act(
        self, action: Reply | ReplyError | ReadFile | WriteFile | RunCommand | None
    ) -> None:
        files, push = self._files, self._push_local
        match action:
            case Reply() | ReplyError():
                await files.reply(action)
                if events := refusal_events(action):
                    self._spawn(push(events), "acp-local")
            case ReadFile():
                work = files.read(action, push)
                self._spawn(files.guarded(action.rpc_id, "read", work, push), "acp-read")
            case WriteFile():
                work = files.write(action, push)
                self._spawn(files.guarded(action.rpc_id, "write", work, push), "acp-write")
            case RunCommand():
                work = files.start_and_show(action, push)
                self._spawn(files.guarded(action.rpc_id, "command", work, push), "acp-command")

    async def _prompt(self, text: str, attachments: Sequence[str]) -> None:
        assert self._peer is not None
        await self._inbox.put_behind(_TurnStarting())
        params = {
            "sessionId": self._session_id,
            "prompt": prompt_blocks(text, attachments, self._spec.dir),
        }
        try:
            result = await self._peer.request("session/prompt", params)
        except RpcError as error:
            await self._inbox.put_behind(_PromptRefused(error))
            return
        except AgentGone:
            return  # run reports the exit; the engine fails the turn
        await self._inbox.put_behind(_PromptAnswered(result))

    async def _configure(self, option: str, value: str | bool) -> None:
        assert self._peer is not None
        settings = self._translator.settings
        method, params = settings.set_call(self._session_id, option, value)
        try:
            result = await self._peer.request(method, params)
        except RpcError as error:
            await self._push_local([driver.ConfigRefused(option=option, reason=error.message)])
            return
        except AgentGone:
            return
        await self._push_local(settings.applied(option, value, result))

    # ---- stopping ----------------------------------------------------------------------

    async def _release(self) -> None:
        if self._terminals is not None:
            await self._terminals.close()
