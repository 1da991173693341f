"""A fresh `Metrics` (and so a fresh registry) for every test."""

from __future__ import annotations

import pytest
from corral.sinks.metrics import Metrics

from tests.unit.metrics.records import START, Stream

NOW = START + 100.0  # the metrics sink's wall clock: 100 s after the streams start


def feed(metrics: Metrics, *streams: Stream) -> None:
    """Play each stream through its own metrics sink, as the fan-out would."""
    for stream in streams:
        sink = metrics.sink(stream.session_id, stream.agent, "/tmp")
        for record in stream.records:
            sink.session.observe(record)
        sink.session.finish()


def value(metrics: Metrics, name: str, **labels: str) -> float:
    found = metrics.registry.get_sample_value(name, labels)
    return 0.0 if found is None else found


@pytest.fixture
def metrics() -> Metrics:
    return Metrics(version="test", wall_clock=lambda: NOW)
