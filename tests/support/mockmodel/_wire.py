"""What an API adapter yields and the helpers every adapter shares.

Adapters turn a `Reply` into a sequence of `Step`s: `SseEvent`s to write and
`Pause`s to wait (the server waits on the client's disconnect during a
pause, so a slow stream stops as soon as the client goes away). Adapters are
pure: no I/O, no clock.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ._script import Conversation, LastMessage, OfferedTool

__all__ = [
    "Pause",
    "SseEvent",
    "Step",
    "conversation_from",
    "estimate_tokens",
    "text_of",
]

# Context blocks agents wrap around or beside the prompt: Claude's
# <system-reminder>, Copilot's <current_datetime>, Gemini's <session_context>.
_CONTEXT_BLOCK_RE = re.compile(r"<([a-z][a-z0-9_-]*)>.*?</\1>", re.DOTALL)


@dataclass(frozen=True, kw_only=True)
class SseEvent:
    """One server-sent event; `event` None writes a bare `data:` line."""

    data: Any
    event: str | None = None

    def encode(self) -> bytes:
        payload = self.data if isinstance(self.data, str) else json.dumps(self.data)
        head = f"event: {self.event}\n" if self.event else ""
        return f"{head}data: {payload}\n\n".encode()


@dataclass(frozen=True, kw_only=True)
class Pause:
    seconds: float


Step = SseEvent | Pause


def estimate_tokens(text: str) -> int:
    return max(1, len(text) // 4)


def text_of(content: Any, *, text_keys: Sequence[str] = ("text",)) -> list[str]:
    """The text parts of a message content (a string or a list of parts)."""
    if isinstance(content, str):
        return [content]
    parts: list[str] = []
    if isinstance(content, list):
        for part in content:
            if isinstance(part, str):
                parts.append(part)
            elif isinstance(part, Mapping):
                parts += [str(part[key]) for key in text_keys if isinstance(part.get(key), str)]
    return parts


def conversation_from(
    *,
    last: LastMessage,
    parts: Iterable[str],
    tools: Iterable[OfferedTool],
    message_count: int,
) -> Conversation:
    """A `Conversation`; user text drops the agents' context blocks.

    The user text is the part that carries a `CORRAL_` trigger if any, else
    the last non-empty part: agents put context (environment, reminders) in
    parts of their own before or after the prompt.
    """
    if last == "tool_result":  # tool output keeps its tags: they may wrap the output
        text = "\n".join(part for part in parts if part.strip())
    else:
        cleaned = [_CONTEXT_BLOCK_RE.sub("", part).strip() for part in parts]
        cleaned = [part for part in cleaned if part]
        triggered = [part for part in cleaned if "CORRAL_" in part]
        text = _unquote((triggered or cleaned or [""])[-1])
    return Conversation(
        last=last,
        text=text,
        tools=tuple(tools),
        message_count=message_count,
    )


def _unquote(text: str) -> str:
    # `opencode run "a b"` sends the prompt wrapped in double quotes.
    if len(text) >= 2 and text[0] == text[-1] == '"' and '"' not in text[1:-1]:
        return text[1:-1]
    return text
