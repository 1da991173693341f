"""`corral bench --ray ADDRESS`: the scale phase on Ray, beside the single process.

For 1, 10, 100 and 1000 concurrent mock sessions (`--quick`: up to 100),
each count is measured twice in the same run, each in a fresh process
(`_scale.py`'s `measure_scale_apart` and its `__main__`): all sessions in
one process (the baseline), then every session on a Ray host with the
front pumping their records (`serve --ray`'s path). Figures: events per
second, the front's event-loop lag, and the front's memory per session
(the hosts are other processes; their memory is Ray's to report).

`local` starts a private Ray instance inside a private network namespace
(`unshare -n`, as root) where the machine allows it, so nothing binds a
public interface; otherwise where it runs. The single-process figures are
the baseline; the ratio says what the hosts buy (more cores) and cost (a
Ray call per batch, pickling) on this machine.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from collections.abc import Sequence
from typing import Any, TextIO

import attrs
import orjson

from ._scale import Scale, measure_scale_apart

__all__ = ["RayScale", "measure_on_ray", "run_ray_bench"]

COUNTS = (1, 10, 100, 1000)
QUICK_COUNTS = (1, 10, 100)
EVENTS = 400
QUICK_EVENTS = 50
_NAMESPACE = ["unshare", "-n", "sh", "-c", 'ip link set lo up && exec "$@"', "sh"]


@attrs.frozen(kw_only=True)
class RayScale:
    single: Scale
    ray: Scale

    @property
    def ratio(self) -> float:
        """Ray's events per second over the single process's."""
        return self.ray.events_per_s / self.single.events_per_s


def measure_on_ray(sessions: int, events: int, address: str) -> Scale:
    """The scale phase's figures for `sessions` on Ray, measured in a fresh process."""
    argv = [
        sys.executable, "-m", "corral.actors.bench._scale",
        str(sessions), str(events), "asyncio", address,
    ]  # fmt: skip
    if address == "local" and os.geteuid() == 0 and shutil.which("unshare"):
        argv = [*_NAMESPACE, *argv]
    environ = {**os.environ, "RAY_USAGE_STATS_ENABLED": "0"}
    done = subprocess.run(argv, capture_output=True, check=True, timeout=1800, env=environ)
    last = done.stdout.strip().rsplit(b"\n", 1)[-1]  # the figures are the last line
    return Scale(**orjson.loads(last))


def run_ray_bench(
    address: str, *, quick: bool, counts: Sequence[int] | None = None, events: int | None = None
) -> list[RayScale]:
    counts = counts or (QUICK_COUNTS if quick else COUNTS)
    per_session = events or (QUICK_EVENTS if quick else EVENTS)
    rows = []
    for count in counts:
        print(f"corral: bench --ray: {count} sessions", file=sys.stderr, flush=True)
        single = measure_scale_apart(count, per_session, "asyncio")
        rows.append(RayScale(single=single, ray=measure_on_ray(count, per_session, address)))
    return rows


def figures(rows: Sequence[RayScale]) -> list[dict[str, Any]]:
    """The rows as JSON (`--json`)."""
    return [
        {"single": attrs.asdict(row.single), "ray": attrs.asdict(row.ray), "ratio": row.ratio}
        for row in rows
    ]


def print_table(rows: Sequence[RayScale], out: TextIO) -> None:
    out.write("scale on Ray vs one process (asyncio loop; memory: the front's)\n")
    out.write(
        f"{'sessions':>8}  {'events/s 1p':>12}  {'events/s ray':>12}  {'ratio':>6}  "
        f"{'lag ms 1p':>9}  {'lag ms ray':>10}  {'KiB/sess 1p':>11}  {'KiB/sess ray':>12}\n"
    )
    for row in rows:
        single, ray = row.single, row.ray
        out.write(
            f"{single.sessions:>8}  {single.events_per_s:>12,.0f}  {ray.events_per_s:>12,.0f}  "
            f"{row.ratio:>6.2f}  {single.max_lag_ms:>9.1f}  {ray.max_lag_ms:>10.1f}  "
            f"{single.rss_per_session_kib:>11.1f}  {ray.rss_per_session_kib:>12.1f}\n"
        )
