"""ACP requests, sans agent: decisions bound to what was judged, bounds, no crash.

`Asks` is pure data (no event loop); `AgentRequests` runs against a
recording fake peer that keeps every reply it was asked to send.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest
from corral.pipeline.commands import PermissionMode
from corral.pipeline.driver import Emitted, RequestAsked
from corral.pipeline.events import (
    Diagnostic,
    DiagnosticLevel,
    PathInput,
    PermissionAnswer,
    PermissionChoice,
    PermissionRequest,
    ToolKind,
)
from corral.pipeline.policy import PolicyContext
from corral.pipeline.rules import explain, load_preset, parse_policy
from corral.sources._jsonrpc import RpcRequest, unreadable_request_id
from corral.sources.acp import AcpReplay
from corral.sources.acp._asks import MAX_OPEN_ASKS, Reply, RunCommand
from corral.sources.acp._requests import AgentRequests
from corral.sources.acp._terminal import CommandSpec, changes_what_runs
from corral.sources.acp._translate import Translator

OPTIONS = [
    {"optionId": "yes", "kind": "allow_once"},
    {"optionId": "no", "kind": "reject_once"},
]


def ask(translator: Translator, command: str, rpc_id: int = 1, tool_id: str = "t1") -> str:
    translator.update(
        {
            "sessionUpdate": "tool_call",
            "toolCallId": tool_id,
            "title": command,
            "kind": "execute",
            "rawInput": {"command": command},
        }
    )
    events = translator.asks.permission(
        rpc_id, {"toolCall": {"toolCallId": tool_id}, "options": OPTIONS}
    )
    asked = events[-1]
    assert isinstance(asked, RequestAsked)
    return asked.request.id


def allow(translator: Translator, request_id: str) -> object:
    return translator.asks.answer(request_id, PermissionAnswer(PermissionChoice.ALLOW_ONCE))


def spec(line: str, *env: tuple[str, str]) -> CommandSpec:
    return CommandSpec(line=line, cwd="/w", env=env)


def test_an_allow_applies_to_the_tool_as_judged() -> None:
    translator = Translator()
    request_id = ask(translator, "echo hi")
    translator.update(
        {"sessionUpdate": "tool_call_update", "toolCallId": "t1", "status": "in_progress"}
    )
    assert allow(translator, request_id) == Reply(
        1, {"outcome": {"outcome": "selected", "optionId": "yes"}}
    )


@pytest.mark.parametrize(
    "change",
    [
        {"rawInput": {"command": "rm -rf ~"}},
        {"title": "rm -rf ~"},
        {"kind": "delete"},
    ],
)
def test_an_allow_does_not_carry_over_to_a_changed_tool(change: dict[str, Any]) -> None:
    translator = Translator()
    request_id = ask(translator, "echo hi")
    translator.update({"sessionUpdate": "tool_call_update", "toolCallId": "t1", **change})
    refused = allow(translator, request_id)
    assert isinstance(refused, Reply)
    assert refused.result == {"outcome": {"outcome": "selected", "optionId": "no"}}
    assert refused.warning is not None and "changed tool t1" in refused.warning
    # Neither the judged line nor the changed one left a grant.
    for line in ("echo hi", "rm -rf ~"):
        assert isinstance(translator.asks.command(2, spec(line)), list)


def test_the_grant_is_the_judged_line_not_the_line_at_answer_time() -> None:
    translator = Translator()
    request_id = ask(translator, "echo hi")
    allow(translator, request_id)
    assert isinstance(translator.asks.command(2, spec("echo hi")), RunCommand)


def test_a_grant_is_not_used_by_a_command_that_changes_what_runs() -> None:
    translator = Translator()
    allow(translator, ask(translator, "make"))
    asked = translator.asks.command(2, spec("make", ("PATH", "/tmp/evil")))
    assert isinstance(asked, list)
    request = asked[0].request  # type: ignore[union-attr]
    assert isinstance(request, PermissionRequest)
    assert request.options == (PermissionChoice.ALLOW_ALWAYS, PermissionChoice.DENY_ONCE)
    assert request.tool.raw is not None and request.tool.raw.input["env"] == {"PATH": "/tmp/evil"}  # type: ignore[index]
    assert isinstance(translator.asks.command(3, spec("make")), RunCommand)  # still there


@pytest.mark.parametrize(
    ("name", "changes"),
    [
        ("PATH", True),
        ("LD_PRELOAD", True),
        ("PYTHONPATH", True),
        ("GIT_SSH_COMMAND", True),
        ("BASH_ENV", True),
        ("ENV", True),
        ("NODE_OPTIONS", True),
        ("PERL5OPT", True),
        ("RUBYOPT", True),
        ("CLAUDECODE", False),
        ("FOO", False),
        ("TERM", False),
    ],
)
def test_variables_that_change_what_runs(name: str, changes: bool) -> None:
    assert changes_what_runs(name) is changes


def test_a_command_that_changes_what_runs_is_never_auto_allowed_by_a_preset() -> None:
    translator = Translator()
    [asked] = translator.asks.command(1, spec("make", ("LD_PRELOAD", "/tmp/x.so")))  # type: ignore[misc]
    for preset in ("AutoApprove", "AcceptEdits", "Ask"):
        verdict = load_preset(preset).decide(asked.request, context(preset))
        assert not hasattr(verdict, "answer"), preset  # forwarded to the app


def context(mode: str) -> PolicyContext:
    return PolicyContext(agent_id="acp", session_dir="/w", mode=PermissionMode(mode))


def test_a_rule_can_still_let_a_secret_read_through() -> None:
    allowing = parse_policy(
        'version = 1\nmode = "Ask"\n[[rule]]\nid = "env-ok"\ntool = "Read"\npath = ".env"\n'
        'action = "allow"\noverride_guards = ["secret-read"]\n'
    )
    explained = explain(allowing, "Read", path="/w/.env", session_dir="/w")
    assert explained.verdict.decided_by == "rule:env-ok"  # type: ignore[union-attr]
    asking = parse_policy(
        'version = 1\nmode = "Ask"\n[[rule]]\nid = "env-ask"\ntool = "Read"\npath = ".env"\n'
        'action = "ask"\n'
    )
    assert not hasattr(explain(asking, "Read", path="/w/.env", session_dir="/w").verdict, "answer")
    denied = explain(load_preset("Ask"), "Read", path="/w/.env", session_dir="/w").verdict
    assert denied.decided_by == "guard:secret-read"  # type: ignore[union-attr]


def test_open_requests_are_bounded() -> None:
    translator = Translator()
    for index in range(MAX_OPEN_ASKS):
        assert not translator.asks.full()
        ask(translator, f"echo {index}", rpc_id=index, tool_id=f"t{index}")
    assert translator.asks.full()


class RecordingPeer:
    """The agent's side of the wire: keeps what corral answered."""

    def __init__(self) -> None:
        self.replies: list[tuple[int | str, str, Any]] = []

    async def respond(self, message_id: int | str, result: Any) -> None:
        self.replies.append((message_id, "result", result))

    async def respond_error(self, message_id: int | str, code: int, message: str) -> None:
        self.replies.append((message_id, "error", (code, message)))


