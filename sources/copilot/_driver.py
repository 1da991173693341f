"""The live Copilot source: `copilot --headless --stdio`, on its native SessionEvents.

Copilot's SDK server mode speaks JSON-RPC 2.0 (Content-Length framing) on
stdio: `connect`, then `session.create` (or `session.resume`), then
`session.send` per prompt; everything the session does arrives as
`session.event` notifications carrying the seed's `SessionEvent`s, which
`CopilotNormalizer` translates. Verified here against Copilot CLI 1.0.102
in offline provider mode (`COPILOT_OFFLINE=true` plus a BYOK provider).

Flow: the process, the pump, the inbox, `run` and `stop` are the kit's
`JsonRpcDriver` (`sources/_kit/driver.py`), with `framed_peer` for the
framing; this module is Copilot's translator (`_translate`) and encoder
(`send`). A slow engine stops the pump and the pipe stops Copilot.
Decisions the driver makes itself (a prompt Copilot refused, a steer
verdict) are local events, served before the next frame. `send` never
waits on Copilot: each command's request runs as a task of the session
(the engine calling `send` may be the very task that must drain the
events).

Commands: StartTurn → `session.send`; SteerTurn → `session.send` with
`mode: "immediate"`; Interrupt → `session.abort`; an answer to a permission
→ `session.permissions.handlePendingPermissionRequest`; an answer to a
question → `session.ui.handlePendingUserInput` (and the legacy
`userInput.request` server request, which Copilot also sends, is answered
the same). Anything Copilot asks that corral does not serve gets a
JSON-RPC error and an Info Diagnostic; a request Copilot announces as an
event and then waits on (`elicitation.requested`, `exit_plan_mode.requested`,
`sampling.requested`, `external_tool.requested`, ...) is declined at once
with its `handlePending*` call (`_declines.py`) and a Warning Diagnostic.
Configure (`model`, `mode`) → `session.model.switchTo` / `session.mode.set`;
Compact → `session.history.compact`; a plan or todo signal → the plan's
read and `PlanUpdated` (`_controls.py`).
"""

from __future__ import annotations

import asyncio
import os
from collections import deque
from typing import Any

import attrs

from ...pipeline import driver
from ...pipeline.channels import BrokenChannel
from ...pipeline.errors import AgentGone, CorralError, ErrorKind
from ...pipeline.events import (
    AgentDetails,
    AgentInstallation,
    Completed,
    ConfigValue,
    DiagnosticLevel,
    Failed,
    PermissionAnswer,
    QuestionRequest,
    QuestionsAnswer,
    StopReason,
)
from ...pipeline.telemetry import SessionTelemetry
from .._jsonrpc import Incoming, RpcError, RpcNotification, RpcRequest, WireProblem
from .._kit.driver import JsonRpcDriver, note, unknown, unsupported
from .._kit.inbox import Local
from ._base import RAW_KEY
from ._controls import (
    configure_call,
    mode_option,
    model_option,
    plan_call,
    plan_from,
)
from ._declines import DECLINED_KEY, Decline, decline_for
from ._details import copilot_details
from ._normalize import CopilotNormalizer
from ._params import (
    BYPASS_ENV,
    launch_argv,
    permission_result,
    session_options,
    user_input_response,
)
from ._rpc import framed_peer

__all__ = ["CopilotDriver"]

_INCOMING = 64


