"""The app-server source: any agent speaking the thread/turn/item/approval JSON-RPC wire.

Handshake: `initialize` (client info and capabilities; the server answers
`protocolVersion: "v1"`, anything else is refused), the `initialized`
notification, then `thread/start {agentKey, cwd}` (or `thread/resume
{threadId}` for a resume token). The agent key is the installation's id:
the `name` of an ad-hoc `{"appserver": {...}}` ref, or the catalog id of an
entry (`agent_entry`). The seed's `agentKey` is a key, the same string
`model/list` filters by, so never the entry's display name.

Commands: StartTurn → `turn/start {threadId, input}`; SteerTurn →
`turn/steer {threadId, expectedTurnId, input}` (the reply's `queued` is the
verdict); Interrupt → `turn/interrupt`; an answer → `approval/resolve
{requestId, threadId, turnId, decision}` with decision `allow`,
`allow_session` or `deny` (and the deny message as `reason`); a withdrawn
request → `deny` with a reason saying so. Notifications go through
`AppServerNormalizer`; a server request corral does not serve gets a
JSON-RPC error and an Info Diagnostic.

Flow: as in every JSON-RPC source, the pump fills the bounded `incoming`
channel and `run` is the only task that sends DriverEvents; verdicts and
failures decided here go through `_local`, served first. `send` never
waits on the agent: each command's request runs as a task of the session
(the engine calling `send` may be the very task that must drain the
events), and `stop` aborts `_local` so such a task never hangs.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
from typing import Any

from ...pipeline.channels import BrokenChannel, Channel, EndOfChannel
from ...pipeline.driver import (
    AgentExited,
    Compact,
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
    TurnBegan,
    TurnFinished,
    Withdraw,
)
from ...pipeline.errors import AgentGone, CorralError, ErrorKind
from ...pipeline.events import (
    AgentInstallation,
    Diagnostic,
    DiagnosticLevel,
    Failed,
    PermissionAnswer,
    PermissionChoice,
)
from ...pipeline.fidelity import DECLINED
from ...pipeline.telemetry import SessionTelemetry
from .._jsonrpc import Incoming, JsonRpcPeer, RpcError, RpcNotification, RpcRequest, WireNoise
from .._process import AgentProcess
from ._details import appserver_details
from ._normalize import RAW_KEY, AppServerNormalizer

__all__ = ["AppServerDriver"]

PROTOCOL_VERSION = "v1"
_DECISIONS = {
    PermissionChoice.ALLOW_ONCE: "allow",
    PermissionChoice.ALLOW_ALWAYS: "allow_session",
    PermissionChoice.DENY_ONCE: "deny",
    PermissionChoice.DENY_ALWAYS: "deny",
}


def _note(level: DiagnosticLevel, message: str, **extensions: Any) -> Emitted:
    return Emitted(kind=Diagnostic(level=level, message=message), extensions=extensions)


def _input(text: str, attachments: tuple[str, ...]) -> list[dict[str, str]]:
    items = [{"type": "text", "text": text}]
    items += [{"type": "file", "path": path} for path in attachments]
    return items


class AppServerDriver:
    def __init__(
        self,
        installation: AgentInstallation,
        spec: LaunchSpec,
        telemetry: SessionTelemetry,
        *,
        version: str = "0",
    ) -> None:
        self._installation = installation
        self._spec = spec
        self._telemetry = telemetry
        self._client_version = version
        self._normalizer = AppServerNormalizer()
        self._incoming: Channel[Incoming] = Channel(64, name=f"{spec.session_id}/appserver")
        self._local: Channel[DriverEvent] = Channel(16, name=f"{spec.session_id}/appserver-local")
        self._tasks: asyncio.TaskGroup | None = None
        self._process: AgentProcess | None = None
        self._peer: JsonRpcPeer | None = None
        self._thread = ""
        self._turn: str | None = None

    # ---- lifecycle -------------------------------------------------------------

    async def start(self, tasks: asyncio.TaskGroup) -> Handshake:
        argv = [
            self._installation.executable_path,
            *(self._installation.acp_args or ()),
            *self._spec.args,
        ]
        env = {**os.environ, **dict(self._spec.env)}
        self._tasks = tasks
        self._process = await AgentProcess.spawn(
            argv,
            cwd=self._spec.dir,
            env=env,
            tasks=tasks,
            telemetry=self._telemetry,
            sandbox=self._spec.sandbox,
        )
        self._peer = JsonRpcPeer(self._process, telemetry=self._telemetry)
        tasks.create_task(self._peer.pump(self._incoming), name=f"{self._spec.session_id}-pump")
        try:
            hello = await self._initialize()
            self._thread = await self._open_thread()
        except AgentGone:
            status = await self._process.wait()
            raise CorralError(
                ErrorKind.PROCESS_EXITED,
                f"{self._installation.name} exited during its handshake (status {status})",
                status=status,
                stderr=self._process.stderr_tail(),
            ) from None
        return Handshake(details=appserver_details(hello), resume_token=self._thread or None)

    async def _initialize(self) -> dict[str, Any]:
        assert self._peer is not None
        params = {
            "clientInfo": {"name": "corral", "title": "corral", "version": self._client_version},
            "capabilities": {"experimentalApi": False},
        }
        try:
            hello = await self._peer.request("initialize", params)
        except RpcError as error:
            raise CorralError(ErrorKind.PROTOCOL_FAILED, f"initialize failed: {error}") from None
        version = hello.get("protocolVersion") if isinstance(hello, dict) else None
        if version != PROTOCOL_VERSION:
            raise CorralError(
                ErrorKind.PROTOCOL_FAILED,
                f"the agent speaks protocol {version!r}; corral speaks {PROTOCOL_VERSION!r}",
            )
        await self._peer.notify("initialized")
        assert isinstance(hello, dict)
        return hello

    async def _open_thread(self) -> str:
        assert self._peer is not None
        resume = self._spec.resume
        try:
            if resume:
                opened = await self._peer.request(
                    "thread/resume", {"threadId": resume, "subscribe": True}
                )
                thread = opened.get("thread", {}) if isinstance(opened, dict) else {}
                return str(thread.get("threadId", resume))
            params = {"agentKey": self._installation.id, "cwd": self._spec.dir}
            opened = await self._peer.request("thread/start", params)
        except RpcError as error:
            kind = ErrorKind.RESUME_FAILED if resume else ErrorKind.PROTOCOL_FAILED
            raise CorralError(kind, f"the agent refused the thread: {error.message}") from None
        if not isinstance(opened, dict) or not isinstance(opened.get("threadId"), str):
            raise CorralError(ErrorKind.PROTOCOL_FAILED, "thread/start answered no threadId")
        return str(opened["threadId"])

    async def stop(self, grace: float) -> None:
        if self._process is not None:
            await self._process.stop(grace)
        self._local.abort()  # a `send` waiting on it is released; `run` ends at EOF

    # ---- the event path ----------------------------------------------------------

    async def run(self, events_out: EventSink) -> None:
        while (item := await self._next()) is not None:
            if isinstance(item, _Local):
                await events_out.send(item.event)
                continue
            for event in self._translate(item):
                await events_out.send(event)
            if isinstance(item, RpcRequest):
                await self._refuse(item)
        assert self._process is not None
        status = await self._process.wait()
        await events_out.send(AgentExited(status=status, stderr=self._process.stderr_tail()))

    async def _next(self) -> _Local | Incoming | None:
        while True:
            try:
                local = self._local.try_receive()
            except EndOfChannel:
                local = None
            if local is not None:
                return _Local(local)
            try:
                frame = self._incoming.try_receive()
            except EndOfChannel:
                return None
            if frame is not None:
                return frame
            waits = [asyncio.ensure_future(self._incoming.wait_readable())]
            if not self._local.closed:  # aborted by `stop`: only the agent's output is left
                waits.append(asyncio.ensure_future(self._local.wait_readable()))
            try:
                await asyncio.wait(waits, return_when=asyncio.FIRST_COMPLETED)
            finally:
                for waiter in waits:
                    waiter.cancel()

    def _translate(self, item: Incoming) -> list[DriverEvent]:
        match item:
            case RpcNotification(method=method, params=params):
                if method == "turn/started" and isinstance(params, dict):
                    self._turn = str(params.get("turnId") or self._turn)
                events = self._normalizer.feed(method, params)
                for event in events:
                    if isinstance(event, Emitted) and "corral/unknown_frame" in event.extensions:
                        self._telemetry.unknown_frame()
                return events
            case RpcRequest(method=method, params=params):
                self._telemetry.unknown_frame()
                frame = {"method": method, "params": params}
                note = f"the agent asked {method}, which corral does not serve"
                return [
                    _note(
                        DiagnosticLevel.INFO,
                        note,
                        **{RAW_KEY: frame, "corral/unknown_frame": method, DECLINED: method},
                    )
                ]
            case WireNoise(reason=reason, raw=raw):
                note = f"the agent wrote something that is not JSON-RPC: {reason}"
                return [
                    _note(
                        DiagnosticLevel.WARNING,
                        note,
                        **{RAW_KEY: raw, "corral/decode_error": "not_json"},
                    )
                ]
        return []

    async def _refuse(self, request: RpcRequest) -> None:
        assert self._peer is not None
        with contextlib.suppress(AgentGone):
            await self._peer.respond_error(
                request.id, -32601, f"corral does not serve {request.method}"
            )

    # ---- commands -------------------------------------------------------------------

    async def send(self, command: DriverCommand) -> None:
        """Never waits on the agent: the engine may be the one that must drain its output.

        Bookkeeping that frames read later depend on happens here, at once;
        the request and its answer run as a task of the session.
        """
        match command:
            case StartTurn(text=text):
                self._normalizer.expect_turn(text)
            case SteerTurn(text=text):
                self._normalizer.expect_echo(text)
        assert self._tasks is not None
        self._tasks.create_task(self._perform(command), name=f"{self._spec.session_id}-command")

    async def _perform(self, command: DriverCommand) -> None:
        try:
            await self._send(command)
        except (AgentGone, BrokenChannel):
            pass  # `run` reports the exit; or the session is over
        except RpcError as error:
            note = _note(
                DiagnosticLevel.WARNING,
                f"the agent refused {type(command).__name__}: {error.message}",
            )
            with contextlib.suppress(BrokenChannel):
                await self._local.send(note)

    async def _request(self, method: str, params: dict[str, Any]) -> Any:
        assert self._peer is not None
        return await self._peer.request(method, params)

    async def _send(self, command: DriverCommand) -> None:
        match command:
            case StartTurn(text=text, attachments=attachments):
                await self._start_turn(text, attachments)
            case SteerTurn(prompt_id=prompt_id, text=text, attachments=attachments):
                await self._steer(prompt_id, text, attachments)
            case Interrupt():
                params = {"threadId": self._thread, "reason": "cancelled by corral"}
                if self._turn:
                    params["expectedTurnId"] = self._turn
                await self._request("turn/interrupt", params)
            case Respond(
                request_id=request_id, answer=PermissionAnswer(choice=choice), message=message
            ):
                await self._resolve(request_id, _DECISIONS[choice], message)
            case Withdraw(request_id=request_id):
                await self._resolve(request_id, "deny", "withdrawn: nobody will answer")
            case Configure(option=option):
                await self._local.send(ConfigRefused(option=option, reason="no live options"))
            case Rollback():
                await self._local.send(RollbackVerdict(accepted=False, reason="not supported"))
            case Compact():
                await self._local.send(TurnBegan())
                await self._local.send(TurnFinished(stop=Failed("compact is not supported")))

    async def _start_turn(self, text: str, attachments: tuple[str, ...]) -> None:
        params = {"threadId": self._thread, "input": _input(text, attachments)}
        try:
            started = await self._request("turn/start", params)
        except RpcError as error:
            self._normalizer.forget(text)
            await self._local.send(TurnBegan())
            await self._local.send(
                _note(DiagnosticLevel.ERROR, f"the agent refused the prompt: {error.message}")
            )
            await self._local.send(TurnFinished(stop=Failed(error.message)))
            return
        if isinstance(started, dict) and isinstance(started.get("turnId"), str):
            self._turn = started["turnId"]

    async def _steer(self, prompt_id: str, text: str, attachments: tuple[str, ...]) -> None:
        params: dict[str, Any] = {"threadId": self._thread, "input": _input(text, attachments)}
        if self._turn:
            params["expectedTurnId"] = self._turn
        try:
            reply = await self._request("turn/steer", params)
        except RpcError as error:
            self._normalizer.forget(text, steer=True)
            verdict = SteerVerdict(prompt_id=prompt_id, accepted=False, reason=error.message)
        else:
            queued = not isinstance(reply, dict) or reply.get("queued") is not False
            verdict = SteerVerdict(
                prompt_id=prompt_id,
                accepted=queued,
                reason=None if queued else "the agent did not queue the steer",
            )
        await self._local.send(verdict)

    async def _resolve(self, request_id: str, decision: str, reason: str | None) -> None:
        asked = self._normalizer.approvals.get(request_id)
        params: dict[str, Any] = {
            "requestId": request_id,
            "threadId": asked.thread_id if asked else self._thread,
            "turnId": asked.turn_id if asked else (self._turn or ""),
            "decision": decision,
        }
        if reason:
            params["reason"] = reason
        await self._request("approval/resolve", params)


class _Local:
    __slots__ = ("event",)

    def __init__(self, event: DriverEvent) -> None:
        self.event = event
