"""Claude Code's own transcripts, read back as a replay.

What flows in: one `~/.claude/projects/<dir>/<session>.jsonl` file, one
JSON object per line, as Claude Code writes it. What flows out, in file
order: a `PromptSent` for each prompt the user typed, then the
DriverEvents of what followed, through the same content normalizer as the
live wire (whole assistant messages, tool results).

Turn ends: the file has no `result` line, so a turn ends where the file
says so: an assistant message that stopped for good (`end_turn`,
`stop_sequence`, `max_tokens`: `Completed`; `refusal`: `Refused`; an API
error message: `Failed`), or an interruption marker (`Cancelled`). A turn
the file leaves open is ended by the replay (`actors/replay`), which also
acknowledges each prompt's turn, so the reader yields no `TurnBegan` for
prompts. A `/compact` run while idle is a turn of the agent's own (as live):
`TurnBegan` at its compaction boundary, ended by the command's output line.

A prompt is a `user` line with text that is not a tool result, not harness
context (`isMeta`), not a compaction summary (that one is the agent's own
`UserMessage`, as on the live wire), and not a slash-command echo.
Lines that only serve Claude Code itself (attachments, queue operations,
request shapes, costs, titles) carry nothing to replay and are skipped;
subagent lines (`isSidechain`) are skipped too. A line that is not JSON
becomes a Warning `Diagnostic`, like on the live wire.
"""

from __future__ import annotations

import datetime
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import orjson

from ...pipeline.driver import (
    Emitted,
    ProblemKind,
    PromptSent,
    ReplayItem,
    TurnBegan,
    TurnFinished,
)
from ...pipeline.events import (
    Cancelled,
    Completed,
    ContextCompacted,
    ContextUsage,
    Failed,
    Refused,
    StopReason,
)
from ._content import Content, user_text
from ._json import field_list, field_obj
from ._results import _occupancy
from ._system import decode_problem

__all__ = ["read_native_transcript", "recognizes_line"]

_LINE_TYPES = frozenset({"user", "assistant", "system", "summary"})
_SESSION_KEYS = ("sessionId", "uuid", "leafUuid", "parentUuid")
_NOT_PROMPTS = ("<command-name>", "<local-command-", "<command-message>")
_INTERRUPTED = "[Request interrupted by user"
_EPOCH = datetime.datetime(1970, 1, 1, tzinfo=datetime.UTC)


def _at_ns(entry: Mapping[str, Any]) -> int | None:
    stamp = entry.get("timestamp")
    if not isinstance(stamp, str):
        return None
    try:
        when = datetime.datetime.fromisoformat(stamp)
    except ValueError:
        return None
    if when.tzinfo is None:
        when = when.replace(tzinfo=datetime.UTC)
    return (when - _EPOCH) // datetime.timedelta(microseconds=1) * 1000


def _prompt(entry: Mapping[str, Any]) -> str | None:
    if entry.get("isMeta") or entry.get("isCompactSummary") or entry.get("toolUseResult"):
        return None
    message = entry.get("message")
    content = message.get("content") if isinstance(message, dict) else None
    if isinstance(content, list) and any(
        isinstance(b, dict) and b.get("type") == "tool_result" for b in content
    ):
        return None
    text = user_text(content)
    if text is None or text.startswith(_NOT_PROMPTS) or text.startswith(_INTERRUPTED):
        return None
    return text


_FINAL_STOPS = frozenset({"end_turn", "stop_sequence", "max_tokens"})


def _final_stop(entry: Mapping[str, Any]) -> StopReason | None:
    """How a turn ended, if this assistant line is its last message."""
    message = field_obj(entry, "message")
    blocks = field_list(message, "content")
    if any(isinstance(b, dict) and b.get("type") == "tool_use" for b in blocks):
        return None  # a tool call: the turn goes on
    if entry.get("isApiErrorMessage"):
        return Failed(user_text(blocks) or "the model API failed")
    reason = message.get("stop_reason")
    if reason == "refusal":
        return Refused()
    return Completed() if isinstance(reason, str) and reason in _FINAL_STOPS else None


class _Replay:
    """Transcript lines → replay items; remembers whether a turn is open."""

    def __init__(self) -> None:
        self.content = Content()
        self.in_turn = False
        self.compacting = False  # a `/compact` turn, open until its output line

    def end(self, stop: StopReason) -> Iterator[ReplayItem]:
        if not self.in_turn:
            return
        self.in_turn = False
        usage = self.content.usage
        if usage is not None:
            usage_kind = ContextUsage(used_tokens=_occupancy(usage))
            yield Emitted(kind=usage_kind, model=self.content.model)
        yield TurnFinished(stop=stop)

    def entry(self, entry: Mapping[str, Any]) -> Iterator[ReplayItem]:
        if entry.get("isSidechain"):
            return
        kind = entry.get("type")
        if kind == "user":
            yield from self._user(entry)
        elif kind == "assistant" and isinstance(entry.get("message"), dict):
            yield from self.content.assistant(entry["message"], None)
            stop = _final_stop(entry)
            if stop is not None:
                yield from self.end(stop)
        elif kind == "system" and entry.get("subtype") == "compact_boundary":
            if not self.in_turn:  # `/compact` while idle: a turn of the agent's own
                self.in_turn = self.compacting = True
                yield TurnBegan()
            post = field_obj(entry, "compactMetadata").get("postTokens")
            if isinstance(post, int):
                self.content.usage = {"input_tokens": post}  # what the context holds now
            yield Emitted(kind=ContextCompacted())

    def _user(self, entry: Mapping[str, Any]) -> Iterator[ReplayItem]:
        prompt = _prompt(entry)
        if prompt is not None:
            # The replay acknowledges the prompt's turn (TurnBegan) and ends a
            # turn the file left open (inferred); the reader does neither.
            self.in_turn = True
            yield PromptSent(text=prompt, at_ns=_at_ns(entry))
            return
        message = field_obj(entry, "message")
        text = user_text(message.get("content"))
        if text is not None and text.startswith(_INTERRUPTED):
            yield from self.end(Cancelled())
            return
        yield from self.content.user(
            message.get("content"),
            entry.get("toolUseResult"),
            None,
            str(entry.get("uuid") or ""),
            meta=bool(entry.get("isMeta")),
        )
        if self.compacting and text is not None and text.startswith("<local-command-stdout>"):
            self.compacting = False
            yield from self.end(Completed())


def read_native_transcript(path: str | Path) -> Iterator[ReplayItem]:
    """Replay items of one Claude Code transcript file, in file order."""
    replay = _Replay()
    with open(path, "rb") as lines:
        for line in lines:  # binary files split on b"\n" only
            if not line.strip():
                continue
            try:
                entry = orjson.loads(line)
            except orjson.JSONDecodeError as error:
                prefix = line[:200].decode("utf-8", "replace")
                yield decode_problem(prefix, f"not JSON: {error}", ProblemKind.NOT_JSON)
                continue
            if isinstance(entry, dict):
                yield from replay.entry(entry)


def recognizes_line(value: Mapping[str, Any], path: Path) -> bool:
    """Whether one of a file's first lines is a Claude Code project line (the name says nothing)."""
    if value.get("type") not in _LINE_TYPES:
        return False
    return any(key in value for key in _SESSION_KEYS)
