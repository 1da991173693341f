"""`acp-flood`: one prompt's flood of ACP chunks, through corral and through the ACP SDK.

The agent (`_flood_agent.py`, corral's own fake speaking ACP's JSON-RPC
over stdio) answers one prompt with N `session/update`
`agent_message_chunk` notifications, then `end_turn`. Two peers read the
same flood from the same agent, in turn, each in a fresh process:

- corral (`_flood_corral.py`): a real `corral serve` with its default
  sinks (the line protocol on stdout, the transcript, in a scratch
  archive) plus metrics (`--metrics`), driven by an app process that opens
  a session on the agent (the generic `acp` agent reference), prompts, and
  reads every line until the turn ends, counting the TextDelta events.
- the SDK (`_flood_sdk.py`): the ACP Python SDK's client
  (`agent-client-protocol`, `import acp`) spawning the agent and counting
  the chunks its `Client.session_update` callback receives.

Runs alternate (corral, SDK, corral, SDK, ...; three each in the bench)
and each figure is the median. A run whose reader did not see every chunk,
in order, did other work than the flood: the phase fails (`FloodFailed`)
rather than report it. Both peers run on uvloop (the loop `corral
serve` runs on). The window is the flood's: from sending the prompt to
reading its last update (corral: its TurnEnded; the SDK: the prompt's
result with every chunk seen); process start-up and the handshake are
outside it.

The cost of a peer is its CPU time (user + system, all threads) over the
window, in the processes that do a peer's job: corral serve's plus the
app's (reading and parsing each line), against the SDK client's. The
agent's own CPU is in neither: it is a separate process, a child, whose
time is not its parent's. The ratio corral ÷ SDK is of CPU time per
update, because CPU is what a supervisor run beside hundreds of agents
spends for each of them; wall time (reported too) overlaps the agent's
writing with the reading, corral's two processes with each other, and on
a shared machine other load, so it says less about the peer's own cost.

Without the SDK installed the phase runs corral's side only and says why
(`sdk_missing`); there is no ratio then.
"""

from __future__ import annotations

import importlib.util
import statistics
import subprocess
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import attrs
import orjson

__all__ = [
    "SDK_MISSING",
    "AcpFlood",
    "FloodFailed",
    "FloodRun",
    "cpu_seconds",
    "flood_summary",
    "flood_table",
    "measure_acp_flood",
]

SDK_MISSING = "the ACP Python SDK (agent-client-protocol) is not installed: no peer side, no ratio"
TARGET_RATIO = 0.7  # issue 21: corral's cost per update ≤ 0.7 × the SDK's


class FloodFailed(Exception):
    """A side of the flood did not finish as it should: the process's own words."""


@attrs.frozen(kw_only=True)
class FloodRun:
    """One peer reading one flood."""

    side: str  # "corral" or "sdk"
    updates: int  # message chunks the reader saw
    in_order: bool  # each chunk's text was the one the agent sent at its place
    cpu_s: float  # the peer's CPU time over the flood (all of `parts`)
    wall_s: float
    parts: dict[str, float]  # CPU seconds per process: serve and app, or client
    metrics_updates: int | None = None  # corral: its TextDelta counter after the turn

    def us_per_update(self, seconds: float) -> float:
        return seconds / self.updates * 1e6 if self.updates else 0.0


@attrs.frozen(kw_only=True)
class AcpFlood:
    updates: int  # the flood's size, N
    corral: tuple[FloodRun, ...]
    sdk: tuple[FloodRun, ...]
    sdk_missing: str | None = None

    @property
    def corral_cpu_us(self) -> float:
        return _median_us(self.corral, cpu=True)

    @property
    def sdk_cpu_us(self) -> float:
        return _median_us(self.sdk, cpu=True)

    @property
    def corral_wall_us(self) -> float:
        return _median_us(self.corral, cpu=False)

    @property
    def sdk_wall_us(self) -> float:
        return _median_us(self.sdk, cpu=False)

    @property
    def ratio(self) -> float | None:
        """corral ÷ SDK, CPU per update (see the module header for why CPU)."""
        return self.corral_cpu_us / self.sdk_cpu_us if self.sdk and self.sdk_cpu_us else None

    @property
    def wall_ratio(self) -> float | None:
        return self.corral_wall_us / self.sdk_wall_us if self.sdk and self.sdk_wall_us else None


def _median_us(runs: Sequence[FloodRun], *, cpu: bool) -> float:
    if not runs:
        return 0.0
    return statistics.median(run.us_per_update(run.cpu_s if cpu else run.wall_s) for run in runs)


def _parts_us(runs: Sequence[FloodRun]) -> dict[str, float]:
    """Median CPU µs per update of each process of a side (serve, app; client)."""
    names = runs[0].parts if runs else {}
    return {
        name: statistics.median(run.us_per_update(run.parts[name]) for run in runs)
        for name in names
    }


def _rounded(value: float | None, digits: int) -> float | None:
    return None if value is None else round(value, digits)


