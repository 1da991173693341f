"""The items of an app-server thread: tools, messages and the user's prompts.

Part of the app-server normalizer (sans-IO): `ItemTracker` turns
`item/started`, `item/completed` and the item deltas into driver events and
keeps what that takes: the live snapshot of every unfinished tool (so an
approval shows the tool as the app saw it, and an interrupt can end them
all), each tool's output so far (bounded), which messages streamed (a
message that streamed nothing is sent whole when it completes), and the
prompts corral sent (their userMessage items are not news to the app).
Items of another thread (subagents) are marked `codex/thread_id`.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable

import attrs

from ...pipeline.driver import DriverEvent, Emitted
from ...pipeline.events import (
    ContextCompacted,
    DiagnosticLevel,
    Fields,
    MessageEnded,
    ReasoningDelta,
    TextDelta,
    ToolOutputDelta,
    ToolStatus,
    ToolUpdate,
    ToolUpdated,
    UserMessage,
)
from .._kit.quick import text_emitter
from .._snapshots import tool_ended
from ._common import diagnostic, message_end, unknown_frame, user_text
from ._items import file_changes, tool_update

__all__ = ["ItemTracker"]

_MAX_OUTPUT = 256 * 1024  # characters of tool output kept for a tool's final snapshot
_MAX_OUR_TEXTS = 64
_TEXT = text_emitter(TextDelta)  # `Emitted(kind=TextDelta(...))`, built the quick way


@attrs.define
class _Output:
    text: str = ""
    dropped: int = 0

    def add(self, delta: str) -> None:
        room = _MAX_OUTPUT - len(self.text)
        self.text += delta[:room]
        self.dropped += max(len(delta) - room, 0)

    def value(self) -> str | None:
        if not self.text:
            return None
        suffix = f"\n[corral: {self.dropped} more characters not kept]" if self.dropped else ""
        return self.text + suffix


class ItemTracker:
    def __init__(self, *, is_ours: Callable[[Fields], bool]) -> None:
        self._is_ours = is_ours
        self._tools: dict[str, ToolUpdate] = {}  # live snapshots of unfinished tools
        self._outputs: dict[str, _Output] = {}
        self._streamed: set[str] = set()
        self._our_ids: set[str] = set()
        self._our_texts: deque[str] = deque(maxlen=_MAX_OUR_TEXTS)
        self.compacted = False  # the running turn already reported its compaction

    def expect_prompt(self, client_id: str, text: str) -> None:
        self._our_ids.add(client_id)
        self._our_texts.append(text)

    def tool(self, tool_id: str) -> ToolUpdate | None:
        return self._tools.get(tool_id)

    def turn_over(self) -> None:
        self._streamed.clear()
        self.compacted = False

    def end_tools(self, status: ToolStatus) -> list[DriverEvent]:
        """End every tool still running (Codex will never complete them)."""
        ended: list[DriverEvent] = []
        for tool_id, tool in self._tools.items():
            output = self._outputs.pop(tool_id, None)
            snapshot = tool_ended(tool, status, output.value() if output else tool.output)
            ended.append(Emitted(kind=ToolUpdated(snapshot)))
        self._tools.clear()
        return ended

    def marked(self, params: Fields, event: Emitted) -> Emitted:
        if self._is_ours(params):
            return event
        extensions = {**event.extensions, "codex/thread_id": params.opt_string("threadId")}
        return attrs.evolve(event, extensions=extensions)

    def item_started(self, params: Fields) -> list[DriverEvent]:
        item = params.obj("item")
        tool = tool_update(item, finished=False)
        if tool is None:
            return []
        self._tools[tool.id] = tool
        return [self.marked(params, Emitted(kind=ToolUpdated(tool)))]

    def item_completed(self, params: Fields) -> list[DriverEvent]:
        item = params.obj("item")
        item_id = item.string("id")
        output = self._outputs.pop(item_id, None)
        tool = tool_update(item, finished=True, output=None if output is None else output.value())
        if tool is not None:
            self._tools.pop(item_id, None)
            return [self.marked(params, Emitted(kind=ToolUpdated(tool)))]
        return [self.marked(params, event) for event in self._content_item(item)]

    def _content_item(self, item: Fields) -> list[Emitted]:
        item_id = item.string("id")
        match item.string("type"):
            case "agentMessage" | "plan":
                return message_end(self._streamed, item_id, item.string("text"), TextDelta)
            case "reasoning":
                text = "\n\n".join(item.strings("summary", True) or item.strings("content", True))
                ended = message_end(self._streamed, item_id, text, ReasoningDelta)
                if f"{item_id}:raw" in self._streamed:
                    ended.append(Emitted(kind=MessageEnded(f"{item_id}:raw")))
                return ended
            case "userMessage":
                return self._user_message(item)
            case "hookPrompt":
                texts = [Fields(f, p).string("text") for p, f in item.array("fragments", True)]
                user = UserMessage(message_id=item_id, text="\n".join(texts))
                return [Emitted(kind=user, extensions={"codex/hook_prompt": True})]
            case "contextCompaction":
                self.compacted = True
                return [Emitted(kind=ContextCompacted())]
            case "enteredReviewMode" | "exitedReviewMode" as kind:
                review = item.opt_string("review") or ""
                return [diagnostic(DiagnosticLevel.INFO, f"{kind}: {review}".strip(": "))]
            case "subAgentActivity":
                note = f"subagent {item.opt_string('agentPath')}: {item.opt_string('kind')}"
                return [diagnostic(DiagnosticLevel.INFO, note)]
            case "functionCallOutput":
                return []
            case other:
                return [unknown_frame(f"item/{other}", item.raw)]

    def _user_message(self, item: Fields) -> list[Emitted]:
        text = user_text(item)
        client_id = item.opt_string("clientId")
        if client_id is not None and client_id in self._our_ids:
            self._our_ids.discard(client_id)
            if text in self._our_texts:
                self._our_texts.remove(text)
            return []
        if client_id is None and text in self._our_texts:
            self._our_texts.remove(text)
            return []
        return [Emitted(kind=UserMessage(message_id=item.string("id"), text=text))]

    # ---- deltas --------------------------------------------------------------------

    def text_delta(self, params: Fields) -> list[DriverEvent]:
        item_id = params.string("itemId")
        self._streamed.add(item_id)
        return [self.marked(params, _TEXT(item_id, params.string("delta")))]

    def reasoning_delta(self, params: Fields) -> list[DriverEvent]:
        item_id = params.string("itemId")
        self._streamed.add(item_id)
        delta = ReasoningDelta(message_id=item_id, text=params.string("delta"))
        return [self.marked(params, Emitted(kind=delta))]

    def reasoning_part(self, params: Fields) -> list[DriverEvent]:
        item_id = params.string("itemId")
        if item_id not in self._streamed:
            return []
        return [self.marked(params, Emitted(kind=ReasoningDelta(message_id=item_id, text="\n\n")))]

    def raw_reasoning_delta(self, params: Fields) -> list[DriverEvent]:
        message_id = f"{params.string('itemId')}:raw"
        self._streamed.add(message_id)
        delta = ReasoningDelta(message_id=message_id, text=params.string("delta"))
        return [self.marked(params, Emitted(kind=delta))]

    def output_delta(self, params: Fields) -> list[DriverEvent]:
        item_id = params.string("itemId")
        text = params.string("delta")
        self._outputs.setdefault(item_id, _Output()).add(text)
        return [self.marked(params, Emitted(kind=ToolOutputDelta(tool_id=item_id, text=text)))]

    def mcp_progress(self, params: Fields) -> list[DriverEvent]:
        item_id = params.string("itemId")
        text = params.string("message") + "\n"
        return [self.marked(params, Emitted(kind=ToolOutputDelta(tool_id=item_id, text=text)))]

    def patch_updated(self, params: Fields) -> list[DriverEvent]:
        item_id = params.string("itemId")
        tool = self._tools.get(item_id)
        if tool is None:
            return []
        diffs, locations, kind = file_changes(params.array("changes", True))
        tool = attrs.evolve(tool, kind=kind, diffs=tuple(diffs), locations=tuple(locations))
        self._tools[item_id] = tool
        return [self.marked(params, Emitted(kind=ToolUpdated(tool)))]
