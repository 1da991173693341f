"""A real Prometheus scrapes `corral serve --mock` under load.

Prometheus (Debian's package, found or unpacked by `.ci/prometheus`)
scrapes corral every second while the test, as the app, drives mock agents
(process mode: real child processes, real pipes) over the line protocol of
`corral serve --mock SCRIPT --metrics 127.0.0.1:0 --transcripts DIR`, the
command an operator runs: permissions answered, auto-approved, denied by a
guard and timed out by a session's policy; questions; token usage across
more models than the cap admits; compactions; failing and cancelled turns;
agents dying; undecodable output. Then every dashboard query runs against
Prometheus and the core panels return data; exemplars carry session ids;
`promtool check metrics` accepts the exposition.
"""

from __future__ import annotations

import asyncio
import json
import random
import socket
import time
import urllib.parse
import urllib.request
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
import pytest_asyncio

from tests.support.serve import ServeProcess
from tests.support.waiting import retries
from tests.unit.metrics.load import script
from tests.unit.metrics.promtools import concrete, dashboard_queries, prometheus_bin

pytestmark = [pytest.mark.slow, pytest.mark.asyncio(loop_scope="module")]

SESSIONS = 16  # driven at random, 8 at a time
STARTUP = 60.0
MODELS = 16  # with model-a and model-b, more than `serve`'s cap: the overflow shows
# A session with this policy leaves its requests unanswered: they time out.
IMPATIENT = 'version = 1\ndeadline = 0.3\non_timeout = "deny"\n'
# Panels that may rightly be empty here: the mock agents are never restarted.
MAY_BE_EMPTY = {"Restarts in range"}


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def fetch(url: str) -> bytes:
    with urllib.request.urlopen(url, timeout=30) as response:  # loopback only
        return bytes(response.read())


def api(port: int, path: str, **params: str) -> Any:
    url = f"http://127.0.0.1:{port}{path}?{urllib.parse.urlencode(params)}"
    return json.loads(fetch(url))


async def until(check: Any, what: str, timeout: float = STARTUP) -> Any:
    """Look with `check` (a blocking callable, run in a thread) until it returns something truthy."""
    # A scrape is an HTTP round trip: at most two looks a second once warmed up.
    async for _ in retries(timeout=timeout, what=what, longest=0.5):
        try:
            found = await asyncio.to_thread(check)
        except OSError:
            found = None
        if found:
            return found
    raise AssertionError("unreachable: retries raises when time is up")


# ---- corral and Prometheus as subprocesses ---------------------------------------


async def metrics_port(serve: ServeProcess) -> int:
    """The port `--metrics 127.0.0.1:0` picked, as corral reports it on stderr."""
    assert serve.process.stderr is not None
    async with asyncio.timeout(STARTUP):
        while True:
            line = (await serve.process.stderr.readline()).decode()
            assert line, "corral exited before serving metrics"
            if "metrics on " in line:
                break
    url = line.rsplit("metrics on ", 1)[1].strip()
    assert url.startswith("http://127.0.0.1:") and url.endswith("/metrics"), url
    return int(url.removeprefix("http://127.0.0.1:").removesuffix("/metrics"))


async def start_corral(tmp_path: Path) -> tuple[ServeProcess, int]:
    script_path = tmp_path / "script.json"
    script_path.write_text(json.dumps(script(process=True, extra_models=MODELS)))
    serve = await ServeProcess.start(
        *("--mock", str(script_path), "--metrics", "127.0.0.1:0"),
        *("--transcripts", str(tmp_path / "transcripts")),
        env={"CORRAL_HOME": str(tmp_path / "home")},
    )
    port = await metrics_port(serve)
    await serve.wait_for(lambda line: "hello" in line, timeout=STARTUP)
    return serve, port


def prometheus_config(target_port: int) -> str:
    return json.dumps(
        {
            "global": {"scrape_interval": "1s", "scrape_timeout": "1s"},
            "scrape_configs": [
                {
                    "job_name": "corral",
                    "static_configs": [{"targets": [f"127.0.0.1:{target_port}"]}],
                }
            ],
        }
    )


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def stack(
    tmp_path_factory: pytest.TempPathFactory,
) -> AsyncIterator[tuple[ServeProcess, int, int]]:
    """(corral, its metrics port, Prometheus's port): both running, the load played."""
    prometheus = await asyncio.to_thread(prometheus_bin) / "prometheus"
    tmp_path = tmp_path_factory.mktemp("prometheus")
    serve, metrics_port = await start_corral(tmp_path)
    config = tmp_path / "prometheus.yml"
    config.write_text(prometheus_config(metrics_port))
    prom_port = free_port()
    log = (tmp_path / "prometheus.log").open("wb")
    server = await asyncio.create_subprocess_exec(
        str(prometheus),
        f"--config.file={config}",
        f"--storage.tsdb.path={tmp_path / 'tsdb'}",
        f"--web.listen-address=127.0.0.1:{prom_port}",
        "--enable-feature=exemplar-storage",
        "--log.level=warn",
        stdout=log,
        stderr=asyncio.subprocess.STDOUT,
    )
    try:
        await until(
            lambda: api(prom_port, "/api/v1/query", query='up{job="corral"} == 1')["data"][
                "result"
            ],
            "Prometheus to scrape corral",
        )
        work = tmp_path / "work"
        work.mkdir()
        impatient = tmp_path / "impatient.toml"
        impatient.write_text(IMPATIENT)
        await load(serve, str(work), str(impatient))
        await scraped(prom_port, times=3)
        yield serve, metrics_port, prom_port
    finally:
        server.terminate()
        try:
            async with asyncio.timeout(30):
                await server.wait()
        except TimeoutError:
            server.kill()
            await server.wait()
        log.close()
        try:
            assert await serve.finish(timeout=60) == 0  # EOF closes every session
        finally:
            await serve.kill()


