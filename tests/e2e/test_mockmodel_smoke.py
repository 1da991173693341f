"""Each real agent CLI, in its simplest mode, gets the mock model's answers.

What this proves: the pinned CLI installs, `AgentSandbox` points it at the
mock (config files and env), the mock speaks that CLI's model API well
enough for a plain answer and for a shell-tool round trip (tool call →
command runs → tool result → final text quoting the command's output).

The five CLIs with a one-shot mode run it (`claude -p`, `codex exec`,
`gemini -p`, `opencode run`, `copilot -p`); the two ACP adapters get a
minimal ACP client (`initialize`, `session/new`, `session/prompt`). Every
wait is bounded: process exit or a JSON-RPC answer, with a timeout. A CLI
that cannot be installed skips with the reason.
"""

from __future__ import annotations

import json
import os
import queue
import signal
import subprocess
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from tests.support.mockmodel import MockModelServer
from tests.support.realagents import (
    AgentName,
    AgentSandbox,
    ensure_installed,
    require_agent,
)

pytestmark = pytest.mark.e2e

RUN_TIMEOUT_S = 180.0
ECHO_PROMPT = "CORRAL_ECHO hi"
ECHO_ANSWER = "You said: CORRAL_ECHO hi"
TOOL_PROMPT = "CORRAL_TOOL: echo corral-ok"
TOOL_ANSWER = "Tool said: corral-ok"


@pytest.fixture
def mock() -> Iterator[MockModelServer]:
    with MockModelServer() as server:
        yield server


def make_sandbox(tmp_path: Path, mock: MockModelServer, agent: AgentName) -> AgentSandbox:
    claude = ensure_installed("claude") if agent == "claude-acp" else None
    return AgentSandbox(
        root=tmp_path, model_url=mock.url, permission="allow", claude_executable=claude
    )


@dataclass(frozen=True)
class Finished:
    returncode: int
    stdout: str
    stderr: str


def run_to_exit(argv: list[str], sandbox: AgentSandbox, agent: AgentName) -> Finished:
    """Run in its own process group; on timeout the whole group is killed."""
    process = subprocess.Popen(
        argv,
        env=sandbox.env(agent),
        cwd=sandbox.workdir,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    try:
        stdout, stderr = process.communicate(timeout=RUN_TIMEOUT_S)
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, signal.SIGKILL)
        stdout, stderr = process.communicate()
        pytest.fail(f"{agent} did not exit within {RUN_TIMEOUT_S}s\n{stdout[-2000:]}\n{stderr}")
    return Finished(process.returncode, stdout, stderr)


def json_lines(stdout: str) -> Iterator[dict[str, Any]]:
    for line in stdout.split("\n"):
        if line.startswith("{"):
            decoded = json.loads(line)
            if isinstance(decoded, dict):
                yield decoded


def claude_answer(stdout: str) -> str:
    result = json.loads(stdout)
    assert result["is_error"] is False, result  # `subtype` says success even on errors
    return str(result["result"])


def codex_answer(stdout: str) -> str:
    items = [e["item"] for e in json_lines(stdout) if e.get("type") == "item.completed"]
    return "".join(item["text"] for item in items if item["type"] == "agent_message")


def gemini_answer(stdout: str) -> str:
    events = list(json_lines(stdout))
    return "".join(
        e["content"] for e in events if e.get("type") == "message" and e["role"] == "assistant"
    )


def opencode_answer(stdout: str) -> str:
    events = list(json_lines(stdout))
    return "".join(e["part"]["text"] for e in events if e.get("type") == "text")


def copilot_answer(stdout: str) -> str:
    events = list(json_lines(stdout))
    return "".join(e["data"]["content"] for e in events if e.get("type") == "assistant.message")


ONESHOT: dict[AgentName, Callable[[str], str]] = {
    "claude": claude_answer,
    "codex": codex_answer,
    "gemini": gemini_answer,
    "opencode": opencode_answer,
    "copilot": copilot_answer,
}


@pytest.mark.parametrize("agent", list(ONESHOT))
def test_oneshot_answer_comes_from_the_mock(
    agent: AgentName, tmp_path: Path, mock: MockModelServer
) -> None:
    executable = require_agent(agent)
    sandbox = make_sandbox(tmp_path, mock, agent)
    finished = run_to_exit(sandbox.oneshot_argv(agent, executable, ECHO_PROMPT), sandbox, agent)
    assert finished.returncode == 0, finished.stderr[-3000:]
    assert ECHO_ANSWER in ONESHOT[agent](finished.stdout)
    assert any(r.reply == "text" for r in mock.requests())


@pytest.mark.parametrize("agent", list(ONESHOT))
def test_oneshot_shell_tool_round_trip(
    agent: AgentName, tmp_path: Path, mock: MockModelServer
) -> None:
    executable = require_agent(agent)
    sandbox = make_sandbox(tmp_path, mock, agent)
    argv = sandbox.oneshot_argv(agent, executable, TOOL_PROMPT, allow_tools=True)
    finished = run_to_exit(argv, sandbox, agent)
    assert finished.returncode == 0, finished.stderr[-3000:]
    assert TOOL_ANSWER in ONESHOT[agent](finished.stdout)
    call = mock.wait_for_request(lambda r: r.reply == "shell", timeout=1)
    assert "echo corral-ok" in (call.answer or "")


