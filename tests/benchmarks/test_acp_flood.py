"""The `acp-flood` bench phase at a small size: behaviour, never speed.

The phase runs its real processes (the flood agent, `corral serve` with an
app reading it, the ACP SDK's client); what is asserted holds whatever the
machine: each peer saw exactly the flood, in order; corral's metrics
counted it; every line corral wrote is a valid line of the protocol; the
ratio is reported. The figures are printed, not asserted.
"""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

import pytest
from corral.actors.bench import _acp_flood
from corral.actors.bench._acp_flood import (
    SDK_MISSING,
    AcpFlood,
    FloodRun,
    flood_summary,
    flood_table,
    measure_acp_flood,
)
from corral.actors.bench._flood_agent import SESSION_ID, chunk_text, serve
from corral.actors.bench._plots import charts, write_charts
from corral.sinks.transcript import find_transcripts

from tests.benchmarks.test_plots import _texts, drawing, synthetic_report
from tests.support.schema import check_line

UPDATES = 1_500


def _requests(*methods: str) -> io.BytesIO:
    lines = [{"jsonrpc": "2.0", "id": n, "method": m, "params": {}} for n, m in enumerate(methods)]
    lines.insert(1, {"jsonrpc": "2.0", "method": "session/cancel", "params": {}})  # no answer
    return io.BytesIO(b"".join(json.dumps(line).encode() + b"\n" for line in lines))


def test_the_flood_agent_answers_one_prompt_with_n_chunks_then_end_turn() -> None:
    written = io.BytesIO()
    serve(_requests("initialize", "session/new", "session/prompt", "session/load"), written, 3)
    lines = [json.loads(raw) for raw in written.getvalue().split(b"\n") if raw]
    assert [line.get("id") for line in lines] == [0, 1, None, None, None, 2, 3]
    hello, opened, *chunks, ended, refused = lines
    assert hello["result"]["protocolVersion"] == 1
    assert opened["result"] == {"sessionId": SESSION_ID}
    assert [chunk["params"]["update"]["content"]["text"] for chunk in chunks] == [
        chunk_text(n) for n in range(3)
    ]
    assert ended["result"] == {"stopReason": "end_turn"}
    assert refused["error"]["code"] == -32601


def test_the_flood_agents_lines_are_acps_own_shapes() -> None:
    schema = pytest.importorskip("acp.schema", reason="the ACP Python SDK is not installed")
    written = io.BytesIO()
    serve(_requests("initialize", "session/new", "session/prompt"), written, 2)
    hello, opened, *chunks, ended = [
        json.loads(raw) for raw in written.getvalue().split(b"\n")[:-1]
    ]
    schema.InitializeResponse.model_validate(hello["result"])
    schema.NewSessionResponse.model_validate(opened["result"])
    assert schema.PromptResponse.model_validate(ended["result"]).stop_reason == "end_turn"
    for chunk in chunks:
        assert chunk["method"] == "session/update"
        notification = schema.SessionNotification.model_validate(chunk["params"])
        assert isinstance(notification.update, schema.AgentMessageChunk)


def _corral_lines(path: Path) -> list[dict[str, Any]]:
    """Every line corral serve wrote in one run, each checked against the schema."""
    lines = [json.loads(raw) for raw in path.read_bytes().split(b"\n") if raw]
    for line in lines:
        check_line(line)
    return lines


def _kinds(lines: list[dict[str, Any]], name: str) -> int:
    """How many of the lines are events of kind `name` (one whose kind carries fields)."""
    kinds = [line["event"]["kind"] for line in lines if "event" in line]
    return sum(1 for kind in kinds if isinstance(kind, dict) and name in kind)


