"""What corral asks of Copilot: session options, permission results, answers."""

from __future__ import annotations

from corral.pipeline.commands import McpServer
from corral.pipeline.events import (
    Choice,
    ChoicesAnswer,
    PermissionAnswer,
    PermissionChoice,
    Question,
    QuestionRequest,
    QuestionsAnswer,
    TextAnswer,
)
from corral.sources.copilot._params import (
    launch_argv,
    permission_result,
    session_options,
    user_input_response,
)

ENV = {
    "COPILOT_PROVIDER_BASE_URL": "http://127.0.0.1:9/v1",
    "COPILOT_PROVIDER_API_KEY": "any",
    "COPILOT_MODEL": "any",
}


def test_copilot_runs_its_sdk_server_on_stdio_with_the_extra_args_last() -> None:
    assert launch_argv("copilot", ["--x"]) == [
        "copilot",
        "--headless",
        "--stdio",
        "--no-auto-update",
        "--log-level",
        "error",
        "--x",
    ]


def test_a_session_asks_for_every_permission_and_question() -> None:
    options = session_options(cwd="/w", env={}, mcp_servers=())
    assert options["requestPermission"] is True and options["requestUserInput"] is True
    assert options["workingDirectory"] == "/w"
    assert "provider" not in options


def test_the_environment_provider_becomes_the_session_provider() -> None:
    options = session_options(cwd="/w", env=ENV, mcp_servers=())
    assert options["provider"] == {
        "type": "openai",
        "baseUrl": "http://127.0.0.1:9/v1",
        "apiKey": "any",
    }
    assert options["model"] == "any"


def test_mcp_servers_are_passed_with_all_their_tools() -> None:
    stdio = McpServer(name="fs", transport="Stdio", command="mcp-fs", args=("--ro",))
    http = McpServer(name="web", transport="Http", url="http://127.0.0.1:1/mcp")
    options = session_options(cwd="/w", env={}, mcp_servers=(stdio, http))
    assert options["mcpServers"]["fs"] == {
        "type": "local",
        "command": "mcp-fs",
        "args": ["--ro"],
        "env": {},
        "tools": ["*"],
    }
    assert options["mcpServers"]["web"]["type"] == "http"


def test_allow_for_the_session_carries_what_it_approves() -> None:
    approval = {"kind": "commands", "commandIdentifiers": ["ls"]}
    result = permission_result(PermissionAnswer(PermissionChoice.ALLOW_ALWAYS), None, approval)
    assert result == {"kind": "approve-for-session", "approval": approval}


def test_allow_always_without_an_approval_allows_once() -> None:
    result = permission_result(PermissionAnswer(PermissionChoice.ALLOW_ALWAYS), None)
    assert result["kind"] == "approve-once"


def test_a_deny_carries_the_message_as_feedback_and_a_withdrawal_says_nobody_answers() -> None:
    denied = permission_result(PermissionAnswer(PermissionChoice.DENY_ONCE), "not now")
    assert denied == {"kind": "reject", "feedback": "not now"}
    assert permission_result(None, None) == {"kind": "user-not-available"}


def test_a_chosen_choice_answers_with_its_label() -> None:
    question = Question(id="answer", text="Go?", choices=(Choice(id="0", label="Yes"),))
    request = QuestionRequest(id="q", questions=(question,))
    chosen = user_input_response(request, QuestionsAnswer((ChoicesAnswer(("0",)),)))
    typed = user_input_response(request, QuestionsAnswer((TextAnswer("maybe"),)))
    assert chosen == {"answer": "Yes", "wasFreeform": False}
    assert typed == {"answer": "maybe", "wasFreeform": True}
