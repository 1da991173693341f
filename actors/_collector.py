"""How corral's own processes run Python's garbage collector.

A supervisor's heap is mostly short-lived records in flight plus a large,
steady population of long-lived ones (sessions, channels, compiled
patterns). With CPython's default thresholds (700, 10, 10) every tenth
young collection sweeps the middle generation, and every hundredth the
whole heap: measured with 1,000 streaming sessions in one process (the
bench's scale phase), the full sweeps, 0.4–1 s each, were most of the event
loop's lag and halved the throughput. corral's own processes (`corral ...`,
the bench's child processes, a Ray host) sweep the older generations five
and fifty times less often; cycles are still collected, later. An app that
embeds corral (`Runtime` in its own process) keeps its own settings: this
is called only where corral owns the process.
"""

from __future__ import annotations

import gc

__all__ = ["THRESHOLDS", "tune_collector"]

THRESHOLDS = (700, 50, 100)  # young, middle, full: see the module's header


def tune_collector() -> None:
    gc.set_threshold(*THRESHOLDS)
