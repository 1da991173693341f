"""`plan_usage` against the real Codex and Claude Code CLIs, offline.

No test here can log in to ChatGPT or claude.ai, so none sees a plan's
windows; what the real CLIs do say offline is pinned instead (Codex
0.171.0, Claude Code 2.1.332, checked by hand first):

- Codex on the mock model server's provider (the sandbox's config.toml):
  `account/read` has no account and needs no OpenAI auth → no plan;
- Codex with no provider and no login: `requiresOpenaiAuth` → AuthRequired;
- Codex on an API key (`auth.json`): an `apiKey` account → no plan; and
  the CLI itself refuses `account/rateLimits/read` there ("chatgpt
  authentication required"), the fact that lets corral decide from
  `account/read` alone;
- Claude Code on an API key: `get_usage` says `rate_limits_available:
  false` → no plan; with no key and no login → AuthRequired.

Each runs the in-process Runtime with the sandbox's environment (built from
scratch: no credential of the machine running the tests leaks in) and the
mock model server's URL; every answer is checked against the schema
(`PlanUsage`, `ErrorBody`). Skipped, with the reason, when a CLI cannot be
installed.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from corral.actors.runtime import Runtime
from corral.pipeline.channels import Channel
from corral.pipeline.errors import CorralError, ErrorKind
from corral.sources._jsonrpc import Incoming, JsonRpcPeer, RpcError
from corral.sources._process import AgentProcess
from corral.sources._usage import ask_briefly

from tests.support.mockmodel import MockModelServer
from tests.support.realagents import AgentName, AgentSandbox, require_agent
from tests.support.schema import check

pytestmark = pytest.mark.e2e

SCHEMA = "line-protocol.schema.json"
NO_PROVIDER = "[analytics]\nenabled = false\n[features]\nplugins = false\n"
NO_PROVIDER += "remote_plugin = false\napps = false\n"


@pytest.fixture
def mock() -> Iterator[MockModelServer]:
    with MockModelServer() as server:
        yield server


@pytest.fixture
def sandbox(tmp_path: Path, mock: MockModelServer) -> AgentSandbox:
    return AgentSandbox(root=tmp_path, model_url=mock.url)


def _environ(sandbox: AgentSandbox, agent: AgentName) -> dict[str, str]:
    executable = require_agent(agent)
    return {**sandbox.env(agent), f"CORRAL_{agent.upper()}_BIN": str(executable)}


async def _refusal(environ: dict[str, str], agent: str) -> CorralError:
    async with Runtime(environ=environ, transcripts=False) as runtime:
        with pytest.raises(CorralError) as refused:
            await runtime.plan_usage(agent)
    check(SCHEMA, "ErrorBody", refused.value.body())
    return refused.value


def _codex_without_provider(sandbox: AgentSandbox, auth: dict[str, str] | None) -> None:
    (sandbox.codex_home / "config.toml").write_text(NO_PROVIDER)
    if auth is not None:
        (sandbox.codex_home / "auth.json").write_text(json.dumps(auth))


async def test_real_codex_on_a_model_provider_has_no_plan_quota(sandbox: AgentSandbox) -> None:
    refused = await _refusal(_environ(sandbox, "codex"), "codex")
    assert refused.kind is ErrorKind.UNSUPPORTED_FEATURE
    assert refused.fields["feature"] == "PlanUsage"
    assert "model provider" in refused.message  # what Codex said, not a blanket refusal


async def test_real_codex_logged_out_is_auth_required(sandbox: AgentSandbox) -> None:
    environ = _environ(sandbox, "codex")
    _codex_without_provider(sandbox, auth=None)
    refused = await _refusal(environ, "codex")
    assert refused.kind is ErrorKind.AUTH_REQUIRED


async def test_real_codex_on_an_api_key_has_no_plan_quota(sandbox: AgentSandbox) -> None:
    environ = _environ(sandbox, "codex")
    _codex_without_provider(sandbox, auth={"OPENAI_API_KEY": "sk-any"})
    refused = await _refusal(environ, "codex")
    assert refused.kind is ErrorKind.UNSUPPORTED_FEATURE
    assert "apiKey" in refused.message


async def _read_rate_limits(process: AgentProcess, tasks: asyncio.TaskGroup) -> object:
    incoming: Channel[Incoming] = Channel(64, name="e2e-codex")
    peer = JsonRpcPeer(process)
    tasks.create_task(peer.pump(incoming), name="e2e-codex-pump")
    tasks.create_task(_drain(incoming), name="e2e-codex-drain")
    await peer.request("initialize", {"clientInfo": {"name": "corral", "version": "e2e"}})
    await peer.notify("initialized")
    try:
        return await peer.request("account/rateLimits/read", {})
    except RpcError as error:
        return error


async def _drain(incoming: Channel[Incoming]) -> None:
    async for _ in incoming:
        pass


async def test_real_codex_itself_refuses_rate_limits_on_an_api_key(sandbox: AgentSandbox) -> None:
    environ = _environ(sandbox, "codex")
    _codex_without_provider(sandbox, auth={"OPENAI_API_KEY": "sk-any"})
    answer = await ask_briefly(
        [environ["CORRAL_CODEX_BIN"], "app-server"],
        env=environ,
        converse=_read_rate_limits,
        agent="Codex",
        deadline=60,
    )
    assert isinstance(answer, RpcError)
    assert answer.code == -32600
    assert "chatgpt authentication required" in answer.message


async def test_real_claude_on_an_api_key_has_no_plan_quota(sandbox: AgentSandbox) -> None:
    refused = await _refusal(_environ(sandbox, "claude"), "claude")
    assert refused.kind is ErrorKind.UNSUPPORTED_FEATURE
    assert refused.fields["feature"] == "PlanUsage"
    assert "API key" in refused.message  # the CLI said no plan limits apply


async def test_real_claude_without_key_or_login_is_auth_required(sandbox: AgentSandbox) -> None:
    environ = _environ(sandbox, "claude")
    del environ["ANTHROPIC_API_KEY"]
    refused = await _refusal(environ, "claude")
    assert refused.kind is ErrorKind.AUTH_REQUIRED
