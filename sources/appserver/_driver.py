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

Flow: the process, the pump, the inbox, `run` and `stop` are the kit's
`JsonRpcDriver` (`sources/_kit/driver.py`); this module is the wire's
translator (`_translate`) and encoder (`send`). Verdicts and failures
decided here are local events, served before the next frame. `send` never
waits on the agent: each command's request runs as a task of the session
(the engine calling `send` may be the very task that must drain the
events).
"""

from __future__ import annotations

import asyncio
import os
from typing import Any

from ...pipeline.driver import (
    DriverCommand,
    DriverEvent,
    Handshake,
    Interrupt,
    LaunchSpec,
    Respond,
    StartTurn,
    SteerTurn,
    SteerVerdict,
    Withdraw,
)
from ...pipeline.errors import CorralError, ErrorKind
from ...pipeline.events import (
    AgentInstallation,
    DiagnosticLevel,
    PermissionAnswer,
    PermissionChoice,
)
from ...pipeline.fidelity import DECLINED
from ...pipeline.telemetry import SessionTelemetry
from .._jsonrpc import Incoming, RpcError, RpcNotification, RpcRequest, WireProblem
from .._kit.driver import JsonRpcDriver, note, unsupported
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


def _input(text: str, attachments: tuple[str, ...]) -> list[dict[str, str]]:
    items = [{"type": "text", "text": text}]
    items += [{"type": "file", "path": path} for path in attachments]
    return items


class AppServerDriver(JsonRpcDriver[Incoming]):
    def __init__(
        self,
        installation: AgentInstallation,
        spec: LaunchSpec,
        telemetry: SessionTelemetry,
        *,
        version: str = "0",
    ) -> None:
        super().__init__(
            spec,
            telemetry,
            frames=64,
            inbox_name="appserver",
            agent=installation.name,
            wire="app-server",
        )
        self._installation = installation
        self._client_version = version
        self._normalizer = AppServerNormalizer()
        self._thread = ""
        self._turn: str | None = None

    # ---- lifecycle -------------------------------------------------------------

    async def start(self, tasks: asyncio.TaskGroup) -> Handshake:
        argv = [
            self._installation.executable_path,
            *(self._installation.acp_args or ()),
            *self._spec.args,
        ]
        await self._launch(tasks, argv, {**os.environ, **dict(self._spec.env)})
        hello = await self._handshaking(self._initialize())
        self._thread = await self._handshaking(self._open_thread())
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

    # ---- the event path ----------------------------------------------------------

    async def _translate(self, item: Incoming) -> list[DriverEvent]:
        match item:
            case RpcNotification(method=method, params=params):
                if method == "turn/started" and isinstance(params, dict):
                    self._turn = str(params.get("turnId") or self._turn)
                return self._normalizer.feed(method, params)
            case RpcRequest(method=method, params=params):
                await self._decline(item)
                frame = {"method": method, "params": params}
                message = f"the agent asked {method}, which corral does not serve"
                marks = {RAW_KEY: frame, "corral/unknown_frame": method, DECLINED: method}
                return [note(DiagnosticLevel.INFO, message, **marks)]
            case WireProblem():
                return [item.event(speaker="the agent", wire="JSON-RPC", raw_key=RAW_KEY)]

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
        self._spawn(self._perform(command, self._send), "command")

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
            case _:
                await self._inbox.put_local(*unsupported(command))

    async def _start_turn(self, text: str, attachments: tuple[str, ...]) -> None:
        params = {"threadId": self._thread, "input": _input(text, attachments)}
        try:
            started = await self._request("turn/start", params)
        except RpcError as error:
            self._normalizer.forget(text)
            await self._prompt_refused(error.message)
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
        await self._inbox.put_local(verdict)

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
