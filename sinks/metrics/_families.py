"""Every metric corral exports, in one place: names, help, labels, buckets.

Names start with `corral_`, use base units (seconds, bytes, USD), and
counters end in `_total`. Labels come only from closed sets (see
`_labels`): agent, outcome, stop, origin, tool kind and status, request
kind, decision, decided_by, token type, model (capped), exit kind, queue,
sink, line type. The channel gauges and counters (queue depth, capacity,
blocked time, items in and out) are produced at scrape time by
`_channels.ChannelCollector`, not stored here.
"""

from __future__ import annotations

from typing import TypeVar

from ._store import Counter, Family, Gauge, Histogram, Store

__all__ = ["Families"]

TURN_SECONDS = (0.5, 1, 2, 5, 10, 20, 30, 60, 120, 300, 600, 1800, 3600)
FIRST_OUTPUT_SECONDS = (0.05, 0.1, 0.25, 0.5, 1, 2, 5, 10, 20, 30, 60, 120)
TOOL_SECONDS = (0.01, 0.05, 0.1, 0.25, 0.5, 1, 2, 5, 10, 30, 60, 120, 300, 600)
WAIT_SECONDS = (0.001, 0.1, 0.5, 1, 2, 5, 10, 30, 60, 120, 300, 600, 1800)
SESSION_SECONDS = (1, 5, 10, 30, 60, 300, 600, 1800, 3600, 7200, 14400, 28800, 86400)
DELIVERY_SECONDS = (0.0001, 0.0005, 0.001, 0.005, 0.01, 0.05, 0.1, 0.5, 1, 5)
FSYNC_SECONDS = (0.0001, 0.0005, 0.001, 0.005, 0.01, 0.05, 0.1, 0.5, 1)
RATIOS = (0.1, 0.25, 0.5, 0.75, 0.9, 0.95, 1.0)

F = TypeVar("F", bound=Family)


