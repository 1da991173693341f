"""The dashboards about corral itself: pipeline health, and agent processes."""

from __future__ import annotations

from _grafana import SA, Board, S, quantile, rate, target


def pipeline() -> Board:
    b = Board(
        "corral-pipeline",
        "corral / Pipeline health",
        "Queues between the pipeline's stages, backpressure, decoding and delivery.",
    )
    _pipeline_queues(b)
    _pipeline_backpressure(b)
    _pipeline_decoding_and_delivery(b)
    _pipeline_sinks(b)
    return b


def _pipeline_queues(b: Board) -> None:
    b.row("Queues")
    b.series(
        "Queue depth",
        "Items waiting in each queue (summed over sessions).",
        "short",
        target(f"sum by (queue) (corral_channel_depth{{{S}}})", "{{queue}}"),
    )
    b.series(
        "Fullest channel",
        "Depth over capacity of the fullest channel of each queue; "
        "100% means a producer is blocked.",
        "percentunit",
        target(f"max by (queue) (corral_channel_fill_ratio_max{{{S}}})", "{{queue}}"),
    )
    b.series(
        "Throughput in",
        "Items put into each queue per second.",
        "ops",
        target(rate("corral_channel_items_sent_total", S, by="queue"), "{{queue}}"),
    )
    b.series(
        "Throughput out",
        "Items taken out of each queue per second.",
        "ops",
        target(rate("corral_channel_items_received_total", S, by="queue"), "{{queue}}"),
    )
    b.series(
        "Capacity and live channels",
        "Live channels and their summed capacity, by queue.",
        "short",
        target(f"sum by (queue) (corral_channel_capacity{{{S}}})", "{{queue}} capacity"),
        target(f"sum by (queue) (corral_channels_live{{{S}}})", "{{queue}} channels"),
    )


def _pipeline_backpressure(b: Board) -> None:
    b.row("Backpressure")
    b.series(
        "Time blocked",
        "Share of the time producers spent blocked on full channels (seconds blocked per "
        "second; above 100% means several producers blocked at once).",
        "percentunit",
        target(rate("corral_channel_blocked_seconds_total", S, by="queue"), "{{queue}}"),
    )
    b.series(
        "Blocked producers",
        "Producers waiting on a full channel now.",
        "short",
        target(f"sum by (queue) (corral_channel_waiting_senders{{{S}}})", "{{queue}}"),
    )


def _pipeline_decoding_and_delivery(b: Board) -> None:
    b.row("Decoding and delivery")
    b.series(
        "Decode errors",
        "Agent output corral could not decode, per second, by kind "
        "(not_json, oversized, bad_shape).",
        "ops",
        target(rate("corral_decode_errors_total", by="agent, kind"), "{{agent}} {{kind}}"),
    )
    b.series(
        "Unknown frames",
        "Agent frames of an unknown type per second (kept as Info diagnostics).",
        "ops",
        target(rate("corral_unknown_frames_total", by="agent"), "{{agent}}"),
    )
    b.series(
        "Event delivery latency",
        "Time from an event's creation to its arrival at the "
        "metrics sink: 99th and 50th percentile.",
        "s",
        target(quantile(0.99, "corral_event_delivery_seconds", S), "p99"),
        target(quantile(0.5, "corral_event_delivery_seconds", S), "p50"),
    )
    b.series(
        "Events by kind",
        "Normalized events per second, by kind.",
        "ops",
        target(rate("corral_events_total", by="kind"), "{{kind}}"),
        stack=True,
    )


def _pipeline_sinks(b: Board) -> None:
    b.row("Sinks")
    b.series(
        "Line protocol",
        "Lines written to the app per second, by type.",
        "ops",
        target(rate("corral_line_messages_total", S, by="type"), "{{type}}"),
        stack=True,
    )
    b.series(
        "Output bytes",
        "Bytes written per second: line protocol and transcripts.",
        "Bps",
        target(rate("corral_line_bytes_total", S), "line protocol"),
        target(rate("corral_transcript_bytes_total", S), "transcripts"),
    )
    b.series(
        "Transcript fsync",
        "Time spent in fsync of transcript files: 99th percentile.",
        "s",
        target(quantile(0.99, "corral_transcript_fsync_seconds", S), "p99"),
    )
    b.series(
        "Sink errors and label overflow",
        "Failures inside sinks per second, by sink; "
        "label values folded into other per second (a cap was reached).",
        "ops",
        target(rate("corral_sink_errors_total", S, by="sink"), "{{sink}} errors"),
        target(rate("corral_metrics_label_overflow_total", S, by="label"), "{{label}} overflow"),
    )