def flood_summary(flood: AcpFlood) -> dict[str, Any]:
    """The report's `acp_flood_ratio`: corral ÷ SDK in CPU per update, with its figures."""
    return {
        "value": _rounded(flood.ratio, 3),
        "target": TARGET_RATIO,
        "baseline": {
            "measure": "CPU time per update (user + system) of the peer's processes",
            "updates": flood.updates,
            "repeats": len(flood.corral),
            "corral_cpu_us_per_update": round(flood.corral_cpu_us, 2),
            "sdk_cpu_us_per_update": round(flood.sdk_cpu_us, 2),
            "corral_parts_us_per_update": _parts_rounded(_parts_us(flood.corral)),
            "corral_wall_us_per_update": round(flood.corral_wall_us, 2),
            "sdk_wall_us_per_update": round(flood.sdk_wall_us, 2),
            "wall_ratio": _rounded(flood.wall_ratio, 3),
            "sdk_missing": flood.sdk_missing,
        },
    }


def _parts_rounded(parts: dict[str, float]) -> dict[str, float]:
    return {name: round(us, 2) for name, us in parts.items()}


FLOOD_HEAD = "  peer       CPU µs/update  (serve + app)  wall µs/update"


def flood_table(flood: AcpFlood) -> list[str]:
    """The text report's lines for the phase."""
    runs = len(flood.corral)
    lines = [
        f"acp-flood: {flood.updates} agent_message_chunk updates from one prompt"
        f" (median of {runs} runs each, alternating; each saw every chunk, in order;"
        " the agent's CPU in neither)",
        FLOOD_HEAD,
    ]
    parts = _parts_us(flood.corral)
    split = f"{parts.get('serve', 0.0):.2f} + {parts.get('app', 0.0):.2f}"
    for name, side, cpu_us, wall_us, shown in (
        ("corral", flood.corral, flood.corral_cpu_us, flood.corral_wall_us, split),
        ("ACP SDK", flood.sdk, flood.sdk_cpu_us, flood.sdk_wall_us, ""),
    ):
        if side:
            lines.append(f"  {name:<9}{cpu_us:>15.2f}{shown:>15}{wall_us:>16.2f}")
    if flood.sdk_missing is not None:
        lines.append(f"  ACP SDK: {flood.sdk_missing}")
    if flood.ratio is not None and flood.wall_ratio is not None:
        lines.append(
            f"  corral ÷ SDK: {flood.ratio:.2f}× in CPU per update (target ≤ {TARGET_RATIO}×);"
            f" in wall time {flood.wall_ratio:.2f}×"
        )
    return lines


def cpu_seconds(pid: int) -> float:
    """User plus system CPU of process `pid`, all its threads, none of its children.

    Read from the process's CPU clock, to the nanosecond (`/proc/<pid>/stat`
    counts in ticks of 10 ms). Python has no `clock_getcpuclockid`; its
    answer on Linux is this number: the process-wide clock (2, the
    scheduler's) of `pid`.
    """
    return time.clock_gettime(((~pid) << 3) | 2)


def agent_command(updates: int) -> list[str]:
    """How to start the flood agent: a command line, its program first."""
    return [sys.executable, "-m", "corral.actors.bench._flood_agent", "--updates", str(updates)]


def sdk_installed() -> bool:
    return importlib.util.find_spec("acp") is not None


def measure_acp_flood(updates: int, repeats: int = 3, keep: Path | None = None) -> AcpFlood:
    """Both peers, alternating, `repeats` times each (corral's lines kept in `keep`)."""
    with_sdk = sdk_installed()
    corral: list[FloodRun] = []
    sdk: list[FloodRun] = []
    for index in range(repeats):
        kept = [] if keep is None else ["--keep", str(keep / f"corral-{index + 1}.jsonl")]
        corral.append(_run_side("_flood_corral", updates, kept))
        if with_sdk:
            sdk.append(_run_side("_flood_sdk", updates, []))
    return AcpFlood(
        updates=updates,
        corral=tuple(corral),
        sdk=tuple(sdk),
        sdk_missing=None if with_sdk else SDK_MISSING,
    )


def _run_side(module: str, updates: int, extra: list[str]) -> FloodRun:
    """One side in a fresh process, which prints its `FloodRun` as JSON."""
    command = [sys.executable, "-m", f"corral.actors.bench.{module}", str(updates), *extra]
    done = subprocess.run(command, capture_output=True, timeout=900)
    if done.returncode != 0:
        said = done.stderr.decode(errors="replace").strip()[-2000:]
        raise FloodFailed(f"{module} exited {done.returncode}: {said}")
    run = FloodRun(**orjson.loads(done.stdout))
    if run.updates != updates or not run.in_order:
        # A reader that lost, added or reordered chunks measured another job.
        order = "in order" if run.in_order else "out of order"
        raise FloodFailed(f"{module} read {run.updates} of {updates} updates, {order}")
    return run


def write_run(run: FloodRun) -> None:
    """A side's process hands its figures to `_run_side`: one JSON object on stdout."""
    sys.stdout.buffer.write(orjson.dumps(attrs.asdict(run)))
    sys.stdout.buffer.flush()