def test_both_peers_read_the_whole_flood_and_corral_writes_only_valid_lines(
    tmp_path: Path, corral_home: Path
) -> None:
    pytest.importorskip("acp", reason="the ACP Python SDK (agent-client-protocol) is not installed")
    flood = measure_acp_flood(UPDATES, repeats=1, keep=tmp_path)
    (corral,), (sdk,) = flood.corral, flood.sdk
    assert (corral.updates, sdk.updates) == (UPDATES, UPDATES)
    assert corral.in_order and sdk.in_order
    assert corral.metrics_updates == UPDATES  # the metrics sink saw each one too
    assert set(corral.parts) == {"serve", "app"} and set(sdk.parts) == {"client"}
    lines = _corral_lines(tmp_path / "corral-1.jsonl")
    assert _kinds(lines, "TextDelta") == UPDATES
    assert _kinds(lines, "TurnEnded") == 1
    assert lines[-1] == {"closed": "s1"}  # the app read serve through to the session's close
    assert flood.ratio is not None and flood.ratio > 0
    summary = flood_summary(flood)
    assert summary["value"] == round(flood.ratio, 3) and summary["target"] == 0.7
    assert summary["baseline"]["sdk_missing"] is None
    assert any("corral ÷ SDK" in text for text in flood_table(flood))
    assert list(find_transcripts(corral_home)) == []  # a scratch archive, not the user's
    print("\n" + "\n".join(flood_table(flood)))


def test_without_the_sdk_the_phase_says_so_and_measures_corral_alone(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(_acp_flood, "sdk_installed", lambda: False)
    flood = measure_acp_flood(200, repeats=1, keep=tmp_path)
    assert flood.sdk == () and flood.sdk_missing == SDK_MISSING
    assert [run.updates for run in flood.corral] == [200]
    assert flood.ratio is None
    assert flood_summary(flood)["value"] is None
    assert f"  ACP SDK: {SDK_MISSING}" in flood_table(flood)
    assert _kinds(_corral_lines(tmp_path / "corral-1.jsonl"), "TextDelta") == 200


def _run(side: str, cpu_s: float, wall_s: float) -> FloodRun:
    parts = {"serve": cpu_s * 0.9, "app": cpu_s * 0.1} if side == "corral" else {"client": cpu_s}
    return FloodRun(side=side, updates=1000, in_order=True, cpu_s=cpu_s, wall_s=wall_s, parts=parts)


def _three_runs_each() -> AcpFlood:
    return AcpFlood(
        updates=1000,
        corral=(_run("corral", 0.030, 0.5), _run("corral", 0.020, 0.1), _run("corral", 0.9, 0.2)),
        sdk=(_run("sdk", 0.040, 0.4), _run("sdk", 0.050, 0.2), _run("sdk", 0.045, 0.3)),
    )


def test_the_ratio_is_of_median_cpu_per_update_and_wall_time_is_reported_beside_it() -> None:
    flood = _three_runs_each()
    assert flood.corral_cpu_us == pytest.approx(30.0)  # the median run, not the mean
    assert flood.sdk_cpu_us == pytest.approx(45.0)
    assert flood.ratio == pytest.approx(30 / 45)
    assert flood.wall_ratio == pytest.approx(200 / 300)
    baseline = flood_summary(flood)["baseline"]
    assert baseline["corral_parts_us_per_update"] == {"serve": 27.0, "app": 3.0}
    assert (baseline["corral_wall_us_per_update"], baseline["sdk_wall_us_per_update"]) == (200, 300)


def test_a_run_with_both_sides_has_a_chart_of_the_flood_and_one_without_the_sdk_none() -> None:
    report = synthetic_report()
    assert "acp-flood" not in {chart.name for chart in charts(report)}  # a run before the phase
    report["acp_flood_ratio"] = flood_summary(AcpFlood(updates=1000, corral=(), sdk=()))
    assert "acp-flood" not in {chart.name for chart in charts(report)}  # no SDK, no ratio
    report["acp_flood_ratio"] = flood_summary(_three_runs_each())
    (chart,) = [chart for chart in charts(report) if chart.name == "acp-flood"]
    assert chart.categories == ("CPU", "wall time")
    corral, sdk = chart.series
    assert corral.points == ((0.0, 30.0), (1.0, 200.0))
    assert sdk.points == ((0.0, 45.0), (1.0, 300.0))
    assert chart.notes == ("×0.67", "×0.67")  # corral ÷ SDK over corral's bars


@drawing
def test_the_flood_chart_is_drawn_with_its_title_and_legend(tmp_path: Path) -> None:
    report = synthetic_report()
    report["acp_flood_ratio"] = flood_summary(_three_runs_each())
    write_charts(report, str(tmp_path))
    text = _texts(tmp_path / "acp-flood.svg")
    assert "corral against the ACP SDK's client" in text
    assert "corral serve + app" in text and "ACP SDK client" in text
