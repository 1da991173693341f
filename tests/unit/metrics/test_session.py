"""A session's records become counters, gauges and histograms (SessionMetrics)."""

from __future__ import annotations

import asyncio

import attrs
import pytest
from corral.pipeline.channels import Channel
from corral.pipeline.errors import ErrorKind
from corral.pipeline.events import (
    Cancelled,
    Completed,
    CompletionSource,
    ContextCompacted,
    Diagnostic,
    DiagnosticLevel,
    Mcp,
    TextDelta,
    ToolStatus,
    ToolUpdate,
    ToolUpdated,
)
from corral.pipeline.records import SinkItem
from corral.sinks.metrics import Metrics, SessionMetrics

from tests.support.waiting import settled
from tests.unit.metrics.conftest import feed, value
from tests.unit.metrics.records import Stream

RUNNING, DONE = ToolStatus.RUNNING, ToolStatus.COMPLETED


def open_session(metrics: Metrics, stream: Stream) -> SessionMetrics:
    """Feed without finishing: the session is still open."""
    session = metrics.sink(stream.session_id, stream.agent, "/tmp").session
    for record in stream.records:
        session.observe(record)
    return session


def test_an_open_session_is_started_and_active(metrics: Metrics) -> None:
    open_session(metrics, Stream().opened())
    assert value(metrics, "corral_sessions_started_total", agent="mock") == 1
    assert value(metrics, "corral_sessions_active", agent="mock") == 1
    assert value(metrics, "corral_sessions_in_status", agent="mock", status="Idle") == 1


def test_a_closed_session_ends_with_its_outcome_and_duration(metrics: Metrics) -> None:
    feed(metrics, Stream().opened().at(90).closed("exited"))
    assert value(metrics, "corral_sessions_ended_total", agent="mock", outcome="exited") == 1
    assert value(metrics, "corral_sessions_active", agent="mock") == 0
    assert value(metrics, "corral_session_duration_seconds_sum", agent="mock") == 90


def test_a_stream_without_closed_ends_aborted_and_gives_back_every_gauge(
    metrics: Metrics,
) -> None:
    stream = Stream().opened().turn_started().tool("x1", RUNNING).permission("r1", "x2")
    feed(metrics, stream)
    assert value(metrics, "corral_sessions_ended_total", agent="mock", outcome="aborted") == 1
    for gauge in ("corral_sessions_active", "corral_turns_running", "corral_tool_calls_running"):
        assert value(metrics, gauge, agent="mock") == 0, gauge
    assert value(metrics, "corral_sessions_in_status", agent="mock", status="Working") == 0
    assert value(metrics, "corral_requests_pending", agent="mock", request_kind="Permission") == 0
    unfinished = dict(agent="mock", kind="Execute", status="Unfinished")
    assert value(metrics, "corral_tool_calls_total", **unfinished) == 1


def test_status_changes_move_the_session_between_statuses(metrics: Metrics) -> None:
    open_session(metrics, Stream().opened().turn_started())
    assert value(metrics, "corral_sessions_in_status", agent="mock", status="Idle") == 0
    assert value(metrics, "corral_sessions_in_status", agent="mock", status="Working") == 1


def test_a_turn_is_counted_by_origin_and_stop_with_its_duration(metrics: Metrics) -> None:
    stream = Stream().opened().at(10).turn_started().at(17.5).turn_ended(Cancelled())
    feed(metrics, stream.closed())
    assert value(metrics, "corral_turns_started_total", agent="mock", origin="prompt") == 1
    assert value(metrics, "corral_turns_ended_total", agent="mock", stop="Cancelled") == 1
    assert value(metrics, "corral_turn_duration_seconds_sum", agent="mock", stop="Cancelled") == 7.5
    assert value(metrics, "corral_turns_running", agent="mock") == 0


def test_an_inferred_end_is_completed_and_counted_as_inferred(metrics: Metrics) -> None:
    stream = Stream().opened().turn_started().turn_ended(Completed(CompletionSource.INFERRED))
    feed(metrics, stream.closed())
    assert value(metrics, "corral_turns_ended_total", agent="mock", stop="Completed") == 1
    assert value(metrics, "corral_turns_inferred_total", agent="mock") == 1


