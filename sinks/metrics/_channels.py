"""Channel statistics, read at scrape time: depth, capacity, flow, backpressure.

Every edge of the pipeline is a bounded `Channel` with a frozen
`statistics()` snapshot. At each scrape the collector calls its sources
(callables returning live channels: the Runtime's `source`, every live
session's; and any `extra` ones, such as the line writer's), counts each
channel once however many sources return it, and sums the snapshots per
queue, the channel's name without its session id (`s12/driver` is queue
`driver`):

- gauges: live channels, items queued, capacity, the fullest channel's
  fill ratio, senders waiting (blocked by backpressure now);
- counters: items sent into and received out of the queue, and seconds
  senders spent blocked. Channels come and go with sessions, so a counter
  is the sum over live channels plus the final totals of every channel
  that has gone. A channel is folded into those totals when `retire` is
  called with it (exact: the Runtime calls it when a session ends), or,
  failing that, at the first scrape that no longer sees it (the
  collector keeps a reference to what the previous scrape saw, so those
  totals are exact too; only a channel born and gone between two scrapes
  without `retire` is missed).

The source is called on the scraping thread, which must be the event loop
running the sessions (channels are not thread-safe); `_http` ensures it.
"""

from __future__ import annotations

import weakref
from collections.abc import Callable, Iterable, Iterator
from typing import Protocol

from prometheus_client.metrics_core import CounterMetricFamily, GaugeMetricFamily, Metric
from prometheus_client.registry import Collector

from ...pipeline.channels import ChannelStats
from ._labels import queue_label

__all__ = ["ChannelCollector", "ChannelSource", "StatsSource"]


class StatsSource(Protocol):
    def statistics(self) -> ChannelStats: ...


ChannelSource = Callable[[], Iterable[StatsSource]]

_GAUGES = (
    ("corral_channels_live", "Live channels per queue (one per session for session queues)."),
    ("corral_channel_depth", "Items waiting in the queue's channels now."),
    ("corral_channel_capacity", "Capacity of the queue's live channels, summed."),
    ("corral_channel_fill_ratio_max", "Depth over capacity of the queue's fullest channel."),
    ("corral_channel_waiting_senders", "Producers blocked on a full channel now (backpressure)."),
)
_COUNTERS = (
    ("corral_channel_items_sent_total", "Items put into the queue.", ""),
    ("corral_channel_items_received_total", "Items taken out of the queue.", ""),
    (
        "corral_channel_blocked_seconds_total",
        "Seconds producers spent blocked on the queue's full channels (backpressure).",
        "seconds",
    ),
)

GAUGE_NAMES = tuple(name for name, _ in _GAUGES)
COUNTER_NAMES = tuple(name for name, _, _ in _COUNTERS)


class _Queue:
    __slots__ = ("capacity", "depth", "fill", "flow", "live", "waiting")

    def __init__(self) -> None:
        self.live = 0
        self.depth = 0
        self.capacity = 0
        self.fill = 0.0
        self.waiting = 0
        self.flow = [0.0, 0.0, 0.0]  # sent, received, blocked seconds

    def add_live(self, stats: ChannelStats) -> None:
        self.live += 1
        self.depth += stats.depth
        self.capacity += stats.capacity
        self.fill = max(self.fill, stats.depth / stats.capacity if stats.capacity else 0.0)
        self.waiting += stats.waiting_senders
        self.add_flow(stats)

    def add_flow(self, stats: ChannelStats) -> None:
        self.flow[0] += stats.sent_total
        self.flow[1] += stats.received_total
        self.flow[2] += stats.blocked_seconds_total

    def gauges(self) -> tuple[float, ...]:
        return (self.live, self.depth, self.capacity, self.fill, self.waiting)


class ChannelCollector(Collector):
    def __init__(self, queues: Callable[[str], str], source: ChannelSource | None = None) -> None:
        self._queues = queues  # caps the queue label
        self.source = source
        self.extra: tuple[ChannelSource, ...] = ()
        self._seen: dict[int, StatsSource] = {}
        self._retired_channels: weakref.WeakSet[StatsSource] = weakref.WeakSet()
        self._retired: dict[str, _Queue] = {}

    def retire(self, channels: Iterable[StatsSource]) -> None:
        """These channels are done: keep their final totals, stop reading them."""
        for channel in channels:
            if channel in self._retired_channels:
                continue
            self._fold(channel)
            self._retired_channels.add(channel)
            self._seen.pop(id(channel), None)

    def _fold(self, channel: StatsSource) -> None:
        stats = channel.statistics()
        queue = self._queues(queue_label(stats.name))
        self._retired.setdefault(queue, _Queue()).add_flow(stats)

    def _live(self) -> dict[int, StatsSource]:
        sources = self.extra if self.source is None else (self.source, *self.extra)
        return {
            id(channel): channel
            for source in sources
            for channel in source()
            if channel not in self._retired_channels
        }

    def _snapshot(self) -> dict[str, _Queue]:
        live = self._live()
        for key, channel in self._seen.items():
            if key not in live:
                self._fold(channel)  # gone since the last scrape
                self._retired_channels.add(channel)
        self._seen = live
        queues: dict[str, _Queue] = {}
        for queue, retired in self._retired.items():
            queues[queue] = _Queue()
            queues[queue].flow = list(retired.flow)
        for channel in live.values():
            stats = channel.statistics()
            queue = self._queues(queue_label(stats.name))
            queues.setdefault(queue, _Queue()).add_live(stats)
        return queues

    def collect(self) -> Iterator[Metric]:
        queues = sorted(self._snapshot().items())
        for index, (name, help) in enumerate(_GAUGES):
            gauge = GaugeMetricFamily(name, help, labels=["queue"])
            for queue, totals in queues:
                gauge.add_metric([queue], totals.gauges()[index])
            yield gauge
        for index, (name, help, unit) in enumerate(_COUNTERS):
            counter = CounterMetricFamily(name, help, labels=["queue"], unit=unit)
            for queue, totals in queues:
                counter.add_metric([queue], totals.flow[index])
            yield counter

    def describe(self) -> Iterator[Metric]:
        for name, help in _GAUGES:
            yield GaugeMetricFamily(name, help, labels=["queue"])
        for name, help, unit in _COUNTERS:
            yield CounterMetricFamily(name, help, labels=["queue"], unit=unit)
