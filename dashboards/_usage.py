"""The dashboards about sessions: overview, and tools and permissions."""

from __future__ import annotations

from _grafana import SA, Board, quantile, rate, target

PER_HOUR = "3600"


def overview() -> Board:
    b = Board(
        "corral-overview",
        "corral / Overview",
        "Sessions, turns, errors, tokens and cost across corral's agent sessions.",
    )
    _overview_now(b)
    _overview_sessions(b)
    _overview_turns(b)
    _overview_errors(b)
    _overview_tokens_and_cost(b)
    return b


def _overview_now(b: Board) -> None:
    b.row("Now")
    b.stat("Active sessions", "Sessions open now.", "short", f"sum(corral_sessions_active{{{SA}}})")
    b.stat(
        "Sessions waiting for input",
        "Open sessions whose agent waits on a permission or a question (status NeedsInput).",
        "short",
        f'sum(corral_sessions_in_status{{{SA}, status="NeedsInput"}})',
        warn=1,
    )
    b.stat("Turns running", "Turns in progress now.", "short", f"sum(corral_turns_running{{{SA}}})")
    b.stat(
        "Cost in range",
        "US dollars the agents reported spending over the dashboard's time range.",
        "currencyUSD",
        f"sum(increase(corral_cost_usd_total{{{SA}}}[$__range]))",
    )


def _overview_sessions(b: Board) -> None:
    b.row("Sessions")
    b.series(
        "Sessions started and ended",
        "Sessions opened, and sessions ended by outcome "
        "(closed, exited, failed, shutdown, aborted), per second.",
        "ops",
        target(rate("corral_sessions_started_total", by="agent"), "{{agent}} started"),
        target(rate("corral_sessions_ended_total", by="outcome"), "ended: {{outcome}}"),
    )
    b.series(
        "Open sessions by status",
        "Open sessions by status: Idle, Working, NeedsInput.",
        "short",
        target(f"sum by (status) (corral_sessions_in_status{{{SA}}})", "{{status}}"),
        stack=True,
    )


def _overview_turns(b: Board) -> None:
    b.row("Turns")
    b.series(
        "Turns by stop reason",
        "Turns ended per second, by stop reason (Completed, Failed, Cancelled, Refused).",
        "ops",
        target(rate("corral_turns_ended_total", by="stop"), "{{stop}}"),
        stack=True,
    )
    b.series(
        "Turn duration",
        "Turn duration from start to end: median and 95th percentile.",
        "s",
        target(quantile(0.5, "corral_turn_duration_seconds"), "p50"),
        target(quantile(0.95, "corral_turn_duration_seconds"), "p95"),
    )
    b.series(
        "Time to first output",
        "Time from a turn's start to the agent's first output "
        "(text, reasoning, tool, plan or request): median and 95th percentile.",
        "s",
        target(quantile(0.5, "corral_turn_first_output_seconds"), "p50"),
        target(quantile(0.95, "corral_turn_first_output_seconds"), "p95"),
    )
    b.series(
        "Failed turn ratio",
        "Share of ended turns that ended Failed.",
        "percentunit",
        target(
            rate("corral_turns_ended_total", SA + ', stop="Failed"')
            + " / "
            + rate("corral_turns_ended_total"),
            "failed",
        ),
    )


def _overview_errors(b: Board) -> None:
    b.row("Errors")
    b.series(
        "Agent errors",
        "Sessions that ended in error per second, by error kind "
        "(ProcessExited, ProtocolFailed, ...).",
        "ops",
        target(rate("corral_agent_errors_total", by="agent, kind"), "{{agent}} {{kind}}"),
    )
    b.series(
        "Diagnostics",
        "Diagnostic events per second by level (stalls, late turn ends, unknown frames, ...).",
        "ops",
        target(rate("corral_diagnostics_total", by="level"), "{{level}}"),
    )


def _overview_tokens_and_cost(b: Board) -> None:
    b.row("Tokens and cost")
    b.series(
        "Tokens by type",
        "Tokens per second by type (input, output, cache_read, "
        "cache_write, reasoning), normalized across agents.",
        "suffix: tok/s",
        target(rate("corral_tokens_total", by="type"), "{{type}}"),
        stack=True,
    )
    b.series(
        "Spend rate",
        "US dollars per hour, by agent, as the agents report cost.",
        "currencyUSD",
        target(f"{rate('corral_cost_usd_total', by='agent')} * {PER_HOUR}", "{{agent}}"),
    )
    b.bars(
        "Tokens by model in range",
        "Tokens used over the dashboard's time range, by "
        "model (models beyond the label cap show as other).",
        "short",
        f"sum by (model) (increase(corral_tokens_total{{{SA}}}[$__range]))",
        "{{model}}",
    )
    b.series(
        "Context compactions",
        "Context compactions per second.",
        "ops",
        target(rate("corral_context_compactions_total"), "compactions/s"),
    )
    b.series(
        "Context occupancy",
        "The 95th percentile of context window occupancy (used / window) at usage reports.",
        "percentunit",
        target(quantile(0.95, "corral_context_usage_ratio"), "p95 occupancy"),
    )


