"""`acp-flood`, corral's side: an app process driving a real `corral serve`.

This process is the app. It starts `corral serve --metrics 127.0.0.1:0
--transcripts <scratch>` (its default sinks: the line protocol on stdout,
the transcript, plus metrics), opens a session on the flood agent through
the generic `acp` agent reference, sends one prompt and reads every line
serve writes until the turn's TurnEnded, parsing each one and checking
that each TextDelta's text is the chunk the agent sent at its place.

Measured over that window (prompt sent → TurnEnded read): this process's
CPU (`time.process_time`), the wall time, and serve's CPU (its process CPU
clock, all its threads; the agent is serve's child, so not in it), read
once serve has settled (it spent under 1 ms in the last 0.1 s), so
that work a sink does after the line writer is done is counted. Then
serve's metrics are scraped for its TextDelta count, stdin is closed and
the rest of serve's lines (the session's close) are read until serve
exits. `--keep FILE` writes every line serve wrote to FILE, for a
test to check against the schema.

Run as `python -m corral.actors.bench._flood_corral N [--keep FILE]`.
"""

from __future__ import annotations

import argparse
import asyncio
import re
import sys
import tempfile
import time
import urllib.request
from pathlib import Path
from typing import Any

import orjson

from ._acp_flood import FloodFailed, FloodRun, agent_command, cpu_seconds, write_run
from ._flood_agent import chunk_text
from ._scratch import scratch_transcripts

__all__ = ["flood_through_corral"]

_METRICS_URL = re.compile(rb"metrics on (http://\S+)")
_TEXT_DELTAS = re.compile(rb'^corral_events_total\{[^}]*kind="TextDelta"[^}]*\} (\S+)$', re.M)
_SETTLE = 0.1  # seconds between two looks at serve's CPU after the turn
_IDLE_CPU = 0.001  # CPU seconds serve spends in `_SETTLE` once it is idle, at most
_LIMIT = 16 * 1024 * 1024  # bytes a line may take on serve's stdout


class _App:
    """The app's end of the line protocol: commands out, lines in (kept if asked)."""

    def __init__(self, serve: asyncio.subprocess.Process, keep: bool) -> None:
        assert serve.stdin is not None and serve.stdout is not None
        self._stdin = serve.stdin
        self._stdout = serve.stdout
        self.kept: list[bytes] | None = [] if keep else None

    async def send(self, command: dict[str, Any]) -> None:
        self._stdin.write(orjson.dumps(command) + b"\n")
        await self._stdin.drain()

    async def line(self) -> dict[str, Any] | None:
        raw = await self._stdout.readline()
        if not raw:
            return None
        if self.kept is not None:
            self.kept.append(raw)
        line: dict[str, Any] = orjson.loads(raw)
        return line

    async def request(self, command: dict[str, Any]) -> dict[str, Any]:
        """Sends `command` and reads up to its reply, which must be `ok`."""
        await self.send(command)
        while (line := await self.line()) is not None:
            if line.get("id") == command["id"]:
                if "ok" not in line:
                    raise FloodFailed(f"corral serve refused {command['cmd']}: {line}")
                return line
        raise FloodFailed(f"corral serve ended before replying to {command['cmd']}")

    async def turn(self, session: str) -> tuple[int, bool]:
        """Reads through the session's TurnEnded: the TextDeltas seen, and whether in order."""
        deltas = 0
        in_order = True
        while (line := await self.line()) is not None:
            if "error" in line:
                raise FloodFailed(f"corral serve failed during the flood: {line}")
            event = line.get("event")
            if event is None or event["session_id"] != session:
                continue
            kind = event["kind"]
            if not isinstance(kind, dict):
                continue
            if (delta := kind.get("TextDelta")) is not None:
                in_order = in_order and delta["text"] == chunk_text(deltas)
                deltas += 1
            elif "TurnEnded" in kind:
                return deltas, in_order
        raise FloodFailed(f"corral serve ended before the turn did ({deltas} deltas read)")

    async def finish(self) -> None:
        """Close stdin: serve closes the session; read its last lines to EOF."""
        self._stdin.close()
        while await self.line() is not None:
            pass


