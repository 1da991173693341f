"""Which agent wrote a file, and the reader that turns it into replay items.

`detect_format(path)` looks at the first lines only (never the whole file)
and names the format: `claude` (Claude Code project JSONL), `codex`
(Codex rollout, `rollout-*.jsonl`), `copilot` (Copilot CLI `events.jsonl`),
`corral` (a corral transcript, already normalized), or None.

Each agent's reader lives in its own source package, as
`read_native_transcript(path) -> Iterable[ReplayItem]` (`sources/claude/`,
`sources/codex/`, `sources/copilot/`). `NativeReaders` imports them lazily,
on first use, so a missing or broken reader only stops the files that need
it, with a reason ("reader not available: ..."), never the whole import.
Tests (and embedders) can pass their own readers.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import Any

import attrs
import orjson

from ...pipeline.driver import ReplayItem

__all__ = [
    "AGENT_FORMATS",
    "AgentFormat",
    "NativeReader",
    "NativeReaders",
    "ReaderUnavailable",
    "detect_format",
]

NativeReader = Callable[[Path], Iterable[ReplayItem]]


@attrs.frozen(kw_only=True)
class AgentFormat:
    id: str  # the format, and the agent id the imported session gets
    name: str
    module: str  # the source package holding `read_native_transcript`


AGENT_FORMATS: dict[str, AgentFormat] = {
    "claude": AgentFormat(id="claude", name="Claude Code", module="claude"),
    "codex": AgentFormat(id="codex", name="Codex", module="codex"),
    "copilot": AgentFormat(id="copilot", name="GitHub Copilot CLI", module="copilot"),
}

_SOURCES = __name__.rsplit(".", 3)[0] + ".sources"  # "corral.sources"
_PEEK_BYTES = 256 * 1024
_PEEK_LINES = 40
_CODEX_TYPES = frozenset(
    {"session_meta", "response_item", "event_msg", "turn_context", "compacted"}
)
_CLAUDE_TYPES = frozenset({"user", "assistant", "system", "summary"})


class ReaderUnavailable(Exception):
    """No reader for this format can run here (not written yet, or broken)."""


class NativeReaders:
    def __init__(self, readers: Mapping[str, NativeReader] | None = None) -> None:
        self._readers: dict[str, NativeReader] = dict(readers or {})
        self._missing: dict[str, str] = {}

    def get(self, format_id: str) -> NativeReader:
        if format_id in self._readers:
            return self._readers[format_id]
        if format_id in self._missing:
            raise ReaderUnavailable(self._missing[format_id])
        try:
            reader = self._load(format_id)
        except ReaderUnavailable as error:
            self._missing[format_id] = str(error)
            raise
        self._readers[format_id] = reader
        return reader

    @staticmethod
    def _load(format_id: str) -> NativeReader:
        known = AGENT_FORMATS.get(format_id)
        if known is None:
            raise ReaderUnavailable(f"no reader for {format_id!r} files")
        module_name = f"{_SOURCES}.{known.module}"
        try:
            module = importlib.import_module(module_name)
        except ImportError as error:
            raise ReaderUnavailable(
                f"reader not available: {module_name} cannot be imported ({error})"
            ) from None
        reader = getattr(module, "read_native_transcript", None)
        if not callable(reader):
            raise ReaderUnavailable(
                f"reader not available: {module_name} has no read_native_transcript"
            )
        found: NativeReader = reader
        return found


def _peek(path: Path) -> list[dict[str, Any]]:
    with path.open("rb") as file:
        head = file.read(_PEEK_BYTES)
    objects: list[dict[str, Any]] = []
    lines = head.split(b"\n")
    if len(head) == _PEEK_BYTES:
        lines = lines[:-1]  # the last one may be cut by the peek
    for line in lines[:_PEEK_LINES]:
        if not line.strip():
            continue
        try:
            value = orjson.loads(line)
        except orjson.JSONDecodeError:
            continue
        if isinstance(value, dict):
            objects.append(value)
    return objects


def _looks_codex(value: dict[str, Any], path: Path) -> bool:
    if value.get("type") in _CODEX_TYPES and "payload" in value:
        return True
    # Early rollouts: a bare session meta line, then response items.
    return path.name.startswith("rollout-") and "id" in value and "timestamp" in value


def _looks_copilot(value: dict[str, Any]) -> bool:
    kind = value.get("type")
    return isinstance(kind, str) and "." in kind and "data" in value and "id" in value


def _looks_claude(value: dict[str, Any]) -> bool:
    if value.get("type") not in _CLAUDE_TYPES:
        return False
    return any(key in value for key in ("sessionId", "uuid", "leafUuid", "parentUuid"))


def detect_format(path: Path) -> str | None:
    """The format of `path` from its first lines; None when no reader knows it."""
    try:
        objects = _peek(path)
    except OSError:
        return None
    if objects and isinstance(objects[0].get("transcript"), dict):
        return "corral"
    for value in objects:
        if _looks_codex(value, path):
            return "codex"
        if _looks_copilot(value):
            return "copilot"
        if _looks_claude(value):
            return "claude"
    return None
