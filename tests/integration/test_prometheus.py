"""A real Prometheus scrapes corral serving mock sessions under load.

Prometheus (Debian's package, found or unpacked by `.ci/prometheus`)
scrapes corral every second while an app drives mock agents (process mode:
real child processes, real pipes) over the line protocol: permissions
answered and auto-approved, questions, failing and cancelled turns, agents
dying, undecodable output. Then every dashboard query runs against
Prometheus and the core panels return data; exemplars carry session ids;
`promtool check metrics` accepts the exposition.

corral is started as `python -m tests.integration.test_prometheus` (the
`__main__` block at the end): `corral serve` with a `Metrics` wired as
`corral serve --metrics` wires it, plus mock agents that report
token usage and models (the mock script cannot express them yet).
"""

from __future__ import annotations

import asyncio
import json
import random
import socket
import sys
import time
import urllib.parse
import urllib.request
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
import pytest_asyncio

from tests.support.serve import ServeProcess
from tests.unit.metrics.load import script
from tests.unit.metrics.promtools import REPO, concrete, dashboard_queries, prometheus_bin

pytestmark = [pytest.mark.slow, pytest.mark.asyncio(loop_scope="module")]

SESSIONS = 16  # driven at random, 8 at a time
STARTUP = 60.0
# Panels that may rightly be empty here: no transcript sink, no deadlines, no restarts,
# no sink failures, no label overflow.
MAY_BE_EMPTY = {
    "Restarts in range",
    "Timeouts",
    "Transcript fsync",
    "Sink errors and label overflow",
}


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
    """Poll `check` (a blocking callable) until it returns something truthy."""
    deadline = time.monotonic() + timeout
    while True:
        try:
            found = await asyncio.to_thread(check)
        except OSError:
            found = None
        if found:
            return found
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        await asyncio.sleep(0.5)


# ---- corral and Prometheus as subprocesses ---------------------------------------


async def start_corral(script_path: Path) -> tuple[ServeProcess, int]:
    process = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "tests.integration.test_prometheus",
        script_path,
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
        cwd=REPO,
        limit=256 * 1024 * 1024,
    )
    assert process.stderr is not None
    async with asyncio.timeout(STARTUP):
        first = (await process.stderr.readline()).decode()
    assert "metrics on http://127.0.0.1:" in first, first
    port = int(first.rsplit(":", 1)[1].split("/")[0])
    serve = ServeProcess(process)
    serve._reader = asyncio.create_task(serve._read())  # as ServeProcess.start does
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
    script_path = tmp_path / "script.json"
    script_path.write_text(json.dumps(script(process=True)))
    serve, metrics_port = await start_corral(script_path)
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
        await load(serve, str(tmp_path))
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


async def drive(serve: ServeProcess, rng: random.Random, directory: str) -> None:
    mode = rng.choice(["Ask", "Ask", "AutoApprove"])
    info = await serve.ok(
        {"cmd": "open", "agent": "mock", "dir": directory, "permission_mode": mode}
    )
    sid, prompts, sent, cursor = info["id"], rng.randint(1, 5), 1, 0
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


async def load(serve: ServeProcess, directory: str) -> str:
    """Drive SESSIONS random sessions; leave one waiting on a permission. Its id."""
    rng = random.Random(2024)
    for _ in range(SESSIONS // 8):
        async with asyncio.timeout(300), asyncio.TaskGroup() as batch:
            for _ in range(8):
                batch.create_task(drive(serve, rng, directory))
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


# ---- the corral under test: `corral serve` with metrics, as a module ------------------


async def _serve_with_metrics(script_path: str) -> int:
    from corral.actors.cli import version
    from corral.actors.runtime import Runtime
    from corral.actors.server import serve
    from corral.actors.stdio import open_stdio
    from corral.pipeline.telemetry import Telemetry
    from corral.sinks.metrics import Metrics
    from corral.sources.mock import load_script

    from tests.unit.metrics.agents import catalog

    metrics = Metrics()
    agents = catalog(load_script(script_path), ["mock"], ["model-a", "model-b"])
    runtimes: list[Runtime] = []

    def make_runtime() -> Runtime:
        runtime = Runtime(
            catalog=agents, sinks=[metrics.sink], telemetry=Telemetry([metrics.observer])
        )
        runtimes.append(runtime)
        return runtime

    metrics.set_channels(
        lambda: [
            channel
            for runtime in runtimes
            for session in runtime.sessions()
            if not session.ended
            for channel in session.actor.channels()
        ]
    )
    server = await metrics.serve_http("127.0.0.1", 0)
    print(f"corral: metrics on {server.url}", file=sys.stderr, flush=True)
    try:
        stdin, stdout = await open_stdio()
        return await serve(
            stdin=stdin,
            stdout=metrics.count_lines(stdout),
            version=version(),
            make_runtime=make_runtime,
        )
    finally:
        await server.aclose()


if __name__ == "__main__":
    sys.exit(asyncio.run(_serve_with_metrics(sys.argv[1])))
