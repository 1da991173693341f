"""`corral serve --ray` against a two-node cluster: placement, the wire, faults, shutdown.

One cluster for the module (`conftest.py`); the test that kills a node
comes last. Every line serve writes is checked against the schema as it
is read (`ServeProcess`); each test ends by asserting that nothing it
started (hosts, agents, their watchdogs) is left in the namespace.
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import signal
import sys
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

import pytest

from tests.support.raycluster import HEAD_RESOURCE, WORKER_RESOURCE, RayCluster
from tests.support.realagents import AgentSandbox
from tests.support.serve import ServeProcess
from tests.support.waiting import until

pytestmark = [pytest.mark.ray, pytest.mark.slow]

DELTAS = 40


def _turn(pause_ms: int) -> list[Any]:
    steps: list[Any] = [
        {"Emit": {"TextDelta": {"message_id": "m1", "text": f"part {index} "}}}
        for index in range(DELTAS)
    ]
    return [
        *steps[: DELTAS // 2],
        {"Sleep": pause_ms},
        *steps[DELTAS // 2 :],
        {"Emit": {"MessageEnded": {"message_id": "m1"}}},
        {"Usage": {"used_tokens": 100, "window_tokens": 1000, "cost_usd": 0.001}},
        {"End": {"Completed": {"source": "Protocol"}}},
    ]


def _script(tmp_path: Path, pause_ms: int = 50) -> str:
    path = tmp_path / "script.json"
    path.write_text(json.dumps({"process": True, "turns": [_turn(pause_ms)] * 3}))
    return str(path)


def _ours(command: str) -> bool:
    """A process corral started on a node: a host, an agent, a host's watchdog."""
    marks = ("SessionHost", "corral.sources.mock", "killpg", "claude")
    return any(mark in command for mark in marks)


@pytest.fixture
async def serve(cluster: RayCluster, tmp_path: Path) -> AsyncIterator[Callable[..., Any]]:
    started: list[ServeProcess] = []

    async def start(*extra: str, pause_ms: int = 50, mock: bool = True) -> ServeProcess:
        script = ("--mock", _script(tmp_path, pause_ms)) if mock else ()
        process = await ServeProcess.start(
            "--ray", cluster.address, *script, *extra,
            launcher=cluster.prefix(),
            env={"RAY_AUTH_MODE": "disabled", "RAY_USAGE_STATS_ENABLED": "0"},
        )  # fmt: skip
        started.append(process)
        await process.wait_for(lambda line: "hello" in line, timeout=60)
        return process

    yield start
    for process in started:
        await process.kill()
    await until(lambda: not [c for c in cluster.processes().values() if _ours(c)], timeout=30)


def _under(cluster: RayCluster, node: str) -> list[str]:
    """Command lines of the agents running under `node`'s raylet."""
    raylet = cluster.raylet_of(node)
    processes = cluster.processes()
    parents = {pid: _parent(pid) for pid in processes}

    def descends(pid: int) -> bool:
        while pid in parents:
            if pid == raylet:
                return True
            pid = parents[pid]
        return False

    return [c for p, c in processes.items() if "corral.sources.mock" in c and descends(p)]


def _parent(pid: int) -> int:
    try:
        return int(Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[1])
    except (OSError, IndexError, ValueError):
        return 0


def _gapless(process: ServeProcess, sid: str) -> list[dict[str, Any]]:
    events = process.events(sid)
    assert [e["sequence"] for e in events] == list(range(1, len(events) + 1))
    return events


async def _open(process: ServeProcess, tmp_path: Path, **extra: Any) -> str:
    info = await process.ok({"cmd": "open", "agent": "mock", "dir": str(tmp_path), **extra}, 90)
    return str(info["id"])


