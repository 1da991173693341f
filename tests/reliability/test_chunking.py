"""Any chunking of a recorded real wire gives the same events.

The wires are the golden fixtures recorded from the real CLIs (Claude Code's
stream-json; the five ACP agents; Codex's app-server; Copilot's session
events); each is fed whole and cut at random points (hypothesis), and the
driver events must be identical. Codex and Copilot go through the readers
the benchmark replays them with (`actors/bench/_wires.py`).
"""

from __future__ import annotations

import itertools
from pathlib import Path

import orjson
import pytest
from corral.actors.bench._wires import WireReplay, _CodexReplay, _CopilotReplay, real_corpora
from corral.pipeline.driver import DriverEvent
from corral.sources.acp._replay import AcpReplay
from corral.sources.claude._protocol import ClaudeProtocol
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
CHUNKS = settings(
    max_examples=40,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)


def claude_stdout(name: str) -> bytes:
    """What the CLI wrote: the `in` lines of a recorded wire, in order."""
    lines = [orjson.loads(raw) for raw in (FIXTURES / "claude" / name).read_bytes().splitlines()]
    return b"".join(line["in"].encode() + b"\n" for line in lines if "in" in line)


def claude_events(chunks: list[bytes]) -> list[DriverEvent]:
    counter = itertools.count()
    protocol = ClaudeProtocol(new_id=lambda: f"id{next(counter)}")
    events: list[DriverEvent] = []
    for chunk in chunks:
        events += protocol.feed(chunk)
    return events + protocol.end()


def acp_events(chunks: list[bytes]) -> list[DriverEvent]:
    replay = AcpReplay()
    events: list[DriverEvent] = []
    for chunk in chunks:
        events += replay.feed(chunk)
    return events + replay.end()


def cut(data: bytes, points: list[int]) -> list[bytes]:
    marks = sorted({min(p, len(data)) for p in points})
    return [data[a:b] for a, b in zip([0, *marks], [*marks, len(data)], strict=True)]


CLAUDE_WIRES = sorted(p.name for p in (FIXTURES / "claude").glob("*.jsonl"))
ACP_WIRES = sorted(p.name for p in (FIXTURES / "acp").glob("*.wire.jsonl"))


@pytest.mark.parametrize("name", CLAUDE_WIRES)
@CHUNKS
@given(points=st.lists(st.integers(min_value=0, max_value=200_000), max_size=12))
def test_claude_wire_any_chunking(name: str, points: list[int]) -> None:
    data = claude_stdout(name)
    assert claude_events(cut(data, points)) == claude_events([data])


@pytest.mark.parametrize("name", ACP_WIRES)
@CHUNKS
@given(points=st.lists(st.integers(min_value=0, max_value=200_000), max_size=12))
def test_acp_wire_any_chunking(name: str, points: list[int]) -> None:
    data = (FIXTURES / "acp" / name).read_bytes()
    assert acp_events(cut(data, points)) == acp_events([data])


def _replayed(reader: WireReplay, chunks: list[bytes]) -> list[DriverEvent]:
    events: list[DriverEvent] = []
    for chunk in chunks:
        events += reader.feed(chunk)
    return events + reader.end()


READERS = {"codex": lambda: _CodexReplay(clock=lambda: 0), "copilot": _CopilotReplay}


@pytest.mark.parametrize("name", sorted(READERS))
@CHUNKS
@given(points=st.lists(st.integers(min_value=0, max_value=200_000), max_size=12))
def test_codex_and_copilot_wires_any_chunking(name: str, points: list[int]) -> None:
    recordings, _ = real_corpora()[name]
    for data in recordings:
        whole = _replayed(READERS[name](), [data])
        assert whole  # the recording yields events at all
        assert _replayed(READERS[name](), cut(data, points)) == whole


def test_the_wires_are_there() -> None:
    assert len(CLAUDE_WIRES) >= 10 and len(ACP_WIRES) == 25
