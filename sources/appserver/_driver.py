"""The app-server source: any agent speaking the thread/turn/item/approval JSON-RPC wire.

Handshake: `initialize` (client info and capabilities; the server answers
`protocolVersion: "v1"`, anything else is refused), the `initialized`
notification, then `thread/start {agentKey, cwd}` (or `thread/resume
{threadId}` for a resume token; a token naming a checkpoint makes the first
prompt `turn/resume` it, see `_controls.py`). When `initialize` says
`modelList`, `model/list {agentKey}` feeds the live `model` option. The
agent key is the installation's id:
the `name` of an ad-hoc `{"appserver": {...}}` ref, or the catalog id of an
entry (`agent_entry`). The seed's `agentKey` is a key, the same string
`model/list` filters by, so never the entry's display name.

Commands: StartTurn → `turn/start {threadId, input}`; SteerTurn →
`turn/steer {threadId, expectedTurnId, input}` (the reply's `queued` is the
verdict); Interrupt → `turn/interrupt`; an answer → `approval/resolve
{requestId, threadId, turnId, decision}` with decision `allow`,
`allow_session` or `deny` (and the deny message as `reason`); a withdrawn
request → `deny` with a reason saying so; Configure `model` → kept, and
sent as `metadata.model` of every later `turn/start` (the wire has no
switch call); other Configure, Rollback and Compact → refused (the wire has
none of them). Fork and MCP servers are not declared (the wire has
neither), so the shared fidelity check refuses them at open. Notifications go through
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

import attrs

from ...pipeline.driver import (
    ConfigApplied,
    Configure,
    DriverCommand,
    DriverEvent,
    Handshake,
    InfoChanged,
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
    AgentDetails,
    AgentInstallation,
    PermissionAnswer,
    PermissionChoice,
)
from ...pipeline.fidelity import DECLINED
from ...pipeline.telemetry import SessionTelemetry
from .._jsonrpc import Incoming, RpcError, RpcNotification, RpcRequest, WireProblem
from .._kit.driver import JsonRpcDriver, unknown, unsupported
from ._controls import (
    MODEL,
    Checkpoint,
    checkpoint_of,
    model_option,
    parse_token,
    resuming,
    token,
)
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
        self._checkpoint: Checkpoint | None = None  # the last turn's, resumable
        self._resuming: Checkpoint | None = None  # opened at it: the first prompt resumes it
        self._model: str | None = None  # sent with every `turn/start`

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
        details = await self._handshaking(self._models(appserver_details(hello), hello))
        options = ((MODEL, self._model),) if self._model else ()
        resume_token = token(self._thread, self._resuming) if self._thread else None
        return Handshake(details=details, resume_token=resume_token, options=options)

    async def _models(self, details: AgentDetails, hello: dict[str, Any]) -> AgentDetails:
        """The `model` option, from `model/list` where the server offers it."""
        assert self._peer is not None
        server = hello.get("capabilities")
        if not isinstance(server, dict) or server.get("modelList") is not True:
            return details
        try:
            listed = await self._peer.request("model/list", {"agentKey": self._installation.id})
        except RpcError:
            return details  # no list, no option: `configure model` is then refused
        chosen = dict(self._spec.configure).get(MODEL)
        option = model_option(listed, chosen if isinstance(chosen, str) else None)
        if option is None:
            return details
        if isinstance(chosen, str) and option.accepts(chosen):
            self._model = chosen  # the fidelity check refuses any other value at open
        return attrs.evolve(details, config_options=(*details.config_options, option))

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
        resume, self._resuming = parse_token(self._spec.resume or "")
        self._checkpoint = self._resuming
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
                events: list[DriverEvent] = []
                if method == "turn/completed" and isinstance(params, dict):
                    events += self._checkpointed(checkpoint_of(params))  # known at the turn's end
                return events + self._normalizer.feed(method, params)
            case RpcRequest(method=method, params=params):
                await self._decline(item)
                frame = {"method": method, "params": params}
                message = f"the agent asked {method}, which corral does not serve"
                marks = {RAW_KEY: frame, DECLINED: method}
                return [unknown(method, message, **marks)]
            case WireProblem():
                return [item.event(speaker="the agent", wire="JSON-RPC", raw_key=RAW_KEY)]

    def _checkpointed(self, checkpoint: Checkpoint | None) -> list[DriverEvent]:
        """A turn ended: the resume token names its resumable checkpoint, or none."""
        if checkpoint == self._checkpoint:
            return []
        self._checkpoint = checkpoint
        return [InfoChanged(resume_token=token(self._thread, checkpoint))]

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
            case Configure(option="model", value=str(model)):
                self._model = model  # the engine checked it against the listed models
                await self._inbox.put_local(ConfigApplied(option=MODEL, value=model))
            case _:
                await self._inbox.put_local(*unsupported(command))

    async def _start_turn(self, text: str, attachments: tuple[str, ...]) -> None:
        if self._resuming is not None:
            await self._resume_turn(self._resuming, text)
            return
        params: dict[str, Any] = {"threadId": self._thread, "input": _input(text, attachments)}
        if self._model:
            params["metadata"] = {"model": self._model}
        try:
            started = await self._request("turn/start", params)
        except RpcError as error:
            self._normalizer.forget(text)
            await self._prompt_refused(error.message)
            return
        if isinstance(started, dict) and isinstance(started.get("turnId"), str):
            self._turn = started["turnId"]

    async def _resume_turn(self, checkpoint: Checkpoint, text: str) -> None:
        """The first prompt of a session opened at a checkpoint: `turn/resume` it."""
        self._resuming = None
        self._normalizer.forget(text, steer=True)  # no echo: the wire takes no input here
        params = {
            "threadId": self._thread,
            "turnId": checkpoint.turn_id,
            "checkpointKey": checkpoint.key,
        }
        await self._inbox.put_local(resuming(checkpoint, text))
        try:
            resumed = await self._request("turn/resume", params)
        except RpcError as error:
            self._normalizer.forget(text)
            await self._prompt_refused(f"the checkpoint could not be resumed: {error.message}")
            return
        if isinstance(resumed, dict) and isinstance(resumed.get("turnId"), str):
            self._turn = resumed["turnId"]

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
