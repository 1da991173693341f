"""Prometheus metrics: one registry per Runtime, exposition on 127.0.0.1.

`Metrics` is the entry point (see `_metrics` for the wiring); `parse_address`
reads `--metrics HOST:PORT`; `MetricsServerError` says why the exposition
could not start; `MetricsBoundError` refuses a second Runtime.
"""

from ._http import MetricsServer, MetricsServerError, parse_address
from ._labels import LabelCap
from ._metrics import DEFAULT_PORT, Metrics, MetricsBoundError
from ._session import MetricsSink, SessionMetrics

__all__ = [
    "DEFAULT_PORT",
    "LabelCap",
    "Metrics",
    "MetricsBoundError",
    "MetricsServer",
    "MetricsServerError",
    "MetricsSink",
    "SessionMetrics",
    "parse_address",
]