class AcpClient:
    """A minimal ACP client over a subprocess's stdio (newline-delimited JSON-RPC).

    A thread moves stdout lines into a queue; `call` sends a request and
    reads messages until its answer arrives, collecting `session/update`
    notifications and allowing every `session/request_permission` (the
    option is picked by `kind`, as ids differ per agent).
    """

    def __init__(self, argv: list[str], env: dict[str, str], cwd: Path) -> None:
        self.process = subprocess.Popen(
            argv,
            env=env,
            cwd=cwd,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            start_new_session=True,
        )
        self.lines: queue.Queue[bytes | None] = queue.Queue(maxsize=10_000)
        self.updates: list[dict[str, Any]] = []
        self.non_json_lines = 0
        self._next_id = 0
        self._pump = threading.Thread(target=self._read_stdout, daemon=True)
        self._pump.start()

    def _read_stdout(self) -> None:
        assert self.process.stdout is not None
        for line in self.process.stdout:
            self.lines.put(line)
        self.lines.put(None)  # end of stream, explicit

    def _send(self, message: dict[str, Any]) -> None:
        assert self.process.stdin is not None
        self.process.stdin.write(json.dumps({"jsonrpc": "2.0", **message}).encode() + b"\n")
        self.process.stdin.flush()

    def call(self, method: str, params: dict[str, Any], timeout: float = 120.0) -> Any:
        self._next_id += 1
        request_id = self._next_id
        self._send({"id": request_id, "method": method, "params": params})
        while True:
            try:
                line = self.lines.get(timeout=timeout)
            except queue.Empty:
                raise AssertionError(f"no answer to {method} within {timeout}s") from None
            if line is None:
                raise AssertionError(f"agent closed stdout while waiting for {method}")
            try:
                message = json.loads(line)
            except ValueError:
                self.non_json_lines += 1
                continue
            if "method" in message:
                self._on_agent_message(message)
            elif message.get("id") == request_id:
                assert "error" not in message, message
                return message["result"]

    def _on_agent_message(self, message: dict[str, Any]) -> None:
        if message["method"] == "session/update":
            self.updates.append(message["params"]["update"])
        elif message["method"] == "session/request_permission":
            options = message["params"]["options"]
            chosen = next(o for o in options if o["kind"] in ("allow_once", "allow_always"))
            outcome = {"outcome": "selected", "optionId": chosen["optionId"]}
            self._send({"id": message["id"], "result": {"outcome": outcome}})
        elif "id" in message:
            error = {"code": -32601, "message": "not supported by the smoke test"}
            self._send({"id": message["id"], "error": error})

    def agent_text(self) -> str:
        chunks = [u for u in self.updates if u.get("sessionUpdate") == "agent_message_chunk"]
        return "".join(c["content"].get("text", "") for c in chunks)

    def close(self) -> None:
        # The adapters do not exit on stdin EOF: end the whole process group.
        if self.process.poll() is None:
            os.killpg(self.process.pid, signal.SIGTERM)
            try:
                self.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                os.killpg(self.process.pid, signal.SIGKILL)
                self.process.wait()
        self._pump.join(timeout=10)


def acp_prompt(agent: AgentName, sandbox: AgentSandbox, executable: Path, text: str) -> AcpClient:
    client = AcpClient(sandbox.wire_argv(agent, executable), sandbox.env(agent), sandbox.workdir)
    try:
        capabilities = {"fs": {"readTextFile": False, "writeTextFile": False}, "terminal": False}
        client.call("initialize", {"protocolVersion": 1, "clientCapabilities": capabilities})
        session = client.call("session/new", {"cwd": str(sandbox.workdir), "mcpServers": []})
        prompt = [{"type": "text", "text": text}]
        result = client.call(
            "session/prompt", {"sessionId": session["sessionId"], "prompt": prompt}
        )
        assert result["stopReason"] == "end_turn"
    finally:
        client.close()
    return client


ACP_ADAPTERS: list[AgentName] = ["claude-acp", "codex-acp"]


@pytest.mark.parametrize("agent", ACP_ADAPTERS)
def test_acp_adapter_answer_comes_from_the_mock(
    agent: AgentName, tmp_path: Path, mock: MockModelServer
) -> None:
    executable = require_agent(agent)
    client = acp_prompt(agent, make_sandbox(tmp_path, mock, agent), executable, ECHO_PROMPT)
    assert client.agent_text() == ECHO_ANSWER


@pytest.mark.parametrize("agent", ACP_ADAPTERS)
def test_acp_adapter_shell_tool_round_trip(
    agent: AgentName, tmp_path: Path, mock: MockModelServer
) -> None:
    executable = require_agent(agent)
    client = acp_prompt(agent, make_sandbox(tmp_path, mock, agent), executable, TOOL_PROMPT)
    assert client.agent_text() == TOOL_ANSWER
    kinds = [u.get("sessionUpdate") for u in client.updates]
    assert "tool_call" in kinds
    assert "tool_call_update" in kinds