def tools() -> Board:
    b = Board(
        "corral-tools",
        "corral / Tools and permissions",
        "Tool calls, permission requests and how they were decided.",
    )
    _tools_tool_calls(b)
    _tools_permissions_and_questions(b)
    return b


def _tools_tool_calls(b: Board) -> None:
    b.row("Tool calls")
    b.stat(
        "Tool calls running",
        "Tool calls in progress now.",
        "short",
        f"sum(corral_tool_calls_running{{{SA}}})",
    )
    b.stat(
        "Requests pending",
        "Permission requests and questions waiting for the app now.",
        "short",
        f"sum(corral_requests_pending{{{SA}}})",
        warn=1,
    )
    b.stat(
        "Tool failure ratio",
        "Share of finished tool calls that failed, over the dashboard's time range.",
        "percentunit",
        f'sum(increase(corral_tool_calls_total{{{SA}, status="Failed"}}[$__range])) / '
        f"sum(increase(corral_tool_calls_total{{{SA}}}[$__range]))",
    )
    b.stat(
        "Auto-decided share",
        "Share of requests corral decided itself (a mode, a rule, a guard, the "
        "policy of a generate session or a limit) over the dashboard's time range.",
        "percentunit",
        "sum(increase(corral_decisions_total"
        f'{{{SA}, decided_by=~"mode:.*|rule|guard:.*|generate|limit"}}[$__range]))'
        f" / sum(increase(corral_decisions_total{{{SA}}}[$__range]))",
    )
    b.series(
        "Tool calls by kind",
        "Tool calls started per second, by tool kind.",
        "ops",
        target(rate("corral_tool_calls_started_total", by="kind"), "{{kind}}"),
        stack=True,
    )
    b.series(
        "Tool calls by outcome",
        "Tool calls finished per second, by final status "
        "(Completed, Failed, Cancelled, Unfinished).",
        "ops",
        target(rate("corral_tool_calls_total", by="status"), "{{status}}"),
        stack=True,
    )
    b.series(
        "Tool duration p95 by kind",
        "95th percentile of tool call duration, by kind.",
        "s",
        target(quantile(0.95, "corral_tool_duration_seconds", by="kind"), "{{kind}}"),
    )
    b.series(
        "Tool failures by kind",
        "Failed tool calls per second, by kind.",
        "ops",
        target(rate("corral_tool_calls_total", SA + ', status="Failed"', by="kind"), "{{kind}}"),
    )


def _tools_permissions_and_questions(b: Board) -> None:
    b.row("Permissions and questions")
    b.series(
        "Requests",
        "Requests per second: permissions by tool kind, and questions.",
        "ops",
        target(
            rate("corral_requests_total", by="request_kind, tool_kind"),
            "{{request_kind}} {{tool_kind}}",
        ),
        stack=True,
    )
    b.series(
        "Requests pending",
        "Requests waiting for the app, by kind.",
        "short",
        target(f"sum by (request_kind) (corral_requests_pending{{{SA}}})", "{{request_kind}}"),
    )
    b.series(
        "Decisions",
        "Requests decided per second, by decision (allow_once, deny_once, "
        "answered, cancelled, timeout, ...).",
        "ops",
        target(rate("corral_decisions_total", by="decision"), "{{decision}}"),
        stack=True,
    )
    b.series(
        "Who decided",
        "Requests decided per second, by who decided (app, rule, "
        "mode:<mode>, guard:<guard>, timeout, cancel, turn_end, shutdown, agent, generate: "
        "the policy of a generate session, limit: too many requests open at once).",
        "ops",
        target(rate("corral_decisions_total", by="decided_by"), "{{decided_by}}"),
        stack=True,
    )
    b.series(
        "Wait for a decision",
        "Time requests shown to the app waited for their decision (the app's answer, a "
        "timeout, a cancel): median and 95th percentile.",
        "s",
        target(quantile(0.5, "corral_request_wait_seconds"), "p50"),
        target(quantile(0.95, "corral_request_wait_seconds"), "p95"),
    )
    b.series(
        "Timeouts",
        "Requests that ran out of time per second, by kind.",
        "ops",
        target(
            rate("corral_decisions_total", SA + ', decided_by="timeout"', by="request_kind"),
            "{{request_kind}}",
        ),
    )