def test_time_to_first_output_is_observed_once_per_turn(metrics: Metrics) -> None:
    stream = Stream().opened().at(0).turn_started().at(2)
    stream.event(TextDelta(message_id="m1", text="a")).at(5)
    stream.event(TextDelta(message_id="m1", text="b")).turn_ended()
    feed(metrics, stream.closed())
    assert value(metrics, "corral_turn_first_output_seconds_count", agent="mock") == 1
    assert value(metrics, "corral_turn_first_output_seconds_sum", agent="mock") == 2


def test_a_turn_without_output_has_no_time_to_first_output(metrics: Metrics) -> None:
    feed(metrics, Stream().opened().turn_started().turn_ended().closed())
    assert value(metrics, "corral_turn_first_output_seconds_count", agent="mock") == 0


def test_a_tool_call_is_timed_from_first_sight_to_its_end(metrics: Metrics) -> None:
    stream = Stream().opened().turn_started().at(1).tool("x1", RUNNING).at(4).tool("x1", DONE)
    feed(metrics, stream.turn_ended().closed())
    assert value(metrics, "corral_tool_calls_started_total", agent="mock", kind="Execute") == 1
    done = dict(agent="mock", kind="Execute", status="Completed")
    assert value(metrics, "corral_tool_calls_total", **done) == 1
    assert value(metrics, "corral_tool_duration_seconds_sum", agent="mock", kind="Execute") == 3


def test_a_late_snapshot_of_a_finished_tool_is_not_counted_again(metrics: Metrics) -> None:
    stream = Stream().opened().turn_started().tool("x1", RUNNING).tool("x1", DONE)
    feed(metrics, stream.tool("x1", DONE).turn_ended().closed())
    done = dict(agent="mock", kind="Execute", status="Completed")
    assert value(metrics, "corral_tool_calls_total", **done) == 1
    assert value(metrics, "corral_tool_duration_seconds_count", agent="mock", kind="Execute") == 1


def test_a_tool_first_seen_finished_is_counted_without_a_duration(metrics: Metrics) -> None:
    feed(metrics, Stream().opened().turn_started().tool("x1", ToolStatus.FAILED).closed())
    failed = dict(agent="mock", kind="Execute", status="Failed")
    assert value(metrics, "corral_tool_calls_total", **failed) == 1
    assert value(metrics, "corral_tool_duration_seconds_count", agent="mock", kind="Execute") == 0


def test_an_mcp_tool_is_labelled_mcp_whatever_its_server(metrics: Metrics) -> None:
    call = ToolUpdate(id="x1", kind=Mcp(server="s-42", tool="t-9"), title="t", status=RUNNING)
    open_session(metrics, Stream().opened().turn_started().event(ToolUpdated(call)))
    assert value(metrics, "corral_tool_calls_started_total", agent="mock", kind="Mcp") == 1


def test_a_request_the_app_answers_is_pending_until_decided(metrics: Metrics) -> None:
    stream = Stream().opened().turn_started().permission("r1", "x1")
    session = open_session(metrics, stream)
    pending = dict(agent="mock", request_kind="Permission")
    assert value(metrics, "corral_requests_pending", **pending) == 1
    stream.records.clear()
    for record in stream.decided("r1", "allow_once", "app", 2.5).records:
        session.observe(record)
    assert value(metrics, "corral_requests_pending", **pending) == 0


def test_an_answered_request_counts_one_request_one_decision_and_its_wait(
    metrics: Metrics,
) -> None:
    stream = Stream().opened().turn_started().permission("r1", "x1")
    feed(metrics, stream.decided("r1", "allow_once", "app", 2.5).closed())
    kind = dict(agent="mock", request_kind="Permission")
    assert value(metrics, "corral_requests_total", tool_kind="Execute", **kind) == 1
    assert value(metrics, "corral_requests_pending", **kind) == 0
    allow = dict(decision="allow_once", decided_by="app", **kind)
    assert value(metrics, "corral_decisions_total", **allow) == 1
    assert value(metrics, "corral_request_wait_seconds_sum", **kind) == 2.5