async def test_sessions_spread_over_both_nodes_and_a_pinned_one_lands_on_its_node(
    serve: Callable[..., Any], cluster: RayCluster, tmp_path: Path
) -> None:
    process = await serve()
    for _ in range(4):
        await _open(process, tmp_path)
    await until(lambda: len(_under(cluster, "head")) + len(_under(cluster, "worker")) == 4)
    assert (len(_under(cluster, "head")), len(_under(cluster, "worker"))) == (2, 2)

    await _open(process, tmp_path, placement={"resources": {WORKER_RESOURCE: 1}})
    await until(lambda: len(_under(cluster, "worker")) == 3)
    assert len(_under(cluster, "head")) == 2

    refused = await process.request(
        {"cmd": "open", "agent": "mock", "dir": str(tmp_path),
         "placement": {"resources": {"gpu_nobody_has": 1}}}
    )  # fmt: skip
    assert refused["error"]["kind"] == "InvalidRequest"
    assert await process.finish(60) == 0


async def test_every_event_arrives_gapless_with_transcripts_and_metrics(
    serve: Callable[..., Any], cluster: RayCluster, tmp_path: Path
) -> None:
    archive = tmp_path / "archive"
    process = await serve("--transcripts", str(archive), "--metrics", METRICS)
    sessions = [await _open(process, tmp_path) for _ in range(4)]
    for sid in sessions:
        await process.ok({"cmd": "prompt", "session": sid, "text": "go"})
    for sid in sessions:
        await process.wait_event(sid, "TurnEnded", timeout=60)
    scraped = await _scrape(cluster)
    assert await process.finish(60) == 0

    for sid in sessions:
        kinds = [next(iter(e["kind"])) if isinstance(e["kind"], dict) else e["kind"]
                 for e in _gapless(process, sid)]  # fmt: skip
        assert kinds.count("TextDelta") == DELTAS
        assert any(line.get("closed") == sid for line in process.lines)
    listed = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "corral.actors.cli", "transcripts", "list", "--json",
        "--transcripts", str(archive), stdout=asyncio.subprocess.PIPE,
    )  # fmt: skip
    out, _ = await asyncio.wait_for(listed.communicate(), 60)
    rows = [json.loads(row) for row in out.splitlines()]
    assert sorted(row["session"] for row in rows) == sorted(sessions)
    assert {(row["status"], row["turns"]) for row in rows} == {("closed", 1)}
    assert 'corral_sessions_started_total{agent="mock"} 4.0' in scraped
    per_node = re.findall(r'corral_node_sessions\{node="127\.0\.0\.1:\d+"\} (\S+)', scraped)
    assert sorted(per_node) == ["2.0", "2.0"]  # the four sessions, two on each node


METRICS = "127.0.0.1:9478"  # inside the namespace: nobody else's port


async def _scrape(cluster: RayCluster) -> str:
    """The front's /metrics, read from inside the namespace."""
    fetch = await asyncio.create_subprocess_exec(
        *cluster.prefix(), sys.executable, "-c",
        "import sys, urllib.request; print(urllib.request.urlopen(sys.argv[1]).read().decode())",
        f"http://{METRICS}/metrics", stdout=asyncio.subprocess.PIPE,
    )  # fmt: skip
    out, _ = await fetch.communicate()
    return out.decode()