class BrokenAsks:
    def permission(self, rpc_id: int | str, params: Any) -> list[Any]:
        raise KeyError("a bug of ours")

    def full(self) -> bool:
        return False

    def open_ids(self) -> list[str]:
        return []


def test_an_unexpected_exception_is_an_internal_error_and_a_warning(tmp_path: Path) -> None:
    translator = Translator()
    translator.asks = BrokenAsks()  # type: ignore[assignment]
    peer = RecordingPeer()
    requests = AgentRequests(peer, str(tmp_path), translator)  # type: ignore[arg-type]
    request = RpcRequest(7, "session/request_permission", {"toolCall": {}})
    events = asyncio.run(requests.agent_request(request))
    assert peer.replies == [
        (
            7,
            "error",
            (
                -32603,
                "corral failed to serve session/request_permission: KeyError: 'a bug of ours'",
            ),
        )
    ]
    [warning] = events
    assert isinstance(warning, Emitted) and isinstance(warning.kind, Diagnostic)
    assert warning.kind.level is DiagnosticLevel.WARNING
    assert warning.extensions["acp/request_failed"] == "session/request_permission"


def test_past_the_bound_a_request_is_refused_with_one_warning_per_crossing(
    tmp_path: Path,
) -> None:
    translator = Translator()
    peer = RecordingPeer()
    requests = AgentRequests(peer, str(tmp_path), translator)  # type: ignore[arg-type]
    params = {"toolCall": {"title": "x", "kind": "execute"}, "options": OPTIONS}

    async def flood() -> list[Any]:
        events = []
        for index in range(MAX_OPEN_ASKS + 100):
            request = RpcRequest(index, "session/request_permission", params)
            events += await requests.agent_request(request)
        return events

    events = asyncio.run(flood())
    asked = [e for e in events if isinstance(e, RequestAsked)]
    warned = [e for e in events if isinstance(e, Emitted) and isinstance(e.kind, Diagnostic)]
    assert len(asked) == MAX_OPEN_ASKS
    assert len(warned) == 1 and warned[0].extensions["acp/limit"] == "open_requests"
    errors = [reply for reply in peer.replies if reply[1] == "error"]
    assert len(errors) == 100 and all(code == -32603 for _, _, (code, _) in errors)
    # Answering one makes room again.
    allow(translator, asked[0].request.id)
    more = asyncio.run(
        requests.agent_request(RpcRequest("again", "session/request_permission", params))
    )
    assert isinstance(more[-1], RequestAsked)