def test_a_request_corral_decided_unseen_counts_a_request_and_a_decision(
    metrics: Metrics,
) -> None:
    stream = Stream().opened().turn_started()
    feed(metrics, stream.decided("r1", "allow_once", "mode:AutoApprove", 0, shown=False))
    kind = dict(agent="mock", request_kind="Permission")
    assert value(metrics, "corral_requests_total", tool_kind="Execute", **kind) == 1
    auto = dict(decision="allow_once", decided_by="mode:AutoApprove", **kind)
    assert value(metrics, "corral_decisions_total", **auto) == 1
    assert value(metrics, "corral_request_wait_seconds_count", **kind) == 0  # never waited


def test_a_shown_auto_decision_is_counted_once_and_never_pending(metrics: Metrics) -> None:
    stream = Stream().opened().turn_started()
    stream.permission("r1", "x1")
    stream.records[-1].extensions["corral/decision"] = {"decision": "allow_once"}  # type: ignore[union-attr]
    open_session(metrics, stream.decided("r1", "allow_once", "mode:AutoApprove", 0))
    kind = dict(agent="mock", request_kind="Permission")
    assert value(metrics, "corral_requests_total", tool_kind="Execute", **kind) == 1
    assert value(metrics, "corral_requests_pending", **kind) == 0


def test_a_rule_decision_is_labelled_rule_without_its_id(metrics: Metrics) -> None:
    stream = Stream().opened().turn_started()
    feed(metrics, stream.decided("r1", "deny_once", "rule:no-rm-17", 0, shown=False))
    deny = dict(agent="mock", request_kind="Permission", decision="deny_once")
    assert value(metrics, "corral_decisions_total", decided_by="rule", **deny) == 1


def test_tokens_are_counted_by_type_and_model(metrics: Metrics) -> None:
    stream = Stream().opened().usage(model="m-1", input=100, output=20, cache_read=5)
    feed(metrics, stream.usage(input=1))
    tokens = dict(agent="mock", model="m-1")
    assert value(metrics, "corral_tokens_total", type="input", **tokens) == 101
    assert value(metrics, "corral_tokens_total", type="output", **tokens) == 20
    assert value(metrics, "corral_tokens_total", type="cache_read", **tokens) == 5


def test_tokens_without_a_model_are_labelled_unknown(metrics: Metrics) -> None:
    feed(metrics, Stream().opened().usage(input=7))
    assert value(metrics, "corral_tokens_total", agent="mock", model="unknown", type="input") == 7


def test_models_beyond_the_cap_become_other_and_count_an_overflow() -> None:
    metrics = Metrics(version="test", model_limit=2)
    stream = Stream().opened()
    for model in ("a", "b", "c", "d"):
        stream.usage(model=model, output=1)
    feed(metrics, stream)
    assert value(metrics, "corral_tokens_total", agent="mock", model="other", type="output") == 2
    assert value(metrics, "corral_metrics_label_overflow_total", label="model") == 2


def test_cost_is_a_running_total_per_session(metrics: Metrics) -> None:
    stream = Stream().opened().usage(cost=0.25).usage(cost=0.25).usage(cost=1.0)
    feed(metrics, stream, Stream("s2").opened().usage(cost=0.5))
    assert value(metrics, "corral_cost_usd_total", agent="mock", model="unknown") == 1.5


def test_a_cost_that_drops_starts_a_new_running_total(metrics: Metrics) -> None:
    feed(metrics, Stream().opened().usage(cost=1.0).usage(cost=0.25))
    assert value(metrics, "corral_cost_usd_total", agent="mock", model="unknown") == 1.25