# ---- the app's load over the line protocol ----------------------------------------


def kind_name(event: dict[str, Any]) -> str:
    kind = event["kind"]
    return kind if isinstance(kind, str) else next(iter(kind))


async def next_line(serve: ServeProcess, sid: str, cursor: int) -> tuple[dict[str, Any], int]:
    def mine(line: dict[str, Any]) -> bool:
        return line.get("closed") == sid or line.get("event", {}).get("session_id") == sid

    line = await serve.wait_for(mine, timeout=120, after=cursor)
    index = next(i for i in range(cursor, len(serve.lines)) if serve.lines[i] is line)
    return line, index + 1


def answer(request: dict[str, Any], rng: random.Random) -> dict[str, Any]:
    if "Permission" in request:
        return {"Permission": rng.choice(["AllowOnce", "DenyOnce"])}
    return {"Question": [{"Choices": [rng.choice(["a", "b"])]}]}


async def drive(
    serve: ServeProcess, rng: random.Random, directory: str, prompts: int | None = None
) -> None:
    """One session: `prompts` prompts (1 to 5 at random), requests answered at random."""
    mode = rng.choice(["Ask", "Ask", "AutoApprove"])
    info = await serve.ok(
        {"cmd": "open", "agent": "mock", "dir": directory, "permission_mode": mode}
    )
    prompts = rng.randint(1, 5) if prompts is None else prompts
    sid, sent, cursor = info["id"], 1, 0
    await serve.ok({"cmd": "prompt", "session": sid, "text": "go"})
    while True:
        line, cursor = await next_line(serve, sid, cursor)
        if "closed" in line:
            return
        event = line["event"]
        name = kind_name(event)
        if name == "RequestOpened":
            request = event["kind"]["RequestOpened"]
            request_id = next(iter(request.values()))["id"]
            await serve.request(
                {
                    "cmd": "answer",
                    "session": sid,
                    "request": request_id,
                    "answer": answer(request, rng),
                }
            )
        elif name == "TurnStarted" and sent == 4:
            await serve.request({"cmd": "cancel", "session": sid})
        elif name == "TurnEnded" and sent < prompts:
            sent += 1
            await serve.request({"cmd": "prompt", "session": sid, "text": "more"})
        elif name == "TurnEnded":
            await serve.request({"cmd": "close", "session": sid})


async def one_turn(serve: ServeProcess, directory: str, **options: str) -> None:
    """A session that plays turn 0 without the app answering anything, then closes."""
    info = await serve.ok({"cmd": "open", "agent": "mock", "dir": directory, **options})
    await serve.ok({"cmd": "prompt", "session": info["id"], "text": "go"})
    await serve.wait_event(info["id"], "TurnEnded", timeout=120)
    await serve.ok({"cmd": "close", "session": info["id"]})


