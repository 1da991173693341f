"""What corral asks of `copilot --headless`: launch line, session options, answers.

Pure functions. The launch line starts Copilot's SDK server on stdio; the
session options put every permission and every question through corral
(`requestPermission`, `requestUserInput`: the most asking setting) and carry
the bring-your-own-key provider when the environment configures one.

Why the provider is repeated here: the interactive CLI reads
`COPILOT_PROVIDER_BASE_URL` and friends from its environment, but sessions
created over the SDK wire do not (with `COPILOT_OFFLINE=true` they fail
with "No GitHub OAuth token or Copilot HMAC key provided"). So corral reads
the same variables from the agent's environment and passes them as the
session's `provider`, as the Copilot SDK does.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from ...pipeline.commands import McpServer
from ...pipeline.events import (
    ChoicesAnswer,
    PermissionAnswer,
    PermissionChoice,
    QuestionRequest,
    QuestionsAnswer,
    TextAnswer,
)
from .._mcp import mcp_entry

__all__ = [
    "BYPASS_ENV",
    "launch_argv",
    "permission_result",
    "session_options",
    "user_input_response",
]

# Copilot's own "allow everything" switch: never passed on, so corral decides.
BYPASS_ENV = ("COPILOT_ALLOW_ALL",)

_PROVIDER_ENV = {
    "COPILOT_PROVIDER_TYPE": "type",
    "COPILOT_PROVIDER_BASE_URL": "baseUrl",
    "COPILOT_PROVIDER_API_KEY": "apiKey",
    "COPILOT_PROVIDER_BEARER_TOKEN": "bearerToken",
    "COPILOT_PROVIDER_WIRE_API": "wireApi",
    "COPILOT_PROVIDER_TRANSPORT": "transport",
    "COPILOT_PROVIDER_MODEL_ID": "modelId",
    "COPILOT_PROVIDER_WIRE_MODEL": "wireModel",
}


def launch_argv(executable: str, extra: Sequence[str]) -> list[str]:
    return [executable, "--headless", "--stdio", "--no-auto-update", "--log-level", "error", *extra]


def provider(env: Mapping[str, str]) -> dict[str, str] | None:
    """The BYOK provider the environment configures, in the SDK's wire shape."""
    if not env.get("COPILOT_PROVIDER_BASE_URL"):
        return None
    wire = {key: env[name] for name, key in _PROVIDER_ENV.items() if env.get(name)}
    wire.setdefault("type", "openai")
    return wire


def _mcp(server: McpServer) -> dict[str, Any]:
    return {**mcp_entry(server, local="local"), "tools": ["*"]}


def session_options(
    *, cwd: str, env: Mapping[str, str], mcp_servers: Sequence[McpServer]
) -> dict[str, Any]:
    """`session.create` / `session.resume` params (without `sessionId`)."""
    options: dict[str, Any] = {
        "clientName": "corral",
        "workingDirectory": cwd,
        "requestPermission": True,
        "requestUserInput": True,
        "streaming": True,
        "envValueMode": "direct",
    }
    configured = provider(env)
    if configured is not None:
        options["provider"] = configured
    if env.get("COPILOT_MODEL"):
        options["model"] = env["COPILOT_MODEL"]
    if mcp_servers:
        options["mcpServers"] = {server.name: _mcp(server) for server in mcp_servers}
    return options


def permission_result(
    answer: PermissionAnswer | None,
    message: str | None,
    approval: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """`handlePendingPermissionRequest`'s `result`; None means withdrawn (nobody answers).

    `approval` is what an "allow for the session" covers (the request's
    `copilot/session_approval`); without one, allowing always allows once.
    """
    if answer is None:
        return {"kind": "user-not-available"}
    match answer.choice:
        case PermissionChoice.ALLOW_ALWAYS if approval is not None:
            return {"kind": "approve-for-session", "approval": dict(approval)}
        case PermissionChoice.ALLOW_ONCE | PermissionChoice.ALLOW_ALWAYS:
            return {"kind": "approve-once", "approvedInteractively": True}
    result: dict[str, Any] = {"kind": "reject"}
    if message:
        result["feedback"] = message
    return result


def user_input_response(request: QuestionRequest, answer: QuestionsAnswer) -> dict[str, Any]:
    """The `{answer, wasFreeform}` Copilot expects for its single question."""
    if not answer.answers:
        return {"answer": "", "wasFreeform": True}
    first = answer.answers[0]
    if isinstance(first, TextAnswer):
        return {"answer": first.text, "wasFreeform": True}
    assert isinstance(first, ChoicesAnswer)
    labels = {choice.id: choice.label for choice in request.questions[0].choices}
    chosen = [labels.get(choice, choice) for choice in first.choices]
    return {"answer": ", ".join(chosen), "wasFreeform": False}
