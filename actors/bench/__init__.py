"""`corral bench`: throughput, latency, scale and backpressure, side by side.

Everything is measured in one run and reported as ratios against baselines
measured in the same run (see each module), so a busy machine shifts both
sides alike. `run_bench` prints a table and returns the figures; `--json`
writes them with their baselines.
"""

from ._run import BenchOptions, run_bench

__all__ = ["BenchOptions", "run_bench"]
