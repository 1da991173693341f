"""The metric store: plain dictionaries, read by one custom collector.

Sinks and observers update `Counter`, `Gauge` and `Histogram` families
(label tuples in, numbers out); `Store.collect()` turns them into
prometheus-client metric families at scrape time, and prometheus-client
writes the exposition (text or OpenMetrics with exemplars).

Why not prometheus-client's own `Counter` and friends: they add a
`_created` series per label set unless a process-wide switch is flipped
(global state, which corral avoids), and they take a lock on every update.
Here every update happens on the event loop that runs the sessions, and so
does every scrape (see `_http`), so plain dictionaries are consistent
without locks.

Invariants: label tuples have exactly the family's label names, in order;
counters only grow; histogram buckets are sorted and end with +Inf at
collect time; a family with no samples is still described (its HELP and
TYPE lines appear), so dashboards and tests can rely on every name.
"""

from __future__ import annotations

import bisect
import math
from collections.abc import Iterator, Sequence

from prometheus_client.metrics_core import (
    CounterMetricFamily,
    GaugeMetricFamily,
    HistogramMetricFamily,
    Metric,
)
from prometheus_client.registry import Collector
from prometheus_client.samples import Exemplar
from prometheus_client.utils import floatToGoString

__all__ = ["Counter", "Family", "Gauge", "Histogram", "Labels", "Store"]

Labels = tuple[str, ...]


class Family:
    kind = ""

    def __init__(self, name: str, help: str, labels: Sequence[str] = (), unit: str = "") -> None:
        self.name = name
        self.help = help
        self.labelnames = tuple(labels)
        self.unit = unit

    @property
    def sample_names(self) -> tuple[str, ...]:
        """The series names this family writes in the text exposition."""
        return (self.name,)

    def empty(self) -> Metric:
        """The prometheus-client family with no samples yet."""
        raise NotImplementedError

    def collect(self) -> Metric:
        raise NotImplementedError


class Counter(Family):
    kind = "counter"

    def __init__(self, name: str, help: str, labels: Sequence[str] = (), unit: str = "") -> None:
        if not name.endswith("_total"):
            raise ValueError(f"counter {name} must end in _total")
        super().__init__(name, help, labels, unit)
        self.values: dict[Labels, float] = {}
        self._exemplars: dict[Labels, Exemplar] = {}

    def inc(
        self, labels: Labels, amount: float = 1.0, exemplar: dict[str, str] | None = None
    ) -> None:
        if amount < 0:
            raise ValueError(f"{self.name}: a counter cannot decrease ({amount})")
        self.values[labels] = self.values.get(labels, 0.0) + amount
        if exemplar:
            self._exemplars[labels] = Exemplar(exemplar, amount)

    def empty(self) -> CounterMetricFamily:
        return CounterMetricFamily(self.name, self.help, labels=self.labelnames, unit=self.unit)

    def collect(self) -> Metric:
        family = self.empty()
        for labels, value in list(self.values.items()):
            family.add_metric(labels, value, exemplar=self._exemplars.get(labels))
        return family


class Gauge(Family):
    kind = "gauge"

    def __init__(self, name: str, help: str, labels: Sequence[str] = (), unit: str = "") -> None:
        super().__init__(name, help, labels, unit)
        self.values: dict[Labels, float] = {}

    def add(self, labels: Labels, amount: float) -> None:
        self.values[labels] = self.values.get(labels, 0.0) + amount

    def set(self, labels: Labels, value: float) -> None:
        self.values[labels] = value

    def empty(self) -> GaugeMetricFamily:
        return GaugeMetricFamily(self.name, self.help, labels=self.labelnames, unit=self.unit)

    def collect(self) -> Metric:
        family = self.empty()
        for labels, value in list(self.values.items()):
            family.add_metric(labels, value)
        return family


class _Cell:
    __slots__ = ("count", "counts", "exemplars", "total")

    def __init__(self, width: int) -> None:
        self.counts = [0] * width  # per bucket, not cumulative; last is +Inf
        self.exemplars: dict[int, Exemplar] = {}
        self.total = 0.0
        self.count = 0


class Histogram(Family):
    kind = "histogram"

    def __init__(
        self,
        name: str,
        help: str,
        labels: Sequence[str] = (),
        *,
        buckets: Sequence[float],
        unit: str = "",
    ) -> None:
        super().__init__(name, help, labels, unit)
        bounds = sorted(float(b) for b in buckets if not math.isinf(b))
        if not bounds or len(set(bounds)) != len(bounds):
            raise ValueError(f"{name}: buckets must be distinct and finite, got {buckets}")
        self.bounds = tuple(bounds)
        self.cells: dict[Labels, _Cell] = {}

    @property
    def sample_names(self) -> tuple[str, ...]:
        return (f"{self.name}_bucket", f"{self.name}_sum", f"{self.name}_count")

    def touch(self, labels: Labels) -> _Cell:
        """The series of these labels, created empty (count 0) when new."""
        cell = self.cells.get(labels)
        if cell is None:
            cell = self.cells[labels] = _Cell(len(self.bounds) + 1)
        return cell

    def observe(
        self, labels: Labels, value: float, exemplar: dict[str, str] | None = None, times: int = 1
    ) -> None:
        """`times`: that many observations of the same value."""
        cell = self.touch(labels)
        index = bisect.bisect_left(self.bounds, value)  # `le` buckets: value <= bound
        cell.counts[index] += times
        cell.total += value * times
        cell.count += times
        if exemplar:
            cell.exemplars[index] = Exemplar(exemplar, value)

    def empty(self) -> HistogramMetricFamily:
        return HistogramMetricFamily(self.name, self.help, labels=self.labelnames, unit=self.unit)

    def collect(self) -> Metric:
        family = self.empty()
        edges = [_le(bound) for bound in self.bounds] + ["+Inf"]
        for labels, cell in list(self.cells.items()):
            running = 0
            buckets: list[tuple[str, float] | tuple[str, float, Exemplar]] = []
            for index, edge in enumerate(edges):
                running += cell.counts[index]
                exemplar = cell.exemplars.get(index)
                if exemplar is None:
                    buckets.append((edge, float(running)))
                else:
                    buckets.append((edge, float(running), exemplar))
            family.add_metric(labels, buckets, cell.total)
        return family


def _le(bound: float) -> str:
    """A bucket bound as prometheus-client writes `le` (Go's float format)."""
    text: str = floatToGoString(bound)  # type: ignore[no-untyped-call]
    return text


class Store(Collector):
    """A set of families, collected in the order they were added."""

    def __init__(self) -> None:
        self._families: list[Family] = []

    def add(self, family: Family) -> None:
        if any(known.name == family.name for known in self._families):
            raise ValueError(f"metric {family.name} defined twice")
        self._families.append(family)

    @property
    def families(self) -> tuple[Family, ...]:
        return tuple(self._families)

    def collect(self) -> Iterator[Metric]:
        for family in self._families:
            yield family.collect()

    def describe(self) -> Iterator[Metric]:
        for family in self._families:
            yield family.empty()