def processes() -> Board:
    b = Board(
        "corral-processes",
        "corral / Agent processes",
        "Agent processes: starts, exits, restarts and their wires.",
    )
    _processes_processes(b)
    _processes_wires(b)
    _processes_nodes(b)
    return b


def _processes_processes(b: Board) -> None:
    b.row("Processes")
    b.stat(
        "Agent processes running",
        "Agent processes alive now.",
        "short",
        f"sum(corral_agent_processes_running{{{SA}}})",
    )
    b.stat(
        "Unclean exits in range",
        "Agent processes that exited with an error status or a "
        "signal over the dashboard's time range.",
        "short",
        f'sum(increase(corral_agent_process_exits_total{{{SA}, exit=~"error|signal"}}[$__range]))',
        warn=1,
    )
    b.stat(
        "Restarts in range",
        "Agent processes restarted over the dashboard's time range.",
        "short",
        f"sum(increase(corral_agent_process_restarts_total{{{SA}}}[$__range]))",
    )
    b.stat(
        "corral instances",
        "corral processes reporting metrics.",
        "short",
        f"count(corral_build_info{{{S}}})",
    )
    b.series(
        "Running by agent",
        "Agent processes alive, by agent.",
        "short",
        target(f"sum by (agent) (corral_agent_processes_running{{{SA}}})", "{{agent}}"),
        stack=True,
    )
    b.series(
        "Starts and restarts",
        "Agent processes started and restarted per second.",
        "ops",
        target(rate("corral_agent_process_starts_total", by="agent"), "{{agent}} starts"),
        target(rate("corral_agent_process_restarts_total", by="agent"), "{{agent}} restarts"),
    )
    b.series(
        "Exits by kind",
        "Agent processes that exited per second, by kind (clean, error, signal, unknown).",
        "ops",
        target(rate("corral_agent_process_exits_total", by="exit"), "{{exit}}"),
        stack=True,
    )
    b.series(
        "Process deaths",
        "Sessions ended because their agent process exited (ProcessExited), per second.",
        "ops",
        target(
            rate("corral_agent_errors_total", SA + ', kind="ProcessExited"', by="agent"),
            "{{agent}}",
        ),
    )


def _processes_wires(b: Board) -> None:
    b.row("Wires")
    b.series(
        "Wire lines",
        "Raw lines per second on the agents' wires, by direction.",
        "ops",
        target(rate("corral_wire_lines_total", by="agent, direction"), "{{agent}} {{direction}}"),
    )
    b.series(
        "Wire bytes",
        "Raw bytes per second on the agents' wires, by direction.",
        "Bps",
        target(rate("corral_wire_bytes_total", by="agent, direction"), "{{agent}} {{direction}}"),
    )
    b.series(
        "Sessions per agent",
        "Sessions open now, by agent.",
        "short",
        target(f"sum by (agent) (corral_sessions_active{{{SA}}})", "{{agent}}"),
        stack=True,
    )
    b.series(
        "Decode errors by agent",
        "Undecodable agent output per second, by agent.",
        "ops",
        target(rate("corral_decode_errors_total", by="agent"), "{{agent}}"),
    )


def _processes_nodes(b: Board) -> None:
    """`serve --ray`: where the sessions run. Empty for a corral without Ray."""
    b.row("Ray nodes")
    b.series(
        "Sessions per Ray node",
        "Sessions running now on each node of the Ray cluster (serve --ray).",
        "short",
        target(f"sum by (node) (corral_node_sessions{{{S}}})", "{{node}}"),
        stack=True,
    )
    b.series(
        "Ray hosts lost",
        "Ray hosts found gone per second (their node died or their process was killed); "
        "their sessions ended with ProcessExited.",
        "ops",
        target(rate("corral_node_hosts_lost_total", S, by="node"), "{{node}}"),
    )