class Families:
    """The stored families of one `Metrics` (one registry)."""

    def __init__(self) -> None:
        self.store = Store()
        self._sessions()
        self._turns()
        self._tools()
        self._requests()
        self._usage()
        self._processes()
        self._outputs()
        self._nodes()

    def _sessions(self) -> None:
        """Sessions, their errors and events."""
        add = self._add
        self.sessions_started = add(
            Counter("corral_sessions_started_total", "Sessions opened.", ["agent"])
        )
        self.sessions_ended = add(
            Counter(
                "corral_sessions_ended_total",
                "Sessions ended, by outcome (closed, exited, failed, shutdown, aborted).",
                ["agent", "outcome"],
            )
        )
        self.sessions_active = add(Gauge("corral_sessions_active", "Sessions open now.", ["agent"]))
        self.sessions_in_status = add(
            Gauge(
                "corral_sessions_in_status",
                "Open sessions by status (Idle, Working, NeedsInput).",
                ["agent", "status"],
            )
        )
        self.session_duration = add(
            Histogram(
                "corral_session_duration_seconds",
                "How long sessions stayed open.",
                ["agent"],
                buckets=SESSION_SECONDS,
                unit="seconds",
            )
        )
        self.agent_errors = add(
            Counter(
                "corral_agent_errors_total",
                "Sessions that ended in error, by error kind (ProcessExited, ProtocolFailed, ...).",
                ["agent", "kind"],
            )
        )
        self.diagnostics = add(
            Counter("corral_diagnostics_total", "Diagnostic events, by level.", ["agent", "level"])
        )
        self.events = add(
            Counter("corral_events_total", "Normalized events, by event kind.", ["agent", "kind"])
        )
        self.delivery = add(
            Histogram(
                "corral_event_delivery_seconds",
                "Time from an event's creation by the engine to its arrival at the metrics sink "
                "(queueing in the session's pipeline).",
                buckets=DELIVERY_SECONDS,
                unit="seconds",
            )
        )

    def _turns(self) -> None:
        """Turns: starts, ends, durations, time to first output."""
        add = self._add
        self.turns_started = add(
            Counter(
                "corral_turns_started_total",
                "Turns started, by origin (prompt, agent).",
                ["agent", "origin"],
            )
        )
        self.turns_ended = add(
            Counter(
                "corral_turns_ended_total",
                "Turns ended, by stop reason (Completed, Failed, Cancelled, Refused).",
                ["agent", "stop"],
            )
        )
        self.turns_inferred = add(
            Counter(
                "corral_turns_inferred_total",
                "Turns whose end corral inferred after the agent went quiet.",
                ["agent"],
            )
        )
        self.turns_running = add(Gauge("corral_turns_running", "Turns running now.", ["agent"]))
        self.turn_duration = add(
            Histogram(
                "corral_turn_duration_seconds",
                "Turn duration, from start to end.",
                ["agent", "stop"],
                buckets=TURN_SECONDS,
                unit="seconds",
            )
        )
        self.first_output = add(
            Histogram(
                "corral_turn_first_output_seconds",
                "Time from a turn's start to the agent's first output (text, reasoning, tool, "
                "plan or request).",
                ["agent"],
                buckets=FIRST_OUTPUT_SECONDS,
                unit="seconds",
            )
        )

    def _tools(self) -> None:
        """Tool calls."""
        add = self._add
        self.tools_started = add(
            Counter(
                "corral_tool_calls_started_total",
                "Tool calls started, by tool kind.",
                ["agent", "kind"],
            )
        )
        self.tools_finished = add(
            Counter(
                "corral_tool_calls_total",
                "Tool calls finished, by tool kind and final status (Completed, Failed, Cancelled, "
                "Unfinished when the session ended first).",
                ["agent", "kind", "status"],
            )
        )
        self.tools_running = add(
            Gauge("corral_tool_calls_running", "Tool calls running now.", ["agent"])
        )
        self.tool_duration = add(
            Histogram(
                "corral_tool_duration_seconds",
                "Tool call duration, from first sight to its end.",
                ["agent", "kind"],
                buckets=TOOL_SECONDS,
                unit="seconds",
            )
        )

    def _requests(self) -> None:
        """Permission requests and questions, and their decisions."""
        add = self._add
        self.requests = add(
            Counter(
                "corral_requests_total",
                "Requests the agent made (Permission, Question), by tool kind (none: a question).",
                ["agent", "request_kind", "tool_kind"],
            )
        )
        self.requests_pending = add(
            Gauge(
                "corral_requests_pending",
                "Requests waiting for the app's answer now.",
                ["agent", "request_kind"],
            )
        )
        self.decisions = add(
            Counter(
                "corral_decisions_total",
                "How requests ended: decision (allow_once, deny_once, answered, cancelled, "
                "timeout, ...) and who decided (app, rule, mode:<mode>, timeout, cancel, ...).",
                ["agent", "request_kind", "decision", "decided_by"],
            )
        )
        self.request_wait = add(
            Histogram(
                "corral_request_wait_seconds",
                "Time requests shown to the app waited for their decision.",
                ["agent", "request_kind"],
                buckets=WAIT_SECONDS,
                unit="seconds",
            )
        )

    def _usage(self) -> None:
        """Tokens, cost and the context window."""
        add = self._add
        self.tokens = add(
            Counter(
                "corral_tokens_total",
                "Tokens used, by type (input, output, cache_read, cache_write, reasoning).",
                ["agent", "model", "type"],
            )
        )
        self.cost = add(
            Counter(
                "corral_cost_usd_total",
                "Cost reported by the agents, in US dollars.",
                ["agent", "model"],
            )
        )
        self.context_ratio = add(
            Histogram(
                "corral_context_usage_ratio",
                "Context window occupancy (used / window) at each usage report.",
                ["agent"],
                buckets=RATIOS,
                unit="ratio",
            )
        )
        self.compactions = add(
            Counter("corral_context_compactions_total", "Context compactions.", ["agent"])
        )

    def _processes(self) -> None:
        """Agent processes and their wires (from telemetry)."""
        add = self._add
        self.process_starts = add(
            Counter("corral_agent_process_starts_total", "Agent processes started.", ["agent"])
        )
        self.process_exits = add(
            Counter(
                "corral_agent_process_exits_total",
                "Agent processes that exited, by kind (clean, error, signal, unknown).",
                ["agent", "exit"],
            )
        )
        self.process_restarts = add(
            Counter("corral_agent_process_restarts_total", "Agent processes restarted.", ["agent"])
        )
        self.processes_running = add(
            Gauge("corral_agent_processes_running", "Agent processes running now.", ["agent"])
        )
        self.decode_errors = add(
            Counter(
                "corral_decode_errors_total",
                "Agent output that could not be decoded, by kind (not_json, oversized, bad_shape).",
                ["agent", "kind"],
            )
        )
        self.unknown_frames = add(
            Counter(
                "corral_unknown_frames_total",
                "Agent frames of a type corral does not know.",
                ["agent"],
            )
        )
        self.wire_lines = add(
            Counter(
                "corral_wire_lines_total",
                "Raw lines on the agents' wires, by direction (in, out).",
                ["agent", "direction"],
            )
        )
        self.wire_bytes = add(
            Counter(
                "corral_wire_bytes_total",
                "Raw bytes on the agents' wires, by direction.",
                ["agent", "direction"],
                unit="bytes",
            )
        )

    def _outputs(self) -> None:
        """The line protocol, sinks, and the metrics themselves."""
        add = self._add
        self.line_messages = add(
            Counter(
                "corral_line_messages_total",
                "Line-protocol lines written to the app, by type (hello, reply, error, event, "
                "session_error, closed).",
                ["type"],
            )
        )
        self.line_bytes = add(
            Counter(
                "corral_line_bytes_total", "Line-protocol bytes written to the app.", unit="bytes"
            )
        )
        self.sink_errors = add(
            Counter("corral_sink_errors_total", "Failures inside a sink, by sink.", ["sink"])
        )
        self.transcript_bytes = add(
            Counter("corral_transcript_bytes_total", "Bytes written to transcripts.", unit="bytes")
        )
        self.transcript_fsync = add(
            Histogram(
                "corral_transcript_fsync_seconds",
                "Time spent in fsync of transcript files.",
                buckets=FSYNC_SECONDS,
                unit="seconds",
            )
        )
        self.build_info = add(
            Gauge("corral_build_info", "Always 1; the corral version is a label.", ["version"])
        )
        self.label_overflow = add(
            Counter(
                "corral_metrics_label_overflow_total",
                'Label values mapped to "other" because a label reached its cap.',
                ["label"],
            )
        )

    def _nodes(self) -> None:
        """Sessions on a Ray cluster (`serve --ray`), by node (a capped label)."""
        add = self._add
        self.node_sessions = add(
            Gauge("corral_node_sessions", "Sessions running on each Ray node now.", ["node"])
        )
        self.nodes_lost = add(
            Counter(
                "corral_node_hosts_lost_total",
                "Ray hosts found gone (their node died or their process was killed).",
                ["node"],
            )
        )

    def _add(self, family: F) -> F:
        self.store.add(family)
        return family
