"""The ACP driver: one agent process, one ACP session, the driver contract.

```
agent stdout ─► JsonRpcPeer.pump ─► incoming (bounded) ─► run ─► Translator ─► events_out
                      │ responses settle our requests          │ replies to the agent's requests
engine ─► send ─► session/prompt, session/cancel, answers ─────┴─► agent stdin
```

Ordering: everything that becomes an event passes through the one
`incoming` channel, consumed only by `run`. Work that must wait on the
agent (a prompt, a configure, a permitted file write) runs as a task in
the session's task group and, when done, puts a local marker into
`incoming` behind whatever the agent said before: a prompt's `TurnBegan`
goes in before the request is written, and its `stopReason` after every
update the agent sent ahead of its answer. `send` itself never waits on
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
command's end comes back through `incoming` like everything else.

Stopping: `stop` aborts `incoming` (so nothing blocks on it any more),
kills every terminal, then ends the agent's process group (EOF, SIGTERM,
SIGKILL); the pump then sees EOF, fails our waiting requests, and `run` reports `AgentExited`.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
from collections.abc import Awaitable, Coroutine, Mapping, Sequence
from typing import Any, TypeVar

import attrs

from ...pipeline.channels import BrokenChannel, Channel, ChannelClosed, EndOfChannel
from ...pipeline.driver import (
    AgentExited,
    ConfigRefused,
    Configure,
    DriverCommand,
    DriverEvent,
    Emitted,
    EventSink,
    Handshake,
    Interrupt,
    LaunchSpec,
    Respond,
    Rollback,
    RollbackVerdict,
    StartTurn,
    SteerTurn,
    SteerVerdict,
    Withdraw,
)
from ...pipeline.errors import AgentGone, CorralError, ErrorKind
from ...pipeline.events import (
    AgentInstallation,
    Diagnostic,
    DiagnosticLevel,
)
from ...pipeline.telemetry import SessionTelemetry
from .._jsonrpc import (
    PARSE_ERROR,
    Incoming,
    JsonRpcPeer,
    RpcError,
    RpcNotification,
    RpcRequest,
    WireNoise,
)
from .._process import AgentProcess
from .._sandbox import command_box
from ._asks import ReadFile, Reply, ReplyError, RunCommand, WriteFile
from ._frames import UNKNOWN_FRAME, history_note, is_history, prompt_blocks
from ._handshake import AuthPolicy, OpenedSession, open_session
from ._requests import AgentRequests, refusal_events
from ._terminals import Terminals
from ._translate import Translator

__all__ = ["AcpDriver", "AcpRecipe", "prompt_blocks"]

T = TypeVar("T")

# Local markers put into `incoming` (method names no agent can send: not `_`-prefixed
# extensions, not ACP methods).
_TURN_BEGAN = "corral:turn_began"
_PROMPT_DONE = "corral:prompt_done"
_PROMPT_FAILED = "corral:prompt_failed"
_LOCAL = "corral:events"
_TERMINAL_EXITED = "corral:terminal_exited"
_EARLY_LIMIT = 1000
_EXIT_WAIT = 5.0


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


class AcpDriver:
    def __init__(
        self,
        *,
        installation: AgentInstallation,
        launch: LaunchSpec,
        recipe: AcpRecipe,
        telemetry: SessionTelemetry,
        environ: Mapping[str, str] | None = None,
    ) -> None:
        self._installation = installation
        self._launch = launch
        self._recipe = recipe
        self._telemetry = telemetry
        self._environ = dict(os.environ if environ is None else environ)
        self._incoming: Channel[Incoming] = Channel(
            recipe.incoming_capacity, name=f"{launch.session_id}/acp-incoming"
        )
        self._translator = Translator()
        self._process: AgentProcess | None = None
        self._peer: JsonRpcPeer | None = None
        self._files: AgentRequests
        self._terminals: Terminals | None = None
        self._tasks: asyncio.TaskGroup | None = None
        self._session_id = ""
        self._early: list[Incoming] = []
        self._dropped_history = 0
        self._loading = False
        self._stopped = False

    # ---- launching ----------------------------------------------------------------

    def argv(self) -> list[str]:
        argv = [self._installation.executable_path, *self._recipe.args]
        argv += list(self._installation.acp_args or ())
        if self._recipe.cwd_flag is not None:
            argv += [self._recipe.cwd_flag, self._launch.dir]
        return argv + list(self._launch.args)

    def env(self) -> dict[str, str]:
        env = dict(self._environ)
        env.update(self._launch.env)
        for name in self._recipe.bypass_env:  # from corral's environment or the app's
            env.pop(name, None)
        env.update(self._recipe.env)  # after the app's: it cannot turn the asking off
        env["PWD"] = self._launch.dir  # some agents (opencode) read $PWD, not the cwd
        return env

    async def start(self, tasks: asyncio.TaskGroup) -> Handshake:
        self._tasks = tasks
        self._process = await AgentProcess.spawn(
            self.argv(),
            cwd=self._launch.dir,
            env=self.env(),
            tasks=tasks,
            telemetry=self._telemetry,
            sandbox=self._launch.sandbox,
        )
        self._peer = JsonRpcPeer(self._process, telemetry=self._telemetry)
        if self._recipe.terminal:
            self._terminals = Terminals(
                tasks=tasks,
                env=self.env(),
                on_exit=self._terminal_exited,
                name=self._launch.session_id,
                box=command_box(self._launch),
            )
        self._files = AgentRequests(
            self._peer,
            self._launch.dir,
            self._translator,
            terminals=self._terminals,
            spawn=self._spawn,
        )
        tasks.create_task(self._pump(), name=f"{self._launch.session_id}-acp-pump")
        self._loading = self._launch.resume is not None
        opened = await self._during_handshake(
            open_session(
                self._peer,
                launch=self._launch,
                auth=self._recipe.auth,
                environ=self.env(),
                terminal=self._terminals is not None,
            )
        )
        self._loading = False
        self._session_id = opened.session_id
        self._translator.settings = opened.settings
        return self._handshake(opened)

    @staticmethod
    def _handshake(opened: OpenedSession) -> Handshake:
        return Handshake(
            details=opened.details,
            resume_token=opened.session_id,
            options=opened.settings.current(),
        )

    async def _pump(self) -> None:
        assert self._peer is not None
        with contextlib.suppress(BrokenChannel):  # stopped: nobody reads the agent any more
            await self._peer.pump(self._incoming)

    async def _during_handshake(self, work: Awaitable[T]) -> T:
        """Run the handshake while keeping `incoming` drained (nobody else reads it yet)."""
        assert self._tasks is not None and self._process is not None
        drain = self._tasks.create_task(self._drain_early())
        try:
            return await work
        except AgentGone:
            raise await self._exited_error() from None
        finally:
            drain.cancel()
            await asyncio.wait([drain])

    async def _drain_early(self) -> None:
        try:
            while True:
                item = await self._incoming.receive()
                if (self._loading and is_history(item)) or len(self._early) >= _EARLY_LIMIT:
                    self._dropped_history += 1
                else:
                    self._early.append(item)
        except EndOfChannel:
            return

    async def _exited_error(self) -> CorralError:
        assert self._process is not None
        status = await self._exit_status()
        return CorralError(
            ErrorKind.PROCESS_EXITED,
            f"{self._installation.name} exited during the ACP handshake (status {status})",
            status=status,
            stderr=self._process.stderr_tail(),
        )

    async def _exit_status(self) -> str:
        assert self._process is not None
        try:
            async with asyncio.timeout(_EXIT_WAIT):
                return await self._process.wait()
        except TimeoutError:
            return "unknown"

    # ---- reading ------------------------------------------------------------------

    async def run(self, events_out: EventSink) -> None:
        assert self._process is not None
        if self._dropped_history:
            await events_out.send(history_note(self._dropped_history))
        early, self._early = self._early, []
        for item in early:
            await self._deliver(item, events_out)
        async for item in self._incoming:
            await self._deliver(item, events_out)
        status = await self._exit_status()
        await events_out.send(AgentExited(status=status, stderr=self._process.stderr_tail()))

    async def _deliver(self, item: Incoming, events_out: EventSink) -> None:
        for event in await self._translate(item):
            if isinstance(event, Emitted) and UNKNOWN_FRAME in event.extensions:
                self._telemetry.unknown_frame()
            await events_out.send(event)

    async def _translate(self, item: Incoming) -> list[DriverEvent]:
        translator = self._translator
        match item:
            case RpcNotification(method=method, params=params):
                if method == _TURN_BEGAN:
                    return translator.turn_began()
                if method == _PROMPT_DONE:
                    return translator.prompt_done(params)
                if method == _PROMPT_FAILED:
                    assert isinstance(params, RpcError)
                    return translator.prompt_failed(params.code, params.message)
                if method == _LOCAL:
                    return list(params)
                if method == _TERMINAL_EXITED:
                    return self._files.terminal_exited(params)
                return translator.notification(method, params)
            case RpcRequest():
                return await self._files.agent_request(item)
            case WireNoise(reason=reason, raw=raw, request_id=request_id):
                if request_id is not None:  # a request we cannot read still gets an answer
                    unreadable = f"corral could not read this request: {reason}"
                    await self._files.reply(ReplyError(request_id, PARSE_ERROR, unreadable))
                kind = "oversized" if "too long" in reason else "not_json"
                return [
                    Emitted(
                        kind=Diagnostic(
                            level=DiagnosticLevel.WARNING,
                            message=f"the agent wrote a line that is not ACP: {reason}",
                        ),
                        extensions={"corral/decode_error": kind, "acp/raw_line": raw},
                    )
                ]

    async def _push(self, method: str, params: object) -> None:
        # ChannelClosed/BrokenChannel: the agent's output ended or the driver stopped.
        with contextlib.suppress(ChannelClosed, BrokenChannel):
            await self._incoming.send(RpcNotification(method, params))

    async def _push_local(self, events: list[DriverEvent]) -> None:
        await self._push(_LOCAL, events)

    async def _terminal_exited(self, terminal_id: str) -> None:
        await self._push(_TERMINAL_EXITED, terminal_id)

    def _spawn(self, work: Coroutine[Any, Any, None], name: str) -> None:
        assert self._tasks is not None
        self._tasks.create_task(work, name=f"{self._launch.session_id}-{name}")

    async def send(self, command: DriverCommand) -> None:
        match command:
            case StartTurn(text=text, attachments=attachments):
                self._spawn(self._prompt(text, attachments), "acp-prompt")
            case Interrupt():
                await self._notify("session/cancel", {"sessionId": self._session_id})
            case Respond(request_id=request_id, answer=answer, message=message):
                action = self._translator.asks.answer(request_id, answer, message)
                await self._act(action)
            case Withdraw(request_id=request_id):
                await self._act(self._translator.asks.withdraw(request_id))
            case Configure(option=option, value=value):
                self._spawn(self._configure(option, value), "acp-configure")
            case SteerTurn(prompt_id=prompt_id):
                refused = SteerVerdict(
                    prompt_id=prompt_id, accepted=False, reason="ACP cannot steer"
                )
                self._spawn(self._push(_LOCAL, [refused]), "acp-local")
            case Rollback():
                no_rollback = RollbackVerdict(accepted=False, reason="ACP has no rollback")
                self._spawn(self._push(_LOCAL, [no_rollback]), "acp-local")

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
        await self._push(_TURN_BEGAN, None)
        params = {
            "sessionId": self._session_id,
            "prompt": prompt_blocks(text, attachments, self._launch.dir),
        }
        try:
            result = await self._peer.request("session/prompt", params)
        except RpcError as error:
            await self._push(_PROMPT_FAILED, error)
            return
        except AgentGone:
            return  # run reports the exit; the engine fails the turn
        await self._push(_PROMPT_DONE, result)

    async def _configure(self, option: str, value: str | bool) -> None:
        assert self._peer is not None
        settings = self._translator.settings
        method, params = settings.set_call(self._session_id, option, value)
        try:
            result = await self._peer.request(method, params)
        except RpcError as error:
            await self._push(_LOCAL, [ConfigRefused(option=option, reason=error.message)])
            return
        except AgentGone:
            return
        await self._push(_LOCAL, settings.applied(option, value, result))

    # ---- stopping ----------------------------------------------------------------------

    async def stop(self, grace: float) -> None:
        if self._stopped:
            return
        self._stopped = True
        self._incoming.abort()
        if self._terminals is not None:
            await self._terminals.close()
        if self._process is not None:
            await self._process.stop(grace)