async def _mid_turn(process: ServeProcess, sessions: list[str]) -> None:
    """Prompt each session and wait until its turn streams (it then pauses)."""
    for sid in sessions:
        await process.ok({"cmd": "prompt", "session": sid, "text": "go"})
    for sid in sessions:
        await process.wait_event(sid, "TextDelta", timeout=60, count=DELTAS // 2)


def _agents(cluster: RayCluster) -> int:
    return sum("corral.sources.mock" in c for c in cluster.processes().values())


async def test_shutdown_mid_turn_closes_every_session_and_leaves_no_process(
    serve: Callable[..., Any], cluster: RayCluster, tmp_path: Path
) -> None:
    process = await serve(pause_ms=60_000)
    sessions = [await _open(process, tmp_path) for _ in range(3)]
    await _mid_turn(process, sessions)
    assert _agents(cluster) == 3

    assert await process.finish(60) == 0
    for sid in sessions:
        assert [line for line in process.lines if line.get("closed") == sid]
        assert _gapless(process, sid)[-1]["kind"] == {"StatusChanged": "Idle"}
    await until(lambda: not [c for c in cluster.processes().values() if _ours(c)], timeout=30)


async def test_a_killed_front_leaves_no_agent_behind(
    serve: Callable[..., Any], cluster: RayCluster, tmp_path: Path
) -> None:
    process = await serve(pause_ms=60_000)
    sessions = [await _open(process, tmp_path) for _ in range(2)]
    await _mid_turn(process, sessions)
    await process.kill()  # SIGKILL: the front runs no code of its own on the way out
    await until(lambda: not [c for c in cluster.processes().values() if _ours(c)], timeout=60)


MODEL_PORT = 9479  # inside the namespace


@pytest.fixture
async def model_server(cluster: RayCluster) -> AsyncIterator[str]:
    """The project's mock model server, inside the namespace (where the agents run)."""
    server = await asyncio.create_subprocess_exec(
        *cluster.prefix(), sys.executable, "-m", "tests.support.mockmodel",
        "--port", str(MODEL_PORT), stdout=asyncio.subprocess.PIPE, start_new_session=True,
    )  # fmt: skip
    assert server.stdout is not None
    url = (await asyncio.wait_for(server.stdout.readline(), 30)).decode().strip()
    yield url
    server.terminate()
    await server.wait()


@pytest.mark.e2e
async def test_the_real_claude_cli_runs_through_a_ray_host(
    serve: Callable[..., Any],
    cluster: RayCluster,
    claude: Path | None,
    model_server: str,
    tmp_path: Path,
) -> None:
    if claude is None:
        pytest.skip("real agent CLI unavailable: claude")
    sandbox = AgentSandbox(root=tmp_path / "agent", model_url=model_server)
    process = await serve(mock=False)  # the nodes' own catalog
    opened = await process.ok(
        {"cmd": "open", "agent": "claude", "dir": str(sandbox.workdir),
         "env": sandbox.env("claude"), "placement": _on(WORKER_RESOURCE)},
        120,
    )  # fmt: skip
    sid = opened["id"]
    await process.ok({"cmd": "prompt", "session": sid, "text": "CORRAL_ECHO hi"})
    ended = await process.wait_event(sid, "TurnEnded", timeout=120)
    assert "Completed" in ended["kind"]["TurnEnded"]["stop"]
    text = "".join(
        e["kind"]["TextDelta"]["text"] for e in _gapless(process, sid) if "TextDelta" in e["kind"]
    )
    assert text == "You said: CORRAL_ECHO hi"
    assert await process.finish(60) == 0


# Last: it kills the worker node.
async def test_a_dead_node_ends_its_sessions_while_the_others_go_on(
    serve: Callable[..., Any], cluster: RayCluster, tmp_path: Path
) -> None:
    process = await serve(pause_ms=10_000)
    doomed = [await _open(process, tmp_path, placement=_on(WORKER_RESOURCE)) for _ in range(2)]
    survivor = await _open(process, tmp_path, placement=_on(HEAD_RESOURCE))
    await _mid_turn(process, [*doomed, survivor])

    os.kill(cluster.raylet_of("worker"), signal.SIGKILL)
    for sid in doomed:
        error = await process.wait_for(lambda line, sid=sid: line.get("session") == sid, 30)
        assert error["error"]["kind"] in ("ProcessExited", "ProtocolFailed")
        await process.wait_for(lambda line, sid=sid: line.get("closed") == sid, 30)
        events = _gapless(process, sid)
        assert events[-2]["kind"]["TurnEnded"]["stop"]["Failed"]
        assert events[-1]["kind"] == {"StatusChanged": "Idle"}

    ended = await process.wait_event(survivor, "TurnEnded", timeout=60)
    assert ended["kind"]["TurnEnded"]["stop"] == {"Completed": {"source": "Protocol"}}
    _gapless(process, survivor)
    await until(lambda: _agents(cluster) == 1, timeout=30)  # the dead node's agents ended

    late = await _open(process, tmp_path)  # only the head is left
    await until(lambda: _agents(cluster) == 2, timeout=30)
    refused = await process.request(
        {"cmd": "open", "agent": "mock", "dir": str(tmp_path), "placement": _on(WORKER_RESOURCE)}
    )
    assert refused["error"]["kind"] == "InvalidRequest"
    await process.ok({"cmd": "close", "session": late})
    assert await process.finish(60) == 0


def _on(resource: str) -> dict[str, Any]:
    return {"resources": {resource: 1}}
