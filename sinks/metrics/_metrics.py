"""`Metrics`: one registry per Runtime, and everything that feeds it.

    metrics = Metrics()
    runtime = Runtime(metrics=metrics)          # binds it: sink, observer, channels
    server = await metrics.serve_http(port=9464)   # GET /metrics on 127.0.0.1
    ...
    await server.aclose()

What flows in: each session's records through its `MetricsSink` (made by
`metrics.sink(session_id, agent_id, dir)`, a Runtime `SinkFactory`); agent
process and wire telemetry through `metrics.observer`; live channel
statistics pulled at scrape time from the `channels` callable (with
`retire_channels` when a session ends, for exact totals), plus any
`add_channels` sources outside the Runtime (the line writer's); lines written to
the app through `count_lines(stream)`; sink health through `sink_error`,
`transcript_written`, `transcript_fsynced`. What flows out: the exposition
of `metrics.registry`, a fresh `CollectorRegistry` (never the global
default), over HTTP, ASGI or `render()`.

Bounded cardinality: agent ids, models and queues are capped (`LabelCap`);
every other label is a closed set.

One registry per Runtime: `channels` (or `set_channels`) binds the Metrics
to one Runtime's channels, and a second binding raises `MetricsBoundError`
instead of silently replacing the first Runtime's channels (its sessions
would still count, but its queues would vanish from the exposition).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable
from importlib import metadata

from prometheus_client.registry import CollectorRegistry

from ..lines import ByteStream
from ._channels import COUNTER_NAMES, GAUGE_NAMES, ChannelCollector, ChannelSource, StatsSource
from ._families import Families
from ._http import DEFAULT_HOST, AsgiApp, Exposition, MetricsServer
from ._labels import LabelCap
from ._lines import LineCounter
from ._observer import ProcessObserver
from ._session import MetricsSink, SessionMetrics
from ._zeros import zero

__all__ = ["DEFAULT_PORT", "Metrics", "MetricsBoundError"]

DEFAULT_PORT = 9464


class MetricsBoundError(RuntimeError):
    """A `Metrics` already bound to one Runtime's channels was given another's."""


def _version() -> str:
    try:
        return metadata.version("corral")
    except metadata.PackageNotFoundError:
        return "0+unknown"


class Metrics:
    def __init__(
        self,
        *,
        channels: ChannelSource | None = None,
        version: str | None = None,
        agent_limit: int = 32,
        model_limit: int = 16,
        queue_limit: int = 64,
        node_limit: int = 64,
        wall_clock: Callable[[], float] = time.time,
    ) -> None:
        self.registry = CollectorRegistry(auto_describe=True)
        self.families = Families()
        overflow = self.families.label_overflow
        self._agent_limit = agent_limit
        self._agents = LabelCap(agent_limit, on_overflow=lambda: overflow.inc(("agent",)))
        self._models = LabelCap(model_limit, on_overflow=lambda: overflow.inc(("model",)))
        queues = LabelCap(queue_limit, on_overflow=lambda: overflow.inc(("queue",)))
        self._nodes = LabelCap(node_limit, on_overflow=lambda: overflow.inc(("node",)))
        self._wall_clock = wall_clock
        self.observer = ProcessObserver(self.families, self._agents)
        self.channels = ChannelCollector(queues, channels)
        self.families.build_info.set((version if version is not None else _version(),), 1)
        self.registry.register(self.families.store)
        self.registry.register(self.channels)
        self.exposition = Exposition(self.registry)

    # ---- inputs --------------------------------------------------------------

    def sink(self, session_id: str, agent_id: str, dir: str = "") -> MetricsSink:
        """A `SinkFactory`: the metrics stage of one session."""
        agent = self._agents(agent_id)
        self.observer.bind(session_id, agent)
        session = SessionMetrics(
            self.families,
            session_id=session_id,
            agent=agent,
            models=self._models,
            wall_clock=self._wall_clock,
            on_finish=lambda: self.observer.unbind(session_id),
        )
        return MetricsSink(session)

    def zero(self, agents: Iterable[str]) -> None:
        """Create every labelled series for these agents at zero: a fresh install
        shows 0 on its dashboards, not "No data" (see `_zeros`).

        At most the agent cap's worth: agents past it are not counted as an
        overflow here (none of them has run); they meet the cap when they do.
        """
        known = list(dict.fromkeys(agents))[: self._agent_limit]
        zero(self.families, [self._agents(agent) for agent in known])

    def set_channels(self, source: ChannelSource) -> None:
        """Bind to one Runtime: its live channels (called at each scrape, on the event loop).

        Raises `MetricsBoundError` when already bound: one registry per Runtime.
        """
        if self.channels.source is not None:
            raise MetricsBoundError(
                "this Metrics already reads another Runtime's channels; give each "
                "Runtime its own Metrics (one registry per Runtime)"
            )
        self.channels.source = source

    def add_channels(self, source: ChannelSource) -> None:
        """Also read these channels, which belong to no Runtime (the line writer's).

        A channel that the Runtime's source returns too is counted once.
        """
        self.channels.extra = (*self.channels.extra, source)

    def node_sessions(self, node: str, change: int) -> None:
        """A session placed on (+1) or gone from (-1) a Ray node (`serve --ray`)."""
        self.families.node_sessions.add((self._nodes(node),), change)

    def node_lost(self, node: str) -> None:
        self.families.nodes_lost.inc((self._nodes(node),))

    def retire_channels(self, channels: Iterable[StatsSource]) -> None:
        """A session ended: keep its channels' final totals (call once they are closed)."""
        self.channels.retire(channels)

    def count_lines(self, stream: ByteStream) -> LineCounter:
        """Wrap the app's output stream to count line-protocol lines by type."""
        return LineCounter(stream, self.families)

    def sink_error(self, sink: str) -> None:
        self.families.sink_errors.inc((sink,))

    def transcript_written(self, nbytes: int) -> None:
        self.families.transcript_bytes.inc((), float(nbytes))

    def transcript_fsynced(self, seconds: float) -> None:
        self.families.transcript_fsync.observe((), max(0.0, seconds))

    # ---- outputs -------------------------------------------------------------

    def render(self, accept: str = "", accept_encoding: str = "") -> tuple[bytes, str]:
        """The exposition and its content type (text format unless `accept` asks otherwise)."""
        body, headers = self.exposition.render(accept, accept_encoding)
        return body, headers["Content-Type"]

    def asgi_app(self) -> AsgiApp:
        return self.exposition.asgi_app()

    async def serve_http(self, host: str = DEFAULT_HOST, port: int = DEFAULT_PORT) -> MetricsServer:
        """Start `GET /metrics` on host:port; `await server.aclose()` stops it.

        Raises `MetricsServerError` (with a message for the user) when the
        address cannot be bound. Port 0 picks a free port (`server.port`).
        """
        server = MetricsServer(self.exposition, host, port)
        await server.start()
        return server

    def metric_names(self) -> frozenset[str]:
        """Every series name this registry can expose (`_total`, `_bucket`, ...)."""
        names = {name for family in self.families.store.families for name in family.sample_names}
        return frozenset(names | set(GAUGE_NAMES) | set(COUNTER_NAMES))