def test_compactions_diagnostics_and_agent_errors_are_counted(metrics: Metrics) -> None:
    stream = Stream().opened().event(ContextCompacted(), in_turn=False)
    stream.event(Diagnostic(level=DiagnosticLevel.WARNING, message="stall"), in_turn=False)
    feed(metrics, stream.failed(ErrorKind.PROCESS_EXITED).closed("failed"))
    assert value(metrics, "corral_context_compactions_total", agent="mock") == 1
    assert value(metrics, "corral_diagnostics_total", agent="mock", level="Warning") == 1
    assert value(metrics, "corral_agent_errors_total", agent="mock", kind="ProcessExited") == 1
    assert value(metrics, "corral_sessions_ended_total", agent="mock", outcome="failed") == 1


def test_every_event_is_counted_by_kind_with_its_delivery_latency(metrics: Metrics) -> None:
    feed(metrics, Stream().opened().at(99.5).event(ContextCompacted(), in_turn=False))
    assert value(metrics, "corral_events_total", agent="mock", kind="ContextCompacted") == 1
    assert value(metrics, "corral_event_delivery_seconds_sum") == 0.5


def test_a_batch_counts_each_event_at_the_time_it_was_made(metrics: Metrics) -> None:
    stream = Stream().opened().at(99.0).event(ContextCompacted(), in_turn=False)
    stream.at(99.5).event(ContextCompacted(), in_turn=False).event(
        ContextCompacted(), in_turn=False
    )
    stream.at(99.0).event(ContextCompacted(), in_turn=False)
    opened, *events = stream.records
    # The engine's events of one batch share one reading of the clock (one object).
    events[2] = attrs.evolve(events[2], occurred_at=events[1].occurred_at)
    sink = metrics.sink(stream.session_id, stream.agent, "/tmp")
    sink.session.observe(opened)
    sink.session.observe_batch(events)
    assert value(metrics, "corral_event_delivery_seconds_count") == 4
    assert value(metrics, "corral_event_delivery_seconds_sum") == 1.0 + 0.5 + 0.5 + 1.0
    assert value(metrics, "corral_events_total", agent="mock", kind="ContextCompacted") == 4


def test_agents_beyond_the_cap_become_other() -> None:
    metrics = Metrics(version="test", agent_limit=1)
    feed(metrics, Stream("s1", "claude").opened(), Stream("s2", "my-acp-agent").opened())
    assert value(metrics, "corral_sessions_started_total", agent="claude") == 1
    assert value(metrics, "corral_sessions_started_total", agent="other") == 1
    assert value(metrics, "corral_metrics_label_overflow_total", label="agent") == 1


async def test_the_sink_stage_reads_its_channel_to_the_end(metrics: Metrics) -> None:
    channel: Channel[SinkItem] = Channel(4)
    for record in Stream().opened().closed().records:
        channel.try_send(record)
    channel.close()
    await metrics.sink("s1", "mock", "/tmp").run(channel)
    assert value(metrics, "corral_sessions_ended_total", agent="mock", outcome="closed") == 1


async def test_a_cancelled_sink_stage_gives_back_its_gauges(metrics: Metrics) -> None:
    channel: Channel[SinkItem] = Channel(4)
    channel.try_send(Stream().opened().records[0])
    task = asyncio.ensure_future(metrics.sink("s1", "mock", "/tmp").run(channel))
    await settled()
    assert channel.statistics().waiting_receivers  # the sink took the record, waits for more
    assert value(metrics, "corral_sessions_active", agent="mock") == 1
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert value(metrics, "corral_sessions_active", agent="mock") == 0
    assert value(metrics, "corral_sessions_ended_total", agent="mock", outcome="aborted") == 1


def test_record_strings_outside_their_closed_sets_become_other(metrics: Metrics) -> None:
    stream = Stream().opened().decided("r1", "maybe", "app", 0, tool_kind="Laser", shown=False)
    feed(metrics, stream.closed("vanished"))
    request = dict(agent="mock", request_kind="Permission")
    assert value(metrics, "corral_requests_total", tool_kind="other", **request) == 1
    assert value(metrics, "corral_decisions_total", decision="other", decided_by="app", **request)
    assert value(metrics, "corral_sessions_ended_total", agent="mock", outcome="other") == 1
