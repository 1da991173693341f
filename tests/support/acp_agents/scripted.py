"""A small ACP agent on the agent side of the official Python SDK, for tests.

Run as a subprocess (`python scripted.py [FLAGS]`). The SDK speaks
the protocol; this file only scripts behaviour, chosen by the first word of
the prompt text:

    text          two message chunks and a thought, then end_turn
    tool          a tool call that asks permission (all four option kinds);
                  allowed → completed + "allowed"; rejected → failed +
                  "denied"; cancelled outcome → stopReason cancelled
    plan          a three-entry plan, then end_turn
    diff          an edit tool call with a diff and a location, completed
    slow          one chunk every 50 ms until cancelled → stopReason cancelled
    write P T     fs/write_text_file P (relative to the cwd) with text T
    read P        fs/read_text_file P, answers "read: <content>"
    unsupported   calls elicitation/create and an extension method; reports the
                  elicitation's action (or error) and the extension's error
    elicit        elicitation/create with a form (a required string `name`, a
                  boolean `ci`); says "elicitation <the answer as JSON>"
    termstream    tool call t4 showing a terminal that prints "first", waits
                  (20 s at most) until the file `go` exists in the cwd, then
                  prints "second"; completes t4 and says the summary
    notice        a warning notice, a compaction in progress, a summary block,
                  the compaction completed, then end_turn
    model         says the current model
    term LINE     terminal/create LINE (a shell line), waits for it, reads its
                  output, releases it: "exit <code> signal <sig> truncated
                  <bool> output <repr>", or "terminal error <code> <message>"
    termargs      terminal/create `sh` with args and env (FOO=bar)
    termcwd DIR   terminal/create `pwd` in DIR
    termlimit N   prints 3000 two-byte characters with outputByteLimit N
    termkill      starts `sleep 300 &` plus `sleep 300`, says "child <pid>",
                  kills it, says how it ended
    termbg        a command that leaves `sleep 300 &` holding its output
                  open and exits: waits, says the exit, then releases
    termhang      starts `sleep 300 & ...; wait`, says "child <pid>", then
                  waits for it forever (the session's close must end it)
    termreleased  output after release: says the error
    asked LINE    asks permission for an execute tool call t3 running LINE;
                  allowed → runs LINE through terminal/create, shows the
                  terminal in t3, completes t3
    mode          switches its own mode to "plan" (current_mode_update)
    usage         a usage_update, then end_turn with usage
    refuse        stopReason refusal
    maxtokens     stopReason max_tokens
    noise         a line that is not JSON on stdout, then end_turn
    unknown       an extension notification, then end_turn
    die           a message chunk, then the process exits with status 3
    commands      an available_commands_update with two commands, then end_turn
    mcp           says the MCP servers `session/new` gave it, as JSON
    opened        says how the session was opened: new, load or resume
    anything else "You said: <text>"

Attacks on corral (`swap`, `grant`, `termenv`, `raw`, `rawline`, `flood`)
live in attacks.py; see its header.

It advertises `loadSession` (a load replays a two-message history), two
modes (default, plan) and a `model` config option (fast, smart). Loading or
resuming the session `scripted-gone` fails (-32002). Flags change what it
advertises:

    --require-auth      `session/new` answers -32000 until `authenticate` with
                        method `agent-login` succeeds
    --env-auth VAR      the same, but its only method is `env-login`, of type
                        env_var with the variable VAR
    --protocol N        answers `initialize` with protocol version N
    --resume-only       no `loadSession`; `sessionCapabilities.resume` instead
                        (`session/resume` replays nothing)
    --mcp-http          `mcpCapabilities.http` (stdio is always allowed)
    --models            the model as the unstable `models` state (fast, smart)
                        set with `session/set_model`, not as a config option
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sys
from typing import Any

from acp import (
    PROTOCOL_VERSION,
    Client,
    RequestError,
    plan_entry,
    run_agent,
    start_tool_call,
    text_block,
    tool_content,
    tool_diff_content,
    tool_terminal_ref,
    update_agent_message_text,
    update_agent_thought_text,
    update_plan,
    update_tool_call,
    update_user_message_text,
)
from acp.helpers import update_available_commands, update_current_mode
from acp.schema import (
    AgentCapabilities,
    AuthenticateResponse,
    AuthEnvVar,
    AuthMethodAgent,
    AvailableCommand,
    EnvVarAuthMethod,
    EnvVariable,
    Implementation,
    InitializeResponse,
    LoadSessionResponse,
    McpCapabilities,
    NewSessionResponse,
    PermissionOption,
    PromptResponse,
    ResumeSessionResponse,
    SessionCapabilities,
    SessionConfigOptionSelect,
    SessionConfigSelectOption,
    SessionMode,
    SessionModeState,
    SessionResumeCapabilities,
    SetSessionConfigOptionResponse,
    SetSessionModeResponse,
    ToolCallLocation,
    ToolCallUpdate,
    Usage,
    UsageUpdate,
)
from attacks import AttackMixin  # run as a script: its folder is on sys.path
from pydantic import ConfigDict

OPTIONS = [
    PermissionOption(option_id="yes", name="Allow", kind="allow_once"),
    PermissionOption(option_id="yes-all", name="Always allow", kind="allow_always"),
    PermissionOption(option_id="no", name="Reject", kind="reject_once"),
    PermissionOption(option_id="never", name="Never", kind="reject_always"),
]


class _NewSessionWithModels(NewSessionResponse):
    """`session/new`'s answer with the unstable `models` state the SDK dropped."""

    model_config = ConfigDict(populate_by_name=True, extra="allow")


