"""Channel statistics read at scrape time: per-queue gauges and monotonic totals."""

from __future__ import annotations

import asyncio

import pytest
from corral.pipeline.channels import Channel
from corral.sinks.metrics import Metrics, MetricsBoundError

from tests.support.waiting import settled
from tests.unit.metrics.conftest import value


def session_channels(session_id: str) -> list[Channel[int]]:
    return [Channel(4, name=f"{session_id}/driver"), Channel(8, name=f"{session_id}/lines")]


def test_live_channels_are_summed_per_queue_without_session_ids() -> None:
    live = session_channels("s1") + session_channels("s2")
    live[0].try_send(1)
    live[2].try_send(1)
    live[2].try_send(2)
    metrics = Metrics(version="test", channels=lambda: live)
    assert value(metrics, "corral_channels_live", queue="driver") == 2
    assert value(metrics, "corral_channel_depth", queue="driver") == 3
    assert value(metrics, "corral_channel_capacity", queue="driver") == 8
    assert value(metrics, "corral_channel_fill_ratio_max", queue="driver") == 0.5
    assert value(metrics, "corral_channel_items_sent_total", queue="driver") == 3
    assert value(metrics, "corral_channels_live", queue="lines") == 2


def test_a_retired_channel_keeps_its_totals_and_leaves_the_gauges() -> None:
    live = session_channels("s1")
    live[0].try_send(1)
    live[0].try_receive()
    metrics = Metrics(version="test", channels=lambda: live)
    metrics.retire_channels(list(live))
    live.clear()
    assert value(metrics, "corral_channel_items_received_total", queue="driver") == 1
    assert value(metrics, "corral_channels_live", queue="driver") == 0


def test_retiring_a_channel_still_listed_does_not_count_it_twice() -> None:
    live = session_channels("s1")
    live[0].try_send(1)
    metrics = Metrics(version="test", channels=lambda: live)
    metrics.retire_channels(live)
    assert value(metrics, "corral_channel_items_sent_total", queue="driver") == 1


def test_a_channel_that_vanished_between_scrapes_keeps_its_final_totals() -> None:
    live = session_channels("s1")
    metrics = Metrics(version="test", channels=lambda: live)
    metrics.render()  # the first scrape sees the channels
    live[0].try_send(1)
    live[0].try_send(2)
    live.clear()  # the session ended; nobody called retire
    assert value(metrics, "corral_channel_items_sent_total", queue="driver") == 2
    assert value(metrics, "corral_channel_items_sent_total", queue="driver") == 2


async def test_a_blocked_producer_shows_as_a_waiting_sender_then_as_blocked_time() -> None:
    channel: Channel[int] = Channel(1, name="s1/engine")
    metrics = Metrics(version="test", channels=lambda: [channel])
    channel.try_send(1)
    sender = asyncio.ensure_future(channel.send(2))
    await settled()  # the sender ran until it blocked
    assert value(metrics, "corral_channel_waiting_senders", queue="engine") == 1
    assert value(metrics, "corral_channel_fill_ratio_max", queue="engine") == 1
    await channel.receive()
    await sender
    assert value(metrics, "corral_channel_waiting_senders", queue="engine") == 0
    assert value(metrics, "corral_channel_blocked_seconds_total", queue="engine") > 0


def test_queues_beyond_the_cap_become_other() -> None:
    live = [Channel[int](1, name=f"s1/sink-{index}") for index in range(3)]
    metrics = Metrics(version="test", channels=lambda: live, queue_limit=2)
    assert value(metrics, "corral_channels_live", queue="other") == 1


def test_the_source_can_be_set_after_construction() -> None:
    metrics = Metrics(version="test")
    assert value(metrics, "corral_channels_live", queue="driver") == 0
    live = session_channels("s1")
    metrics.set_channels(lambda: live)
    assert value(metrics, "corral_channels_live", queue="driver") == 1


def test_a_second_binding_is_refused_and_the_first_stays() -> None:
    first, second = session_channels("s1"), session_channels("s2")
    metrics = Metrics(version="test")
    metrics.set_channels(lambda: first)
    with pytest.raises(MetricsBoundError, match="one registry per Runtime"):
        metrics.set_channels(lambda: second)
    assert value(metrics, "corral_channels_live", queue="driver") == 1
    first[0].try_send(1)
    assert value(metrics, "corral_channel_depth", queue="driver") == 1


def test_channels_given_at_construction_are_a_binding() -> None:
    metrics = Metrics(version="test", channels=lambda: session_channels("s1"))
    with pytest.raises(MetricsBoundError):
        metrics.set_channels(lambda: session_channels("s2"))


def test_added_channels_are_read_beside_the_runtime_ones_and_each_counted_once() -> None:
    session = session_channels("s1")
    writer = [Channel(16, name="lines/replies")]
    metrics = Metrics(version="test", channels=lambda: session)
    metrics.add_channels(lambda: [*session, *writer])
    assert value(metrics, "corral_channels_live", queue="driver") == 1
    assert value(metrics, "corral_channels_live", queue="lines/replies") == 1
