"""The metric store: counters only grow, histograms are cumulative, names are known."""

from __future__ import annotations

import pytest
from corral.sinks.metrics._store import Counter, Histogram, Store


def test_a_counter_name_must_end_in_total() -> None:
    with pytest.raises(ValueError):
        Counter("corral_things", "Things.")


def test_a_counter_refuses_to_decrease() -> None:
    counter = Counter("corral_things_total", "Things.", ["kind"])
    with pytest.raises(ValueError):
        counter.inc(("a",), -1)


def test_histogram_buckets_are_cumulative_and_end_with_inf() -> None:
    histogram = Histogram("corral_wait_seconds", "Wait.", buckets=(1, 5), unit="seconds")
    for seconds in (0.5, 1, 3, 9):
        histogram.observe((), seconds)
    samples = {(s.name, s.labels.get("le")): s.value for s in histogram.collect().samples}
    assert samples[("corral_wait_seconds_bucket", "1.0")] == 2  # le: 1 is inside
    assert samples[("corral_wait_seconds_bucket", "5.0")] == 3
    assert samples[("corral_wait_seconds_bucket", "+Inf")] == 4
    assert samples[("corral_wait_seconds_sum", None)] == 13.5


def test_a_histogram_refuses_repeated_buckets() -> None:
    with pytest.raises(ValueError):
        Histogram("corral_x_seconds", "X.", buckets=(1, 1))


def test_a_name_defined_twice_is_refused() -> None:
    store = Store()
    store.add(Counter("corral_things_total", "Things."))
    with pytest.raises(ValueError):
        store.add(Counter("corral_things_total", "Other things."))


def test_a_family_without_samples_is_still_described() -> None:
    store = Store()
    store.add(Counter("corral_things_total", "Things.", ["kind"]))
    (family,) = list(store.collect())
    assert family.name == "corral_things"
    assert family.samples == []
