"""Telemetry from the sources: processes, decode errors, unknown frames, wire lines."""

from __future__ import annotations

from corral.pipeline.telemetry import Telemetry
from corral.sinks.metrics import Metrics

from tests.unit.metrics.conftest import value


def test_process_starts_and_exits_keep_the_running_gauge(metrics: Metrics) -> None:
    telemetry = Telemetry([metrics.observer]).for_session("s1", "claude")
    telemetry.process_started()
    telemetry.process_started()
    telemetry.process_exited("0")
    assert value(metrics, "corral_agent_process_starts_total", agent="claude") == 2
    assert value(metrics, "corral_agent_process_exits_total", agent="claude", exit="clean") == 1
    assert value(metrics, "corral_agent_processes_running", agent="claude") == 1


def test_an_exit_without_a_start_never_makes_the_gauge_negative(metrics: Metrics) -> None:
    metrics.observer.process_exited("claude", "signal 15 (SIGTERM)")
    assert value(metrics, "corral_agent_processes_running", agent="claude") == 0
    assert value(metrics, "corral_agent_process_exits_total", agent="claude", exit="signal") == 1


def test_restarts_decode_errors_and_unknown_frames_are_counted(metrics: Metrics) -> None:
    telemetry = Telemetry([metrics.observer]).for_session("s1", "codex")
    telemetry.process_restarted()
    telemetry.decode_error("oversized")
    telemetry.decode_error("a-new-kind")
    telemetry.unknown_frame()
    assert value(metrics, "corral_agent_process_restarts_total", agent="codex") == 1
    assert value(metrics, "corral_decode_errors_total", agent="codex", kind="oversized") == 1
    assert value(metrics, "corral_decode_errors_total", agent="codex", kind="other") == 1
    assert value(metrics, "corral_unknown_frames_total", agent="codex") == 1


def test_wire_lines_are_counted_under_their_sessions_agent(metrics: Metrics) -> None:
    metrics.sink("s1", "gemini", "/tmp")
    telemetry = Telemetry([metrics.observer]).for_session("s1", "gemini")
    telemetry.wire_line("in", b'{"jsonrpc":"2.0"}')
    telemetry.wire_line("out", b"{}")
    assert value(metrics, "corral_wire_lines_total", agent="gemini", direction="in") == 1
    assert value(metrics, "corral_wire_bytes_total", agent="gemini", direction="in") == 17
    assert value(metrics, "corral_wire_bytes_total", agent="gemini", direction="out") == 2