GONE = "scripted-gone"  # the session id a load or resume cannot find


def parse_flags(argv: list[str]) -> argparse.Namespace:
    flags = argparse.ArgumentParser(prog="scripted")
    flags.add_argument("--require-auth", action="store_true")
    flags.add_argument("--env-auth", metavar="VAR")
    flags.add_argument("--protocol", type=int, default=PROTOCOL_VERSION)
    flags.add_argument("--resume-only", action="store_true")
    flags.add_argument("--mcp-http", action="store_true")
    flags.add_argument("--models", action="store_true")
    return flags.parse_args(argv)


class ScriptedAgent(AttackMixin):
    """Structurally an `acp.Agent`; methods it lacks are answered -32601 by the SDK."""

    def __init__(self, flags: argparse.Namespace) -> None:
        self._flags = flags
        self._client: Client | None = None
        self._authed = not (flags.require_auth or flags.env_auth)
        self._mcp_servers: list[Any] = []
        self._opened = "none"
        self._cancel: dict[str, asyncio.Event] = {}
        self._mode = "default"
        self._model = "fast"
        self._cwd = os.getcwd()
        self._hello: tuple[int, Any, Any] = (0, None, None)

    def on_connect(self, conn: Client) -> None:
        self._client = conn

    @property
    def client(self) -> Client:
        assert self._client is not None
        return self._client

    async def initialize(self, protocol_version: int, **kwargs: Any) -> InitializeResponse:
        self._hello = (
            protocol_version,
            kwargs.get("client_capabilities"),
            kwargs.get("client_info"),
        )
        flags = self._flags
        resume = SessionResumeCapabilities() if flags.resume_only else None
        return InitializeResponse(
            protocol_version=flags.protocol,
            agent_capabilities=AgentCapabilities(
                load_session=not flags.resume_only,
                session_capabilities=SessionCapabilities(resume=resume),
                mcp_capabilities=McpCapabilities(http=flags.mcp_http),
            ),
            auth_methods=[self._auth_method()],
            agent_info=Implementation(name="scripted", title="Scripted", version="1.2.3"),
        )

    def _auth_method(self) -> AuthMethodAgent | EnvVarAuthMethod:
        if self._flags.env_auth is None:
            return AuthMethodAgent(id="agent-login", name="Log in through the agent")
        return EnvVarAuthMethod(
            type="env_var",
            id="env-login",
            name="A token in the environment",
            vars=[AuthEnvVar(name=self._flags.env_auth)],
        )

    async def authenticate(self, method_id: str, **kwargs: Any) -> AuthenticateResponse:
        if method_id != self._auth_method().id:
            raise RequestError.invalid_params({"methodId": method_id})
        self._authed = True
        return AuthenticateResponse()

    def _session_state(self) -> dict[str, Any]:
        if self._flags.models:
            return {"models": self._models_state()}
        return {
            "modes": SessionModeState(
                current_mode_id=self._mode,
                available_modes=[
                    SessionMode(id="default", name="Default"),
                    SessionMode(id="plan", name="Plan", description="read only"),
                ],
            ),
            "config_options": [
                SessionConfigOptionSelect(
                    id="model",
                    name="Model",
                    category="model",
                    type="select",
                    current_value=self._model,
                    options=[
                        SessionConfigSelectOption(value="fast", name="Fast"),
                        SessionConfigSelectOption(value="smart", name="Smart"),
                    ],
                )
            ],
        }

    async def new_session(self, cwd: str, **kwargs: Any) -> NewSessionResponse:
        if not self._authed:
            raise RequestError.auth_required()
        self._cwd = cwd
        self._mcp_servers = list(kwargs.get("mcp_servers") or [])
        self._opened = "new"
        session_id = f"scripted-{os.getpid()}"
        if self._flags.models:  # a field the SDK's model no longer has
            return _NewSessionWithModels(session_id=session_id, **self._session_state())
        return NewSessionResponse(session_id=session_id, **self._session_state())

    async def load_session(self, cwd: str, session_id: str, **kwargs: Any) -> LoadSessionResponse:
        if session_id == GONE:
            raise RequestError.resource_not_found(session_id)
        self._cwd = cwd
        self._opened = "load"
        await self.client.session_update(session_id, update_user_message_text("earlier question"))
        await self.client.session_update(session_id, update_agent_message_text("earlier answer"))
        return LoadSessionResponse(**self._session_state())

    async def resume_session(
        self, session_id: str, cwd: str, **kwargs: Any
    ) -> ResumeSessionResponse:
        if session_id == GONE:
            raise RequestError.resource_not_found(session_id)
        self._cwd = cwd
        self._opened = "resume"
        return ResumeSessionResponse(**self._session_state())

    async def set_session_mode(
        self, session_id: str, mode_id: str, **kwargs: Any
    ) -> SetSessionModeResponse:
        if mode_id not in ("default", "plan"):
            raise RequestError.invalid_params({"modeId": mode_id})
        self._mode = mode_id
        return SetSessionModeResponse()

    async def set_config_option(
        self, config_id: str, session_id: str, value: str | bool, **kwargs: Any
    ) -> SetSessionConfigOptionResponse:
        if config_id != "model" or value not in ("fast", "smart"):
            raise RequestError.invalid_params({"configId": config_id})
        self._model = str(value)
        return SetSessionConfigOptionResponse(
            config_options=self._session_state()["config_options"]
        )

    def _models_state(self) -> dict[str, Any]:
        available = [{"modelId": "fast", "name": "Fast"}, {"modelId": "smart", "name": "Smart"}]
        return {"currentModelId": self._model, "availableModels": available}

    async def set_model(self, params: Any) -> dict[str, Any]:
        """`session/set_model` (no longer in the SDK: routed by `main`)."""
        model = params.get("modelId") if isinstance(params, dict) else None
        if model not in ("fast", "smart"):
            raise RequestError.invalid_params({"modelId": model})
        self._model = str(model)
        return {}

    async def cancel(self, session_id: str, **kwargs: Any) -> None:
        self._cancel.setdefault(session_id, asyncio.Event()).set()

    async def prompt(self, session_id: str, prompt: list[Any], **kwargs: Any) -> PromptResponse:
        self._cancel[session_id] = asyncio.Event()
        text = " ".join(block.text for block in prompt if getattr(block, "type", "") == "text")
        word, _, rest = text.partition(" ")
        handler = getattr(self, f"_do_{word}", None)
        if handler is None:
            await self._say(session_id, f"You said: {text}")
            return PromptResponse(stop_reason="end_turn")
        result: PromptResponse = await handler(session_id, rest)
        return result

    async def _say(self, session_id: str, text: str) -> None:
        await self.client.session_update(session_id, update_agent_message_text(text))

    async def _do_caps(self, session_id: str, rest: str) -> PromptResponse:
        """What the client said of itself in `initialize`."""
        version, caps, info = self._hello
        fs = caps.fs if caps is not None else None
        said = (
            f"protocol {version} read {fs and fs.read_text_file} write {fs and fs.write_text_file}"
            f" terminal {caps and caps.terminal} client {info and info.name} {info and info.version}"
        )
        await self._say(session_id, said)
        return PromptResponse(stop_reason="end_turn")

    async def _do_text(self, session_id: str, rest: str) -> PromptResponse:
        await self.client.session_update(session_id, update_agent_thought_text("thinking"))
        await self._say(session_id, "Hello, ")
        await self._say(session_id, "world")
        return PromptResponse(stop_reason="end_turn")

    async def _do_tool(self, session_id: str, rest: str) -> PromptResponse:
        raw_input = {"command": "touch x"}
        await self.client.session_update(
            session_id,
            start_tool_call("t1", "touch x", kind="execute", status="pending", raw_input=raw_input),
        )
        answer = await self.client.request_permission(
            session_id=session_id,
            tool_call=ToolCallUpdate(tool_call_id="t1", title="touch x", kind="execute"),
            options=OPTIONS,
        )
        outcome = answer.outcome
        if outcome.outcome == "cancelled":
            return PromptResponse(stop_reason="cancelled")
        allowed = outcome.option_id in ("yes", "yes-all")
        await self.client.session_update(
            session_id,
            update_tool_call(
                "t1",
                status="completed" if allowed else "failed",
                content=[tool_content(text_block("ran" if allowed else "rejected"))],
            ),
        )
        await self._say(session_id, f"{'allowed' if allowed else 'denied'} {outcome.option_id}")
        return PromptResponse(stop_reason="end_turn")

    async def _do_plan(self, session_id: str, rest: str) -> PromptResponse:
        entries = [
            plan_entry("look", status="completed"),
            plan_entry("change", status="in_progress"),
            plan_entry("test", status="pending"),
        ]
        await self.client.session_update(session_id, update_plan(entries))
        return PromptResponse(stop_reason="end_turn")

    async def _do_diff(self, session_id: str, rest: str) -> PromptResponse:
        path = os.path.join(self._cwd, "a.txt")
        await self.client.session_update(
            session_id,
            start_tool_call(
                "t2",
                "Edit a.txt",
                kind="edit",
                status="in_progress",
                locations=[ToolCallLocation(path=path, line=3)],
                raw_input={"path": path},
            ),
        )
        await self.client.session_update(
            session_id,
            update_tool_call(
                "t2", status="completed", content=[tool_diff_content(path, "new", "old")]
            ),
        )
        return PromptResponse(stop_reason="end_turn")

    async def _do_slow(self, session_id: str, rest: str) -> PromptResponse:
        cancelled = self._cancel[session_id]
        for index in range(2000):
            await self._say(session_id, f"slow {index}. ")
            try:
                await asyncio.wait_for(cancelled.wait(), 0.05)
            except TimeoutError:
                continue
            return PromptResponse(stop_reason="cancelled")
        return PromptResponse(stop_reason="end_turn")

    async def _do_write(self, session_id: str, rest: str) -> PromptResponse:
        path, _, text = rest.partition(" ")
        try:
            await self.client.write_text_file(
                session_id=session_id, path=os.path.join(self._cwd, path), content=text
            )
        except RequestError as error:
            await self._say(session_id, f"write failed: {error}")
            return PromptResponse(stop_reason="end_turn")
        await self._say(session_id, "wrote")
        return PromptResponse(stop_reason="end_turn")

    async def _do_read(self, session_id: str, rest: str) -> PromptResponse:
        path = rest if os.path.isabs(rest) else os.path.join(self._cwd, rest)
        try:
            answer = await self.client.read_text_file(session_id=session_id, path=path)
        except RequestError as error:
            await self._say(session_id, f"read failed: {error}")
            return PromptResponse(stop_reason="end_turn")
        await self._say(session_id, f"read: {answer.content}")
        return PromptResponse(stop_reason="end_turn")

    async def _do_unsupported(self, session_id: str, rest: str) -> PromptResponse:
        conn = self.client._conn  # type: ignore[attr-defined]  # a method the SDK does not wrap
        try:
            answer = await conn.send_request("elicitation/create", {"sessionId": session_id})
            await self._say(session_id, f"elicitation {answer.get('action')}. ")
        except RequestError as error:
            await self._say(session_id, f"elicitation error {error.code}. ")
        try:
            await self.client.ext_method("scripted/ping", {"x": 1})
        except RequestError as error:
            await self._say(session_id, f"ext error {error.code}")
        return PromptResponse(stop_reason="end_turn")

    async def _do_elicit(self, session_id: str, rest: str) -> PromptResponse:
        conn = self.client._conn  # type: ignore[attr-defined]  # the SDK does not wrap it
        schema = {
            "type": "object",
            "properties": {
                "name": {"type": "string", "title": "Name"},
                "ci": {"type": "boolean", "title": "Set up CI"},
            },
            "required": ["name"],
        }
        params = {
            "sessionId": session_id,
            "mode": "form",
            "message": "Set up the project?",
            "requestedSchema": schema,
        }
        answer = await conn.send_request("elicitation/create", params)
        await self._say(session_id, f"elicitation {json.dumps(answer, sort_keys=True)}")
        return PromptResponse(stop_reason="end_turn")

    async def _do_termstream(self, session_id: str, rest: str) -> PromptResponse:
        await self.client.session_update(
            session_id, start_tool_call("t4", "stream", kind="execute", status="pending")
        )
        line = (
            "printf first; i=0; while [ ! -e go ] && [ $i -lt 400 ]; "
            "do sleep 0.05; i=$((i+1)); done; printf second"
        )
        summary = await self._run(session_id, "t4", command=line)
        await self.client.session_update(session_id, update_tool_call("t4", status="completed"))
        await self._say(session_id, summary)
        return PromptResponse(stop_reason="end_turn")

    async def _do_notice(self, session_id: str, rest: str) -> PromptResponse:
        conn = self.client._conn  # type: ignore[attr-defined]  # shapes the SDK does not have
        updates = [
            {"sessionUpdate": "notice", "severity": "warning", "title": "Rate limited"},
            {"sessionUpdate": "compaction", "compactionId": "c1", "status": "in_progress"},
            {
                "sessionUpdate": "compaction_summary",
                "compactionId": "c1",
                "content": {"type": "text", "text": "summary"},
            },
            {"sessionUpdate": "compaction", "compactionId": "c1", "status": "completed"},
        ]
        for update in updates:
            await conn.send_notification(
                "session/update", {"sessionId": session_id, "update": update}
            )
        await self._say(session_id, "noticed")
        return PromptResponse(stop_reason="end_turn")

    async def _do_model(self, session_id: str, rest: str) -> PromptResponse:
        await self._say(session_id, f"model {self._model}")
        return PromptResponse(stop_reason="end_turn")

    async def _run(self, session_id: str, tool_id: str | None = None, **create: Any) -> str:
        """Create a terminal, wait for it, read it, release it; a summary line."""
        try:
            made = await self.client.create_terminal(session_id=session_id, **create)
        except RequestError as error:
            return f"terminal error {error.code} {error}"
        terminal_id = made.terminal_id
        if tool_id is not None:
            await self.client.session_update(
                session_id,
                update_tool_call(
                    tool_id, status="in_progress", content=[tool_terminal_ref(terminal_id)]
                ),
            )
        ended = await self.client.wait_for_terminal_exit(
            session_id=session_id, terminal_id=terminal_id
        )
        seen = await self.client.terminal_output(session_id=session_id, terminal_id=terminal_id)
        await self.client.release_terminal(session_id=session_id, terminal_id=terminal_id)
        return (
            f"exit {ended.exit_code} signal {ended.signal} truncated {seen.truncated} "
            f"output {seen.output!r}"
        )

    async def _do_term(self, session_id: str, rest: str) -> PromptResponse:
        await self._say(session_id, await self._run(session_id, command=rest))
        return PromptResponse(stop_reason="end_turn")

    async def _do_termargs(self, session_id: str, rest: str) -> PromptResponse:
        summary = await self._run(
            session_id,
            command="sh",
            args=["-c", 'printf "%s|%s" "$FOO" "$1"', "sh", "two words; $(no)"],
            env=[EnvVariable(name="FOO", value="bar")],
        )
        await self._say(session_id, summary)
        return PromptResponse(stop_reason="end_turn")

    async def _do_termcwd(self, session_id: str, rest: str) -> PromptResponse:
        await self._say(session_id, await self._run(session_id, command="pwd", cwd=rest))
        return PromptResponse(stop_reason="end_turn")

    async def _do_termlimit(self, session_id: str, rest: str) -> PromptResponse:
        line = "python3 -c \"import sys; sys.stdout.write('é' * 2999 + 'Z')\""
        summary = await self._run(session_id, command=line, output_byte_limit=int(rest))
        await self._say(session_id, summary)
        return PromptResponse(stop_reason="end_turn")

    async def _output_until(self, session_id: str, terminal_id: str, marker: str) -> str:
        for _ in range(400):  # 20 s at most
            seen = await self.client.terminal_output(session_id=session_id, terminal_id=terminal_id)
            if marker in seen.output:
                return seen.output
            await asyncio.sleep(0.05)
        raise RuntimeError(f"{marker!r} never appeared")

    async def _start_family(self, session_id: str, tail: str) -> tuple[str, str]:
        made = await self.client.create_terminal(
            session_id=session_id, command=f"sleep 300 & echo child $! pid $$; {tail}"
        )
        output = await self._output_until(session_id, made.terminal_id, "pid ")
        return made.terminal_id, output.strip()

    async def _do_termkill(self, session_id: str, rest: str) -> PromptResponse:
        terminal_id, family = await self._start_family(session_id, "sleep 300")
        await self._say(session_id, f"{family}. ")
        await self.client.kill_terminal(session_id=session_id, terminal_id=terminal_id)
        ended = await self.client.wait_for_terminal_exit(
            session_id=session_id, terminal_id=terminal_id
        )
        await self.client.release_terminal(session_id=session_id, terminal_id=terminal_id)
        await self._say(session_id, f"killed: exit {ended.exit_code} signal {ended.signal}")
        return PromptResponse(stop_reason="end_turn")

    async def _do_termbg(self, session_id: str, rest: str) -> PromptResponse:
        terminal_id, family = await self._start_family(session_id, "exit 7")
        await self._say(session_id, f"{family}. ")
        ended = await self.client.wait_for_terminal_exit(
            session_id=session_id, terminal_id=terminal_id
        )
        await self.client.release_terminal(session_id=session_id, terminal_id=terminal_id)
        await self._say(session_id, f"exit {ended.exit_code}")
        return PromptResponse(stop_reason="end_turn")

    async def _do_termhang(self, session_id: str, rest: str) -> PromptResponse:
        terminal_id, family = await self._start_family(session_id, "wait")
        await self._say(session_id, f"{family}. ")
        await self.client.wait_for_terminal_exit(session_id=session_id, terminal_id=terminal_id)
        return PromptResponse(stop_reason="end_turn")

    async def _do_termreleased(self, session_id: str, rest: str) -> PromptResponse:
        made = await self.client.create_terminal(session_id=session_id, command="true")
        await self.client.release_terminal(session_id=session_id, terminal_id=made.terminal_id)
        try:
            await self.client.terminal_output(session_id=session_id, terminal_id=made.terminal_id)
        except RequestError as error:
            await self._say(session_id, f"output error {error.code}")
        return PromptResponse(stop_reason="end_turn")

    async def _do_asked(self, session_id: str, rest: str) -> PromptResponse:
        raw_input = {"command": rest}
        await self.client.session_update(
            session_id,
            start_tool_call("t3", rest, kind="execute", status="pending", raw_input=raw_input),
        )
        answer = await self.client.request_permission(
            session_id=session_id,
            tool_call=ToolCallUpdate(tool_call_id="t3", title=rest, kind="execute"),
            options=OPTIONS,
        )
        outcome = answer.outcome
        if outcome.outcome != "selected" or outcome.option_id not in ("yes", "yes-all"):
            await self._say(session_id, "not allowed")
            return PromptResponse(stop_reason="end_turn")
        summary = await self._run(session_id, "t3", command=rest)
        await self.client.session_update(session_id, update_tool_call("t3", status="completed"))
        await self._say(session_id, summary)
        return PromptResponse(stop_reason="end_turn")

    async def _do_mode(self, session_id: str, rest: str) -> PromptResponse:
        self._mode = "plan"
        await self.client.session_update(session_id, update_current_mode("plan"))
        return PromptResponse(stop_reason="end_turn")

    async def _do_usage(self, session_id: str, rest: str) -> PromptResponse:
        await self.client.session_update(
            session_id, UsageUpdate(session_update="usage_update", used=1200, size=200000)
        )
        usage = Usage(total_tokens=1300, input_tokens=1000, output_tokens=300, thought_tokens=20)
        return PromptResponse(stop_reason="end_turn", usage=usage)

    async def _do_refuse(self, session_id: str, rest: str) -> PromptResponse:
        return PromptResponse(stop_reason="refusal")

    async def _do_maxtokens(self, session_id: str, rest: str) -> PromptResponse:
        await self._say(session_id, "partial")
        return PromptResponse(stop_reason="max_tokens")

    async def _do_noise(self, session_id: str, rest: str) -> PromptResponse:
        os.write(1, b"this is not json\n")
        await self._say(session_id, "after noise")
        return PromptResponse(stop_reason="end_turn")

    async def _do_die(self, session_id: str, rest: str) -> PromptResponse:
        await self._say(session_id, "dying")
        await asyncio.sleep(0.2)
        sys.stderr.write("scripted agent: goodbye\n")
        sys.stderr.flush()
        os._exit(3)

    async def _do_commands(self, session_id: str, rest: str) -> PromptResponse:
        commands = [
            AvailableCommand(name="review", description="Review the change"),
            AvailableCommand(name="plan", description="Make a plan"),
        ]
        await self.client.session_update(session_id, update_available_commands(commands))
        return PromptResponse(stop_reason="end_turn")

    async def _do_mcp(self, session_id: str, rest: str) -> PromptResponse:
        said = [server.model_dump(by_alias=True, exclude_none=True) for server in self._mcp_servers]
        await self._say(session_id, json.dumps(said, sort_keys=True))
        return PromptResponse(stop_reason="end_turn")

    async def _do_opened(self, session_id: str, rest: str) -> PromptResponse:
        await self._say(session_id, self._opened)
        return PromptResponse(stop_reason="end_turn")

    async def _do_unknown(self, session_id: str, rest: str) -> PromptResponse:
        await self.client.ext_notification("scripted/hello", {"n": 1})
        await self._say(session_id, "after unknown")
        return PromptResponse(stop_reason="end_turn")


def _route_set_model(agent: ScriptedAgent) -> None:
    """Add `session/set_model` (the unstable method the SDK dropped) to the agent's router."""
    from acp.agent import connection
    from acp.router import Route

    build = connection.build_agent_router

    def build_with_set_model(*args: Any, **kwargs: Any) -> Any:
        router = build(*args, **kwargs)
        router.add_route(Route(method="session/set_model", func=agent.set_model, kind="request"))
        return router

    connection.build_agent_router = build_with_set_model  # type: ignore[assignment]


async def main() -> None:
    agent = ScriptedAgent(parse_flags(sys.argv[1:]))
    _route_set_model(agent)
    # `session/resume` is still in the SDK's unstable set.
    await run_agent(agent, use_unstable_protocol=True)  # type: ignore[arg-type]


if __name__ == "__main__":
    asyncio.run(main())