def test_a_failure_after_the_answer_is_an_error_to_the_agent_and_a_warning(
    tmp_path: Path,
) -> None:
    peer = RecordingPeer()
    requests = AgentRequests(peer, str(tmp_path), Translator())  # type: ignore[arg-type]
    pushed: list[Any] = []

    async def push(events: list[Any]) -> None:
        pushed.extend(events)

    async def broken() -> None:
        raise OSError("the disk went away")

    asyncio.run(requests.guarded(5, "write", broken(), push))
    assert peer.replies == [
        (5, "error", (-32603, "corral failed to serve write: OSError: the disk went away"))
    ]
    [warning] = pushed
    assert warning.extensions["acp/request_failed"] == "write"


@pytest.mark.parametrize(
    ("prefix", "request_id"),
    [
        ('{"jsonrpc":"2.0","id":12,"method":"fs/read_text_file","params":{"path":"\\ud800', 12),
        ('{"jsonrpc":"2.0","id":"r-1","method":"x","params":{', "r-1"),
        ('{"method":"x","id":-3,', -3),
        ('{"jsonrpc":"2.0","id":12,"result":{"x":"\\ud800', None),  # a response, not a request
        ('{"jsonrpc":"2.0","method":"session/update","params":{', None),  # a notification
        ("not json at all", None),
    ],
)
def test_the_id_of_a_request_json_cannot_read(prefix: str, request_id: object) -> None:
    assert unreadable_request_id(prefix) == request_id


def test_a_recorded_read_replays_as_the_read_request_it_was_live() -> None:
    replay = AcpReplay()
    read = {"jsonrpc": "2.0", "id": 4, "method": "fs/read_text_file", "params": {"path": "/w/a"}}
    answered = {"jsonrpc": "2.0", "id": 4, "result": {"content": "text"}}
    wire = b"".join(json.dumps(m).encode() + b"\n" for m in ({"in": read}, {"out": answered}))
    [asked] = replay.feed(wire)
    assert isinstance(asked, RequestAsked) and isinstance(asked.request, PermissionRequest)
    assert asked.request.tool.kind is ToolKind.READ
    assert asked.request.tool.input == PathInput("/w/a")
    assert replay.translator.asks.open_ids() == []  # the recorded answer settled it