class CopilotDriver(JsonRpcDriver[Incoming]):
    def __init__(
        self, installation: AgentInstallation, spec: driver.LaunchSpec, telemetry: SessionTelemetry
    ) -> None:
        super().__init__(
            spec,
            telemetry,
            frames=_INCOMING,
            inbox_name="copilot",
            agent="Copilot",
            wire="SDK server",
            speaker="Copilot",
            peer=framed_peer,
        )
        self._installation = installation
        self._normalizer = CopilotNormalizer()
        self._session = ""
        self._questions: dict[str, QuestionRequest] = {}
        self._approvals: dict[str, dict[str, Any]] = {}  # request id -> session approval
        self._legacy_inputs: deque[int | str] = deque()  # userInput.request ids to answer
        self._current: dict[str, ConfigValue] = {}  # the settings Copilot last reported

    # ---- lifecycle ---------------------------------------------------------------

    def _env(self) -> dict[str, str]:
        env = {**os.environ, **dict(self._spec.env)}
        for name in BYPASS_ENV:
            env.pop(name, None)
        return env

    async def start(self, tasks: asyncio.TaskGroup) -> driver.Handshake:
        env = self._env()
        argv = launch_argv(self._installation.executable_path, self._spec.args)
        await self._launch(tasks, argv, env)
        options = session_options(cwd=self._spec.dir, env=env, mcp_servers=self._spec.mcp_servers)
        version = await self._handshaking(self._connect())
        opened = await self._handshaking(self._open_session(options))
        self._session = str(opened.get("sessionId", ""))
        details = copilot_details(version, byok="provider" in options)
        details, current = await self._handshaking(self._settings(details, opened))
        return driver.Handshake(
            details=details, resume_token=self._session or None, options=current
        )

    async def _settings(
        self, details: AgentDetails, opened: dict[str, Any]
    ) -> tuple[AgentDetails, tuple[tuple[str, ConfigValue], ...]]:
        """The live `model` and `mode` options; what `configure` chose at open, applied."""
        try:
            listed = await self._call("session.model.list", {})
        except RpcError:
            listed = None  # no list: the current model alone
        state = opened.get("modelState")
        current = state.get("modelId") if isinstance(state, dict) else None
        model = model_option(listed, current)
        offered = (*((model,) if model else ()), mode_option(opened.get("mode")))
        chosen: dict[str, ConfigValue] = {o.id: o.current for o in offered if o.current}
        for option, value in self._spec.configure:
            known = next((o for o in offered if o.id == option), None)
            call = configure_call(option, value)
            if known is None or call is None or not known.accepts(value):
                continue  # the fidelity check refuses it once the handshake is done
            try:
                await self._call(*call)
            except RpcError as error:
                message = f"Copilot refused {option} {value!r}: {error.message}"
                raise CorralError(ErrorKind.INVALID_CONFIGURATION, message) from None
            chosen[option] = value
        self._current = dict(chosen)
        return attrs.evolve(details, config_options=offered), tuple(chosen.items())

    async def _connect(self) -> str | None:
        assert self._peer is not None
        try:
            hello = await self._peer.request("connect", {})
        except RpcError as error:
            if error.code != -32601:
                raise CorralError(ErrorKind.PROTOCOL_FAILED, f"connect failed: {error}") from None
            hello = await self._peer.request("ping", {"message": "corral"})  # older servers
        version = hello.get("version") if isinstance(hello, dict) else None
        return version if isinstance(version, str) else None

    async def _open_session(self, options: dict[str, Any]) -> dict[str, Any]:
        assert self._peer is not None
        resume = self._spec.resume
        try:
            if resume:
                opened = await self._peer.request(
                    "session.resume", {"sessionId": resume, **options}
                )
            else:
                opened = await self._peer.request("session.create", options)
        except RpcError as error:
            kind = ErrorKind.RESUME_FAILED if resume else ErrorKind.PROTOCOL_FAILED
            if "auth" in error.message.lower() or "token" in error.message.lower():
                kind = ErrorKind.AUTH_REQUIRED
            raise CorralError(kind, f"Copilot refused the session: {error.message}") from None
        if not isinstance(opened, dict):
            raise CorralError(ErrorKind.PROTOCOL_FAILED, "session.create answered no session")
        return opened

    # ---- the event path ------------------------------------------------------------

    async def _translate(self, item: Incoming) -> list[driver.DriverEvent]:
        match item:
            case RpcNotification(method="session.event", params=params) if isinstance(params, dict):
                return self._feed(params.get("event"))
            case RpcRequest(method="userInput.request"):
                self._legacy_inputs.append(item.id)
                return []  # answered with the `user_input.requested` event's answer
            case (
                RpcNotification(method=method, params=params)
                | RpcRequest(method=method, params=params)
            ):
                frame = {"method": method, "params": params}
                marks: dict[str, Any] = {RAW_KEY: frame}
                if isinstance(item, RpcRequest):  # answered -32601
                    await self._decline(item)
                    marks[DECLINED_KEY] = method
                message = f"Copilot sent {method}"
                return [unknown(method, message, **marks)]
            case WireProblem():
                return [item.event(speaker="Copilot", wire="JSON-RPC", raw_key=RAW_KEY)]
        return []

    def _feed(self, event: object) -> list[driver.DriverEvent]:
        decline = decline_for(event)
        if decline is not None:  # a waiting request corral does not serve: refused at once
            assert self._tasks is not None
            self._tasks.create_task(
                self._decline_event(decline), name=f"{self._spec.session_id}-decline"
            )
            return [decline.note]
        read = plan_call(event)
        if read is not None:  # a signal without content: read it, then `PlanUpdated`
            self._spawn(self._read_plan(read), "plan")
            return []
        events = self._normalizer.feed(event)
        for out in events:
            self._observe(out)
        return events

    def _observe(self, event: driver.DriverEvent) -> None:
        match event:
            case driver.ConfigApplied(option=option, value=value):
                self._current[option] = value
            case driver.RequestAsked(request=QuestionRequest() as request):
                self._questions[request.id] = request
            case driver.RequestAsked(request=request, extensions=extensions):
                approval = extensions.get("copilot/session_approval")
                if isinstance(approval, dict):
                    self._approvals[request.id] = approval

    async def _decline_event(self, decline: Decline) -> None:
        try:
            await self._call(decline.method, decline.params)
        except (AgentGone, BrokenChannel):
            pass  # `run` reports the exit; or the session is over
        except RpcError as error:
            refused = note(
                DiagnosticLevel.WARNING,
                f"Copilot refused corral's decline ({decline.method}): {error.message}",
                **{DECLINED_KEY: decline.method},
            )
            await self._inbox.put_local(refused)

    async def _read_plan(self, method: str) -> None:
        try:
            result = await self._call(method, {})
        except (AgentGone, BrokenChannel):
            return  # `run` reports the exit; or the session is over
        except RpcError as error:
            message = f"Copilot did not answer {method}: {error.message}"
            await self._inbox.put_behind(Local((note(DiagnosticLevel.WARNING, message),)))
            return
        plan = plan_from(method, result)
        if plan is None:
            plan = note(DiagnosticLevel.WARNING, f"Copilot answered {method} in an unknown shape")
        await self._inbox.put_behind(Local((plan,)))

    # ---- commands -------------------------------------------------------------------

    async def send(self, command: driver.DriverCommand) -> None:
        """Never waits on Copilot: the engine may be the one that must drain its output.

        Bookkeeping that frames read later depend on happens here, at once;
        the request and its answer run as a task of the session.
        """
        match command:
            case driver.StartTurn(text=text):
                self._normalizer.expect_prompt(text)
            case driver.SteerTurn(text=text):
                self._normalizer.expect_prompt(text, steer=True)
        self._spawn(self._perform(command, self._send), "command")

    async def _send(self, command: driver.DriverCommand) -> None:
        match command:
            case driver.StartTurn(text=text, attachments=attachments):
                await self._start_turn(text, attachments)
            case driver.SteerTurn(prompt_id=prompt_id, text=text, attachments=attachments):
                await self._steer(prompt_id, text, attachments)
            case driver.Interrupt():
                await self._call("session.abort", {})
            case driver.Respond(request_id=request_id, answer=answer, message=message):
                await self._answer(request_id, answer, message)
            case driver.Withdraw(request_id=request_id):
                await self._withdraw(request_id)
            case driver.Configure(option=option, value=value):
                await self._configure(option, value)
            case driver.Compact():
                await self._compact()
            case _:
                await self._inbox.put_local(*unsupported(command))

    async def _call(self, method: str, params: dict[str, Any]) -> Any:
        assert self._peer is not None
        return await self._peer.request(method, {"sessionId": self._session, **params})

    @staticmethod
    def _prompt(text: str, attachments: tuple[str, ...], **extra: Any) -> dict[str, Any]:
        params: dict[str, Any] = {"prompt": text, **extra}
        if attachments:
            params["attachments"] = [{"type": "file", "path": path} for path in attachments]
        return params

    async def _start_turn(self, text: str, attachments: tuple[str, ...]) -> None:
        try:
            await self._call("session.send", self._prompt(text, attachments))
        except RpcError as error:
            self._normalizer.forget_prompt(text)
            await self._prompt_refused(error.message)

    async def _steer(self, prompt_id: str, text: str, attachments: tuple[str, ...]) -> None:
        try:
            await self._call("session.send", self._prompt(text, attachments, mode="immediate"))
        except RpcError as error:
            self._normalizer.forget_prompt(text, steer=True)
            verdict = driver.SteerVerdict(prompt_id=prompt_id, accepted=False, reason=error.message)
        else:
            verdict = driver.SteerVerdict(prompt_id=prompt_id, accepted=True)
        await self._inbox.put_local(verdict)

    async def _configure(self, option: str, value: ConfigValue) -> None:
        call = configure_call(option, value)
        if call is None:
            await self._inbox.put_local(*unsupported(driver.Configure(option=option, value=value)))
            return
        unchanged = self._current.get(option) == value  # read before Copilot's event moves it
        try:
            await self._call(*call)
        except RpcError as error:
            await self._inbox.put_local(driver.ConfigRefused(option=option, reason=error.message))
            return
        if option == "mode" and unchanged:
            # the mode Copilot is in: it emits no `session.mode_changed`, so corral confirms
            await self._inbox.put_behind(Local((driver.ConfigApplied(option=option, value=value),)))

    async def _compact(self) -> None:
        await self._inbox.put_local(driver.TurnBegan())
        try:
            await self._call("session.history.compact", {})
        except RpcError as error:
            stop: StopReason = Failed(error.message)
        else:
            stop = Completed()
        ended = driver.TurnFinished(stop=stop)
        await self._inbox.put_behind(Local((ended,)))  # behind the compaction's events

    async def _answer(self, request_id: str, answer: object, message: str | None) -> None:
        question = self._questions.pop(request_id, None)
        if question is not None and isinstance(answer, QuestionsAnswer):
            response = user_input_response(question, answer)
            await self._call(
                "session.ui.handlePendingUserInput", {"requestId": request_id, "response": response}
            )
            await self._answer_legacy_input(response)
            return
        if isinstance(answer, PermissionAnswer):
            result = permission_result(answer, message, self._approvals.pop(request_id, None))
            await self._call(
                "session.permissions.handlePendingPermissionRequest",
                {"requestId": request_id, "result": result},
            )

    async def _withdraw(self, request_id: str) -> None:
        self._approvals.pop(request_id, None)
        if self._questions.pop(request_id, None) is not None:
            await self._answer_legacy_input(None)
            return
        await self._call(
            "session.permissions.handlePendingPermissionRequest",
            {"requestId": request_id, "result": permission_result(None, None)},
        )

    async def _answer_legacy_input(self, response: dict[str, Any] | None) -> None:
        assert self._peer is not None
        if not self._legacy_inputs:
            return
        request_id = self._legacy_inputs.popleft()
        if response is None:
            await self._peer.respond_error(request_id, -32000, "the question was withdrawn")
        else:
            await self._peer.respond(request_id, response)
