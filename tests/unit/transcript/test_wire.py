"""Raw wire recording: both directions, redacted, per session; losses counted."""

from __future__ import annotations

import json
from pathlib import Path

from corral.sinks.transcript import Redactor, WireRecorder


def _records(path: Path) -> list[dict[str, object]]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def test_both_directions_are_recorded_in_the_replayable_shape(tmp_path: Path) -> None:
    recorder = WireRecorder(redactor=Redactor())
    path = tmp_path / "s.wire.jsonl"
    recorder.register("s1", path)
    recorder.wire_line("s1", "out", b'{"jsonrpc":"2.0","id":1,"method":"initialize"}\n')
    recorder.wire_line("s1", "in", b'{"jsonrpc":"2.0","id":1,"result":{}}\n')
    recorder.wire_line("s1", "in", b"plain text from the agent\n")
    recorder.wire_line("s2", "in", b'{"not": "registered"}\n')
    recorder.release("s1")
    recorder.close()
    records = _records(path)
    assert [next(iter(r)) for r in records] == ["out", "in", "in_text"]
    assert records[0]["out"] == {"jsonrpc": "2.0", "id": 1, "method": "initialize"}
    assert records[2]["in_text"] == "plain text from the agent"
    assert all("at" in r for r in records)


def test_secrets_on_the_wire_are_redacted(tmp_path: Path) -> None:
    secret = "sk-" + "ant-api03-" + "Zq8vN2mL4kT7wR1pX9cB3dF6gH0jS5aE"
    recorder = WireRecorder(redactor=Redactor())
    path = tmp_path / "s.wire.jsonl"
    recorder.register("s1", path)
    line = json.dumps({"params": {"env": {"ANTHROPIC_API_KEY": secret}, "text": secret}})
    recorder.wire_line("s1", "out", line.encode() + b"\n")
    recorder.release("s1")
    recorder.close()
    assert secret not in path.read_text()
    (record,) = _records(path)
    assert record["redacted"] == {"count": 2, "patterns": ["anthropic_key", "secret_field"]}


def test_lines_beyond_the_queue_are_dropped_and_counted(tmp_path: Path) -> None:
    recorder = WireRecorder(redactor=None, capacity_bytes=0)
    path = tmp_path / "s.wire.jsonl"
    recorder.register("s1", path)
    for _ in range(3):
        recorder.wire_line("s1", "in", b"{}\n")
    assert recorder.dropped["s1"] == 3
    recorder.release("s1")
    recorder.close()
    assert _records(path) == [{"dropped": 3}]
