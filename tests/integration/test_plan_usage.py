"""`plan_usage` through `corral serve`, against fake Claude and Codex processes.

Each test runs a real `corral serve` (`ServeProcess`: every line it writes
is checked against the schema's `Line`) whose Claude or Codex is a small
script speaking that agent's wire: `tests/fixtures/claude/fake_claude.py`
(`get_usage` on the stream-json control protocol) and
`tests/fixtures/codex/fake_rate_limits.py` (`account/read` and
`account/rateLimits/read` on the app-server wire). Both log every start,
so a test counts the processes a command caused. The `ok` of a reply is
also checked as a `PlanUsage`, and each event as an `Event`.
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
from collections.abc import AsyncIterator, Callable
from datetime import datetime
from pathlib import Path
from typing import Any

import pytest
from corral.pipeline.errors import AgentGone, CorralError, ErrorKind
from corral.sources._usage import ask_briefly

from tests.support.schema import check
from tests.support.serve import ServeProcess

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
FAKE_CLAUDE = FIXTURES / "claude" / "fake_claude.py"
FAKE_CODEX = FIXTURES / "codex" / "fake_rate_limits.py"
SCHEMA = "line-protocol.schema.json"

Start = Callable[..., Any]


def _shim(path: Path, fake: Path) -> Path:
    path.write_text(f'#!/bin/sh\nexec "{sys.executable}" "{fake}" "$@"\n')
    path.chmod(0o755)
    return path


class Agents:
    """Fake `claude` and `codex` executables, and what their starts logged."""

    def __init__(self, root: Path) -> None:
        self.claude_log = root / "claude-starts.log"
        self.codex_log = root / "codex-starts.log"
        self.claude_log.touch()
        self.codex_log.touch()
        self.env = {
            "HOME": str(root),
            "CODEX_HOME": str(root / "codex-home"),
            "CORRAL_CLAUDE_BIN": str(_shim(root / "claude", FAKE_CLAUDE)),
            "CORRAL_CODEX_BIN": str(_shim(root / "codex", FAKE_CODEX)),
            "FAKE_CLAUDE_LOG": str(self.claude_log),
            "FAKE_CODEX_STARTS": str(self.codex_log),
        }

    def claude_starts(self) -> int:
        return len(self.claude_log.read_text().splitlines())

    def codex_starts(self) -> list[dict[str, Any]]:
        return [json.loads(line) for line in self.codex_log.read_text().splitlines()]


@pytest.fixture
def agents(tmp_path: Path) -> Agents:
    return Agents(tmp_path)


@pytest.fixture
async def serve(agents: Agents) -> AsyncIterator[Start]:
    started: list[ServeProcess] = []

    async def start(*args: str, **env: str) -> ServeProcess:
        process = await ServeProcess.start(*args, env={**agents.env, **env}, cwd=agents.env["HOME"])
        started.append(process)
        await process.wait_for(lambda line: "hello" in line)
        return process

    yield start
    for process in started:
        await process.kill()


async def _usage(serve: ServeProcess, agent: object) -> dict[str, Any]:
    usage = await serve.ok({"cmd": "plan_usage", "agent": agent})
    check(SCHEMA, "PlanUsage", usage)
    return usage  # type: ignore[no-any-return]


async def _refused(serve: ServeProcess, agent: object) -> dict[str, Any]:
    reply = await serve.request({"cmd": "plan_usage", "agent": agent})
    assert "error" in reply, f"expected an error, got {reply}"
    return reply["error"]  # type: ignore[no-any-return]


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


def _epoch(moment: str) -> int:
    return int(datetime.fromisoformat(moment).timestamp())


# ---- Codex ---------------------------------------------------------------------


async def test_codex_plan_usage_is_its_rate_limit_windows_read_on_a_stopped_process(
    serve: Start, agents: Agents
) -> None:
    process = await serve(FAKE_CODEX_ACCOUNT="chatgpt")
    usage = await _usage(process, "codex")
    assert usage["plan"] == "plus"
    assert usage["windows"] == [
        {"label": "Session", "used_percent": 7, "resets_at": {"secs_since_epoch": 1796200000, "nanos_since_epoch": 0}},
        {"label": "Week", "used_percent": 31, "resets_at": {"secs_since_epoch": 1796700000, "nanos_since_epoch": 0}},
        {"label": "Session (Spark)", "used_percent": 2, "resets_at": {"secs_since_epoch": 1796201000, "nanos_since_epoch": 0}},
    ]  # fmt: skip
    [start] = agents.codex_starts()
    assert start["argv"] == ["app-server"]
    assert not _alive(start["pid"])  # started, asked, stopped before the reply
    assert await process.finish() == 0


async def test_a_second_call_within_a_minute_starts_no_process(
    serve: Start, agents: Agents
) -> None:
    process = await serve(FAKE_CODEX_ACCOUNT="chatgpt")
    first = await _usage(process, "codex")
    second = await _usage(process, "codex")
    assert second == first  # the same reading, `fetched_at` included
    assert len(agents.codex_starts()) == 1
    assert await process.finish() == 0


async def test_concurrent_calls_share_one_process(serve: Start, agents: Agents) -> None:
    process = await serve(FAKE_CODEX_ACCOUNT="chatgpt")
    sent = [await process.send({"cmd": "plan_usage", "agent": "codex"}) for _ in range(3)]
    replies = [await process.reply(frame_id) for frame_id in sent]
    assert all("ok" in reply for reply in replies)
    assert len(agents.codex_starts()) == 1
    assert await process.finish() == 0


@pytest.mark.parametrize("account", ["none", "expired"])
async def test_codex_without_a_usable_login_is_auth_required_and_asked_again(
    serve: Start, agents: Agents, account: str
) -> None:
    process = await serve(FAKE_CODEX_ACCOUNT=account)
    assert (await _refused(process, "codex"))["kind"] == "AuthRequired"
    assert (await _refused(process, "codex"))["kind"] == "AuthRequired"
    assert len(agents.codex_starts()) == 2  # a login may come any time: never kept
    assert await process.finish() == 0


@pytest.mark.parametrize("account", ["apikey", "provider"])
async def test_codex_without_a_chatgpt_plan_is_unsupported(
    serve: Start, agents: Agents, account: str
) -> None:
    process = await serve(FAKE_CODEX_ACCOUNT=account)
    error = await _refused(process, "codex")
    assert error["kind"] == "UnsupportedFeature"
    assert error["feature"] == "PlanUsage"
    assert (await _refused(process, "codex"))["kind"] == "UnsupportedFeature"
    assert len(agents.codex_starts()) == 1  # the verdict is kept like an answer
    assert await process.finish() == 0


# ---- Claude --------------------------------------------------------------------


async def test_claude_plan_usage_is_the_get_usage_windows(serve: Start, agents: Agents) -> None:
    process = await serve(FAKE_CLAUDE_MODE="plan")
    usage = await _usage(process, "claude")
    assert usage["plan"] == "max"
    assert usage["windows"] == [
        {"label": "Session", "used_percent": 11, "resets_at": {"secs_since_epoch": _epoch("2026-12-02T10:00:00+00:00"), "nanos_since_epoch": 500_000_000}},
        {"label": "Week", "used_percent": 40, "resets_at": {"secs_since_epoch": _epoch("2026-12-07T00:00:00+00:00"), "nanos_since_epoch": 0}},
        {"label": "Week (Fable)", "used_percent": 3, "resets_at": None},
    ]  # fmt: skip
    assert await _usage(process, "claude") == usage
    assert agents.claude_starts() == 1
    assert await process.finish() == 0


@pytest.mark.parametrize(
    ("mode", "kind"),
    [
        ("logged_out", "AuthRequired"),
        ("normal", "UnsupportedFeature"),  # an API key: no plan limits apply
        ("old_cli", "UnsupportedFeature"),  # a CLI without `get_usage`
    ],
)
async def test_claude_without_plan_limits_is_refused(
    serve: Start, agents: Agents, mode: str, kind: str
) -> None:
    process = await serve(FAKE_CLAUDE_MODE=mode)
    assert (await _refused(process, "claude"))["kind"] == kind
    assert agents.claude_starts() == 1
    assert await process.finish() == 0


async def _turn(process: ServeProcess, session: str, text: str, count: int) -> None:
    await process.ok({"cmd": "prompt", "session": session, "text": text})
    await process.wait_event(session, "TurnEnded", count=count)


async def test_claude_refreshes_plan_usage_after_each_turn(
    serve: Start, agents: Agents, tmp_path: Path
) -> None:
    process = await serve(FAKE_CLAUDE_MODE="plan")
    opened = await process.ok({"cmd": "open", "agent": "claude", "dir": str(tmp_path)})
    session = opened["id"]
    for turn in (1, 2):
        await _turn(process, session, f"turn {turn}", turn)
        event = await process.wait_event(session, "PlanUsageUpdated", count=turn)
        check(SCHEMA, "Event", event)
        assert "turn_info" not in event or event["turn_info"] is None  # after the turn's end
        usage = event["kind"]["PlanUsageUpdated"]
        assert usage["plan"] == "max"
        assert usage["windows"][0] == {**usage["windows"][0], "used_percent": 10 + turn}
    assert await process.finish() == 0


async def test_claude_on_an_api_key_reads_no_usage_after_a_turn(
    serve: Start, tmp_path: Path
) -> None:
    process = await serve(FAKE_CLAUDE_MODE="normal")
    opened = await process.ok({"cmd": "open", "agent": "claude", "dir": str(tmp_path)})
    await _turn(process, opened["id"], "hello", 1)
    await process.ok({"cmd": "close", "session": opened["id"]})
    await process.wait_for(lambda line: line.get("closed") == opened["id"])
    assert "PlanUsageUpdated" not in process.kinds(opened["id"])
    assert await process.finish() == 0


# ---- agents without a plan -----------------------------------------------------


async def test_an_acp_agent_has_no_plan_usage_and_is_not_started(
    serve: Start, tmp_path: Path
) -> None:
    started = tmp_path / "acp-started"
    agent = tmp_path / "acp-agent"
    agent.write_text(f'#!/bin/sh\necho started >> "{started}"\n')
    agent.chmod(0o755)
    process = await serve(CORRAL_GEMINI_BIN=str(agent))
    for ref in ("gemini", {"acp": {"name": "mine", "path": str(agent), "args": []}}):
        error = await _refused(process, ref)
        assert error["kind"] == "UnsupportedFeature"
        assert error["feature"] == "PlanUsage"
    assert not started.exists()
    assert await process.finish() == 0


async def test_the_mock_has_no_plan_usage(serve: Start, tmp_path: Path) -> None:
    script = tmp_path / "script.json"
    script.write_text(json.dumps({"turns": []}))
    process = await serve("--mock", str(script))
    error = await _refused(process, "mock")
    assert error["kind"] == "UnsupportedFeature"
    assert await process.finish() == 0


# ---- the short-lived process ---------------------------------------------------


async def _never_answers(process: Any, _tasks: asyncio.TaskGroup) -> None:
    while await process.read():
        pass
    raise AgentGone("closed")


async def test_an_agent_that_never_answers_is_stopped_at_the_deadline(tmp_path: Path) -> None:
    pid_file = tmp_path / "pid"
    # Ignores SIGTERM and EOF: only the SIGKILL of the stop ends it.
    argv = ["/bin/sh", "-c", f'trap "" TERM; echo $$ > "{pid_file}"; exec sleep 60']
    loop = asyncio.get_running_loop()
    began = loop.time()
    with pytest.raises(CorralError) as refused:
        await ask_briefly(
            argv, env={"PATH": os.environ["PATH"]}, converse=_never_answers, agent="X", deadline=0.5
        )
    assert refused.value.kind is ErrorKind.HANDSHAKE_TIMEOUT
    assert loop.time() - began < 0.5 + 2.0 + 5.0  # deadline + stop grace + slack
    assert not _alive(int(pid_file.read_text()))


async def test_an_agent_that_exits_before_answering_is_process_exited(tmp_path: Path) -> None:
    argv = ["/bin/sh", "-c", "echo cannot start >&2; exit 3"]
    with pytest.raises(CorralError) as refused:
        await ask_briefly(
            argv, env={"PATH": os.environ["PATH"]}, converse=_never_answers, agent="X", deadline=10
        )
    assert refused.value.kind is ErrorKind.PROCESS_EXITED
    assert refused.value.fields["status"] == "3"
    assert "cannot start" in str(refused.value.fields["stderr"])
