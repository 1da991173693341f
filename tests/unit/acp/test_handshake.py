"""The ACP handshake's decisions, sans-IO: capabilities, MCP servers, logins.

The peer-facing steps run against `RecordingPeer`, a fake with canned
answers that records every request it is sent (the SDK-based agent covers
the same steps over a real subprocess in tests/integration).
"""

from __future__ import annotations

from typing import Any, cast

import pytest
from corral.pipeline.commands import McpServer
from corral.pipeline.driver import LaunchSpec
from corral.pipeline.errors import CorralError, ErrorKind
from corral.pipeline.events import Authenticated, Capability, McpTransport, OtherAuth
from corral.sources._jsonrpc import JsonRpcPeer, RpcError
from corral.sources.acp._catalog import RECIPES
from corral.sources.acp._handshake import (
    AuthPolicy,
    details_of,
    mcp_servers,
    open_session,
    pick_method,
)

GEMINI = RECIPES["gemini"].auth

GEMINI_METHODS = {
    "authMethods": [
        {"id": "oauth-personal", "name": "Log in with Google"},
        {"id": "gemini-api-key", "name": "Use Gemini API key"},
        {"id": "vertex-ai", "name": "Vertex AI"},
    ]
}


class RecordingPeer:
    """Answers each method from `answers` (a result or an RpcError), recording the calls."""

    def __init__(self, answers: dict[str, Any]) -> None:
        self.answers = answers
        self.calls: list[tuple[str, dict[str, Any]]] = []

    async def request(self, method: str, params: dict[str, Any]) -> Any:
        self.calls.append((method, params))
        answer = self.answers[method]
        if isinstance(answer, RpcError):
            raise answer
        return answer


def test_session_resume_alone_is_enough_to_resume() -> None:
    init = {"agentCapabilities": {"sessionCapabilities": {"resume": {}}}}
    assert Capability.RESUME in details_of(init).capabilities
    assert Capability.RESUME not in details_of({"agentCapabilities": {}}).capabilities


def test_mcp_transports_are_stdio_plus_what_the_agent_advertises() -> None:
    init = {"agentCapabilities": {"mcpCapabilities": {"http": True, "sse": False}}}
    transports = details_of(init).capabilities.mcp_transports
    assert transports == (McpTransport.STDIO, McpTransport.HTTP)


def test_mcp_servers_take_the_acp_shapes() -> None:
    details = details_of({"agentCapabilities": {"mcpCapabilities": {"sse": True}}})
    servers = [
        McpServer(name="local", transport="Stdio", command="mcp", env=(("A", "1"),)),
        McpServer(name="remote", transport="Sse", url="http://x/sse", headers=(("H", "2"),)),
    ]
    assert mcp_servers(servers, details) == [
        {"name": "local", "command": "mcp", "args": [], "env": [{"name": "A", "value": "1"}]},
        {
            "type": "sse",
            "name": "remote",
            "url": "http://x/sse",
            "headers": [{"name": "H", "value": "2"}],
        },
    ]


def test_an_mcp_transport_not_advertised_is_unsupported() -> None:
    details = details_of({"agentCapabilities": {}})
    with pytest.raises(CorralError) as refused:
        mcp_servers([McpServer(name="remote", transport="Http", url="http://x")], details)
    assert refused.value.kind is ErrorKind.UNSUPPORTED_FEATURE
    assert refused.value.fields == {
        "feature": "McpServers",
        "option": "mcp_servers",
        "transport": "Http",
    }


def test_gemini_authenticates_eagerly_with_its_api_key() -> None:
    environ = {"GEMINI_API_KEY": "k"}
    assert pick_method(GEMINI_METHODS, GEMINI, environ, eager=True) == "gemini-api-key"


def test_no_eager_login_without_the_variable() -> None:
    assert pick_method(GEMINI_METHODS, GEMINI, {}, eager=True) is None


def test_a_lazy_choice_is_not_taken_eagerly() -> None:
    environ = {"GOOGLE_API_KEY": "k"}
    assert pick_method(GEMINI_METHODS, GEMINI, environ, eager=True) is None
    assert pick_method(GEMINI_METHODS, GEMINI, environ, eager=False) == "vertex-ai"


def test_an_agent_run_login_is_not_used_where_it_would_wait_for_a_person() -> None:
    assert pick_method(GEMINI_METHODS, GEMINI, {}, eager=False) is None
    assert pick_method(GEMINI_METHODS, AuthPolicy(), {}, eager=False) == "oauth-personal"


def test_an_env_var_method_is_usable_only_with_all_its_variables() -> None:
    init = {
        "authMethods": [
            {"id": "keys", "type": "env_var", "vars": [{"name": "A"}, {"name": "B"}]},
        ]
    }
    assert pick_method(init, AuthPolicy(), {"A": "1"}, eager=False) is None
    assert pick_method(init, AuthPolicy(), {"A": "1", "B": "2"}, eager=False) == "keys"


async def test_an_eager_login_is_sent_before_session_new() -> None:
    peer = RecordingPeer(
        {
            "initialize": {"protocolVersion": 1, **GEMINI_METHODS},
            "authenticate": {},
            "session/new": {"sessionId": "g1"},
        }
    )
    opened = await open_session(
        cast(JsonRpcPeer, peer),
        launch=LaunchSpec(session_id="s1", executable="gemini", dir="/w"),
        auth=GEMINI,
        environ={"GEMINI_API_KEY": "k"},
        terminal=False,
    )
    assert [method for method, _ in peer.calls] == ["initialize", "authenticate", "session/new"]
    assert peer.calls[1][1] == {"methodId": "gemini-api-key"}
    assert opened.details.auth == Authenticated(kind=OtherAuth("gemini-api-key"))


async def test_auth_required_with_nothing_usable_names_the_offered_methods() -> None:
    peer = RecordingPeer(
        {
            "initialize": {"protocolVersion": 1, **GEMINI_METHODS},
            "session/new": RpcError(-32000, "Authentication required"),
        }
    )
    with pytest.raises(CorralError) as failed:
        await open_session(
            cast(JsonRpcPeer, peer),
            launch=LaunchSpec(session_id="s1", executable="gemini", dir="/w"),
            auth=GEMINI,
            environ={},
            terminal=False,
        )
    assert failed.value.kind is ErrorKind.AUTH_REQUIRED
    assert "Log in with Google, Use Gemini API key, Vertex AI" in failed.value.message
    assert "authenticate" not in [method for method, _ in peer.calls]