async def load(serve: ServeProcess, directory: str, impatient_policy: str) -> str:
    """Drive SESSIONS random sessions and two set ones; leave one waiting on a permission."""
    rng = random.Random(2024)
    for _ in range(SESSIONS // 8):
        async with asyncio.timeout(300), asyncio.TaskGroup() as batch:
            for _ in range(8):
                batch.create_task(drive(serve, rng, directory))
    # Every turn of the script: the other models' turns, then the agent dies.
    await drive(serve, rng, directory, prompts=5 + MODELS)
    # The mode allows `ls`, the rm-root guard denies `rm -rf /`.
    await one_turn(serve, directory, permission_mode="AutoApprove")
    # Both requests are forwarded to the app, which stays silent: both time out.
    await one_turn(serve, directory, permission_mode="Ask", policy=impatient_policy)
    info = await serve.ok({"cmd": "open", "agent": "mock", "dir": directory})
    await serve.ok({"cmd": "prompt", "session": info["id"], "text": "go"})
    await serve.wait_event(info["id"], "RequestOpened", timeout=120)
    return str(info["id"])


def query(port: int, expr: str) -> list[Any]:
    reply = api(port, "/api/v1/query", query=concrete(expr, rate_interval="5m", job="corral"))
    assert reply["status"] == "success", (expr, reply)
    return list(reply["data"]["result"])


# ---- the tests ----------------------------------------------------------------------


async def scraped(port: int, *, times: int) -> None:
    """Wait until Prometheus has scraped corral `times` more times."""
    scrapes = 'count_over_time(up{job="corral"}[5m])'
    before = float(query(port, scrapes)[0]["value"][1])
    await until(
        lambda: float(query(port, scrapes)[0]["value"][1]) >= before + times,
        f"{times} more scrapes",
    )


def has_numbers(results: list[Any]) -> bool:
    return any(r["value"][1] not in ("NaN", "+Inf", "-Inf") for r in results)


async def test_every_dashboard_query_runs_and_the_core_panels_have_data(
    stack: tuple[ServeProcess, int, int],
) -> None:
    _, _, prom_port = stack
    with_data: set[tuple[str, str]] = set()
    for board, title, expr in dashboard_queries():
        results = await asyncio.to_thread(query, prom_port, expr)  # fails unless it runs
        if has_numbers(results):
            with_data.add((board, title))
    panels = {(board, title) for board, title, _ in dashboard_queries()}
    missing = sorted(p for p in panels - with_data if p[1] not in MAY_BE_EMPTY)
    assert not missing, missing


async def test_a_session_waiting_on_a_permission_shows_as_pending(
    stack: tuple[ServeProcess, int, int],
) -> None:
    _, _, prom_port = stack
    pending = query(prom_port, 'sum(corral_requests_pending{job="corral"})')
    assert float(pending[0]["value"][1]) == 1
    waiting = 'sum(corral_sessions_in_status{job="corral", status="NeedsInput"})'
    assert float(query(prom_port, waiting)[0]["value"][1]) == 1


def exemplars(port: int) -> list[Any]:
    now = time.time()
    reply = api(
        port,
        "/api/v1/query_exemplars",
        query="corral_turn_duration_seconds_bucket",
        start=str(now - 600),
        end=str(now + 60),
    )
    assert reply["status"] == "success", reply
    return list(reply["data"])


async def test_exemplars_reach_prometheus_with_session_and_turn_ids(
    stack: tuple[ServeProcess, int, int],
) -> None:
    _, _, prom_port = stack
    found = await until(lambda: exemplars(prom_port), "exemplars of turn durations")
    labels = found[0]["exemplars"][0]["labels"]
    assert labels["session_id"].startswith("s") and labels["turn_id"].startswith("t")


async def test_guard_decisions_and_timeouts_keep_their_decider(
    stack: tuple[ServeProcess, int, int],
) -> None:
    _, _, prom_port = stack
    for decided_by in ("guard:rm-root", "mode:AutoApprove", "timeout", "app"):
        expr = f'sum(corral_decisions_total{{job="corral", decided_by="{decided_by}"}})'
        assert float(query(prom_port, expr)[0]["value"][1]) >= 1, decided_by
    unknown = 'sum(corral_decisions_total{job="corral", decided_by="other"})'
    assert not query(prom_port, unknown)


async def test_transcripts_are_written_and_counted(
    stack: tuple[ServeProcess, int, int],
) -> None:
    _, _, prom_port = stack
    written = query(prom_port, 'sum(corral_transcript_bytes_total{job="corral"})')
    assert float(written[0]["value"][1]) > 0
    fsyncs = query(prom_port, 'sum(corral_transcript_fsync_seconds_count{job="corral"})')
    assert float(fsyncs[0]["value"][1]) > 0


async def test_promtool_accepts_the_exposition(stack: tuple[ServeProcess, int, int]) -> None:
    _, metrics_port, _ = stack
    exposition = await asyncio.to_thread(fetch, f"http://127.0.0.1:{metrics_port}/metrics")
    promtool = await asyncio.create_subprocess_exec(
        str(prometheus_bin() / "promtool"),
        "check",
        "metrics",
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.STDOUT,
    )
    async with asyncio.timeout(60):
        output, _ = await promtool.communicate(exposition)
    assert promtool.returncode == 0, output.decode()


async def test_the_line_protocol_is_counted_by_message_type(
    stack: tuple[ServeProcess, int, int],
) -> None:
    serve, _, prom_port = stack
    for line_type in ("hello", "reply", "event", "session_error", "closed"):
        expr = f'sum(corral_line_messages_total{{job="corral", type="{line_type}"}})'
        assert float(query(prom_port, expr)[0]["value"][1]) >= 1, line_type
    events = sum(1 for line in serve.lines if "event" in line)
    counted = query(prom_port, 'sum(corral_line_messages_total{job="corral", type="event"})')
    assert float(counted[0]["value"][1]) <= events
