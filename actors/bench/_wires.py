"""Recorded real wires as throughput corpora, each read by its own source's decoder.

The golden fixtures under `tests/fixtures/` were recorded from the real
agent CLIs (Claude Code, the five ACP agents, Copilot's session events).
For each source the corpus is the lines the agent wrote, in recording
order, repeated until it holds the asked number of lines; each recording
goes through a fresh instance of the source's sans-IO reader, as a fresh
session would:

- claude: `ClaudeProtocol`, primed with `initialize` and a prompt, fed the
  CLI's stdout bytes;
- acp: `AcpReplay`, fed the tagged recording (corral's own requests tell it
  where a turn begins and which response ends it);
- copilot: `CopilotNormalizer`, fed one SessionEvent per line;
- codex: `AppServerNormalizer`, fed the app-server's notifications and
  requests (responses to corral's own requests carry no events).

The fixtures live in the repository, not in the installed package: where
they are absent (an installed corral) only the mock corpus is measured.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Protocol

import orjson

from ...pipeline.decoding import JsonLinesDecoder, NotJson, Oversized
from ...pipeline.driver import DriverEvent, StartTurn
from ...sources.acp import AcpReplay
from ...sources.claude import ClaudeProtocol
from ...sources.codex import AppServerNormalizer
from ...sources.copilot import CopilotNormalizer

__all__ = ["FIXTURES", "WireReplay", "real_corpora"]

FIXTURES = Path(__file__).resolve().parents[2] / "tests" / "fixtures"

_CLAUDE = ("plain", "permission_allowed", "write_file", "question")
_ACP_AGENTS = ("gemini", "opencode", "copilot", "claude-acp", "codex-acp")
_ACP_CASES = ("plain", "allowed")
_CODEX = ("plain", "command_accepted", "command_output", "file_change", "steer")
_COPILOT = (
    "sessions/text_turn",
    "sessions/tools",
    "sessions/subagent",
    "real/copilot-1.0.102.events",
)


class WireReplay(Protocol):
    """A source's sans-IO reader: agent bytes in, driver events out."""

    def feed(self, chunk: bytes) -> list[DriverEvent]: ...

    def end(self) -> list[DriverEvent]: ...


class _ClaudeReplay:
    def __init__(self) -> None:
        self._protocol = ClaudeProtocol(resume_token="bench")
        self._protocol.initialize()
        self._protocol.send(StartTurn(turn_id="t1", prompt_id="p1", text="bench"))

    def feed(self, chunk: bytes) -> list[DriverEvent]:
        return self._protocol.feed(chunk)

    def end(self) -> list[DriverEvent]:
        return self._protocol.end()


class _CopilotReplay:
    def __init__(self) -> None:
        self._lines = JsonLinesDecoder()
        self._normalizer = CopilotNormalizer()

    def feed(self, chunk: bytes) -> list[DriverEvent]:
        events: list[DriverEvent] = []
        for frame in self._lines.feed(chunk):
            if not isinstance(frame, NotJson | Oversized):
                events += self._normalizer.feed(frame)
        return events

    def end(self) -> list[DriverEvent]:
        return []


class _CodexReplay:
    def __init__(self, clock: Callable[[], int] = time.time_ns) -> None:
        self._lines = JsonLinesDecoder()
        self._normalizer = AppServerNormalizer(wall_clock_ns=clock)

    def feed(self, chunk: bytes) -> list[DriverEvent]:
        events: list[DriverEvent] = []
        for frame in self._lines.feed(chunk):
            if isinstance(frame, NotJson | Oversized) or "method" not in frame:
                continue
            if "id" in frame:
                asked, _ = self._normalizer.server_request(
                    frame["id"], frame["method"], frame.get("params")
                )
                events += asked
            else:
                events += self._normalizer.notification(frame["method"], frame.get("params"))
        return events

    def end(self) -> list[DriverEvent]:
        return []


def _claude_lines(path: Path) -> Iterator[bytes]:
    for record in path.read_bytes().split(b"\n"):
        if not record.strip():
            continue
        inbound = orjson.loads(record).get("in")
        if isinstance(inbound, str):
            yield inbound.encode() + b"\n"


def _plain_lines(path: Path) -> Iterator[bytes]:
    for line in path.read_bytes().split(b"\n"):
        if line.strip():
            yield line + b"\n"


Recordings = tuple[bytes, ...]


def _segments(paths: Sequence[Path], lines_of: Callable[[Path], Iterator[bytes]]) -> Recordings:
    return tuple(b"".join(lines_of(path)) for path in paths)


def real_corpora() -> dict[str, tuple[Recordings, Callable[[], WireReplay]]]:
    """The recordings of each source present here, and its reader's factory."""
    found: dict[str, tuple[Recordings, Callable[[], WireReplay]]] = {}
    claude = [FIXTURES / "claude" / f"{name}.jsonl" for name in _CLAUDE]
    if all(path.exists() for path in claude):
        found["claude"] = (_segments(claude, _claude_lines), _ClaudeReplay)
    acp = [
        FIXTURES / "acp" / f"{agent}-{case}.wire.jsonl"
        for agent in _ACP_AGENTS
        for case in _ACP_CASES
    ]
    if all(path.exists() for path in acp):
        found["acp"] = (_segments(acp, _plain_lines), AcpReplay)
    codex = [FIXTURES / "codex" / "appserver" / f"{name}.jsonl" for name in _CODEX]
    if all(path.exists() for path in codex):
        found["codex"] = (_segments(codex, _plain_lines), _CodexReplay)
    copilot = [FIXTURES / "copilot" / f"{name}.jsonl" for name in _COPILOT]
    if all(path.exists() for path in copilot):
        found["copilot"] = (_segments(copilot, _plain_lines), _CopilotReplay)
    return found