async def flood_through_corral(updates: int, keep: Path | None) -> FloodRun:
    with scratch_transcripts() as transcripts, tempfile.TemporaryDirectory() as work:
        serve = await asyncio.create_subprocess_exec(
            sys.executable,
            *("-m", "corral.actors.cli", "serve", "--metrics", "127.0.0.1:0"),
            *("--transcripts", str(transcripts.dir)),
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
            limit=_LIMIT,
        )
        try:
            async with asyncio.timeout(600):
                return await _drive(serve, _App(serve, keep is not None), updates, work, keep)
        finally:
            if serve.returncode is None:
                serve.kill()
                await serve.wait()


async def _drive(
    serve: asyncio.subprocess.Process, app: _App, updates: int, work: str, keep: Path | None
) -> FloodRun:
    """The flood, then serve's end; a failure carries what serve said on stderr."""
    assert serve.stderr is not None
    url = await _metrics_url(serve.stderr)
    failure = None
    async with asyncio.TaskGroup() as tasks:
        stderr = tasks.create_task(serve.stderr.read())  # drained, for a failure's message
        try:
            run = await _flood(serve.pid, app, updates, work, url)
            await app.finish()
            if await serve.wait() != 0:
                failure = f"corral serve exited {serve.returncode}"
        except FloodFailed as failed:
            failure = str(failed)
            if serve.returncode is None:
                serve.kill()  # its stderr ends: the task group can end
    if failure is not None:
        said = stderr.result().decode(errors="replace")[-2000:]
        raise FloodFailed(f"{failure}; corral serve said: {said}")
    if keep is not None and app.kept is not None:
        await asyncio.to_thread(keep.write_bytes, b"".join(app.kept))
    return run


async def _flood(serve: int, app: _App, updates: int, work: str, url: str) -> FloodRun:
    """Open a session on the agent, prompt, read the turn: the measured window."""
    program, *args = agent_command(updates)
    agent = {"acp": {"name": "flood", "path": program, "args": args}}
    opened = await app.request({"id": 1, "cmd": "open", "agent": agent, "dir": work})
    session = opened["ok"]["id"]
    serve_before, app_before = cpu_seconds(serve), time.process_time()
    started = time.perf_counter()
    await app.send({"id": 2, "cmd": "prompt", "session": session, "text": "flood"})
    deltas, in_order = await app.turn(session)
    wall = time.perf_counter() - started
    app_cpu = time.process_time() - app_before
    serve_cpu = await _settled_cpu(serve) - serve_before
    return FloodRun(
        side="corral",
        updates=deltas,
        in_order=in_order,
        cpu_s=serve_cpu + app_cpu,
        wall_s=wall,
        parts={"serve": serve_cpu, "app": app_cpu},
        metrics_updates=await asyncio.to_thread(_text_deltas_counted, url),
    )


async def _settled_cpu(pid: int) -> float:
    """serve's CPU once it has stopped rising: what it does for the flood after
    the app has read the turn's end (a sink behind the line writer) counts too."""
    spent = cpu_seconds(pid)
    for _ in range(50):  # 5 s at most
        await asyncio.sleep(_SETTLE)
        now = cpu_seconds(pid)
        if now - spent < _IDLE_CPU:
            break
        spent = now
    return spent


async def _metrics_url(stderr: asyncio.StreamReader) -> str:
    """Where serve's metrics are, as it says on stderr once it serves them."""
    said = b""
    while line := await stderr.readline():
        if found := _METRICS_URL.search(line):
            return found.group(1).decode()
        said += line
    raise FloodFailed(f"corral serve did not say where its metrics are: {said.decode()[-2000:]}")


def _text_deltas_counted(url: str) -> int:
    with urllib.request.urlopen(url, timeout=30) as response:
        exposition: bytes = response.read()
    return sum(int(float(value)) for value in _TEXT_DELTAS.findall(exposition))


def main() -> None:
    flags = argparse.ArgumentParser(prog="flood-corral")
    flags.add_argument("updates", type=int)
    flags.add_argument("--keep", type=Path)
    args = flags.parse_args()
    import uvloop

    write_run(uvloop.run(flood_through_corral(args.updates, args.keep)))


if __name__ == "__main__":
    main()
