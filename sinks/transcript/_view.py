"""A transcript as a person reads it: blocks, and a one-line summary.

Events are fine-grained (a text delta per few words, a tool snapshot per
change). `blocks(transcript)` folds them into what a reader wants: one
block per prompt, per assistant message (deltas joined), per tool call
(its last snapshot, with streamed output and the unified diff of each file
it edits), per request with how it was decided and by whom, per diagnostic
and error, plus turn boundaries (the end carrying the turn's tokens and
cost). The terminal rendering, the HTML export and the search index all
read these blocks.

Blocks keep the order things happened in, which is not always the order of
the records: a prompt is recorded when it is sent, and a second prompt sent
while the first turn runs is queued; the reader expects it at the start of
its own turn, so it is shown there, with a short `queued` mark where it was
sent. A tool that asks permission shows its snapshot as it was when it
asked, then the request and the decision, then a second block with what it
did once allowed: never "Completed" above the question that allowed it.

`summary(transcript)` is the row of `corral transcripts list`; its tokens
and cost are defined in `_usage.py`, as the footer's are.
"""

from __future__ import annotations

import difflib
import re

import attrs

from ...pipeline.events import (
    Cancelled,
    Completed,
    ContextUsage,
    Diagnostic,
    Event,
    Failed,
    FileDiff,
    MessageEnded,
    PermissionRequest,
    PlanUpdated,
    PromptOrigin,
    ReasoningDelta,
    Refused,
    RequestOpened,
    SessionUpdated,
    SystemTime,
    TextDelta,
    ToolOutputDelta,
    ToolUpdate,
    ToolUpdated,
    TurnEnded,
    TurnStarted,
    UserMessage,
)
from ...pipeline.records import Decider, PolicyDecider, decided_by_from
from ._format import DecisionRecord, ErrorRecord, EventRecord, PromptRecord, RepairRecord
from ._reader import Transcript
from ._usage import Usage

__all__ = ["Block", "Summary", "blocks", "summary", "tool_text", "unified_diff", "who_decided"]

_EPOCH = SystemTime(0, 0)

_MARKS = re.compile(r"(\[REDACTED:[a-z_]+\])(?:\[REDACTED:[a-z_]+\])+")


@attrs.define(kw_only=True)
class Block:
    role: str  # prompt assistant reasoning user tool request decision diagnostic error
    #            turn_start turn_end plan repair queued info
    sequence: int  # of the first event it holds; 0 for records without one
    title: str = ""
    text: str = ""
    turn: str | None = None
    at: SystemTime = _EPOCH
    diff: str = ""  # tool blocks: the unified diff of the files the tool edits
    decided_by: str = ""  # decision blocks: rule:<id>, app, timeout, ...
    tokens: int = 0  # turn_end blocks: the turn's tokens and cost, where known
    cost_usd: float = 0.0


def unified_diff(diff: FileDiff) -> str:
    """One file's change as `diff -u` shows it (a new file diffs from /dev/null)."""
    old = (diff.old_text or "").splitlines(keepends=True)
    new = diff.new_text.splitlines(keepends=True)
    lines = difflib.unified_diff(
        old,
        new,
        fromfile="/dev/null" if diff.old_text is None else f"a/{diff.path}",
        tofile=f"b/{diff.path}",
    )
    return "".join(line if line.endswith("\n") else line + "\n" for line in lines)


_DECIDERS = {
    Decider.APP: "the app",
    Decider.TIMEOUT: "the timeout (nobody answered)",
    Decider.CANCEL: "a cancel",
    Decider.TURN_END: "the end of the turn",
    Decider.SHUTDOWN: "shutdown",
    Decider.AGENT: "the agent",
    Decider.GENERATE: "the generate policy",
    Decider.LIMIT: "the limit on open requests",
}


def who_decided(decided_by: str) -> str:
    """`decided_by` as a reader says it: `rule:r1` is "rule r1", `app` "the app"."""
    try:
        by = decided_by_from(decided_by)
    except ValueError:  # a word this corral does not know: as it is
        return decided_by
    if isinstance(by, PolicyDecider):
        return f"{by.part} {by.name}"
    return _DECIDERS[by]


def tool_text(tool: ToolUpdate, streamed: str = "", *, diffs: bool = True) -> str:
    parts = [part for part in (_input_text(tool), tool.output or streamed) if part]
    if diffs:
        parts += [f"{diff.path}\n{diff.new_text}" for diff in tool.diffs]
    return "\n".join(parts)


def _input_text(tool: ToolUpdate) -> str:
    wire = tool.input.to_wire()
    if isinstance(wire, dict):
        value = next(iter(wire.values()))
        return str(value.get("command", "")) if isinstance(value, dict) else str(value)
    return ""


def _stop_text(event: TurnEnded) -> str:
    match event.stop:
        case Completed(source=source):
            return f"completed ({source.value.lower()})"
        case Failed(message=message):
            return f"failed: {message}"
        case Cancelled():
            return "cancelled"
        case Refused():
            return "refused"


def _block(event: Event, role: str, title: str = "", text: str = "") -> Block:
    return Block(
        role=role,
        sequence=event.sequence,
        title=title,
        text=text,
        turn=None if event.turn_info is None else event.turn_info.id,
        at=event.occurred_at,
    )


@attrs.define(kw_only=True)
class _Tool:
    block: Block
    tool: ToolUpdate
    streamed: list[str] = attrs.field(factory=list)

    def refresh(self) -> None:
        tool = self.tool
        kind = tool.kind if isinstance(tool.kind, str) else f"{tool.kind.server}/{tool.kind.tool}"
        self.block.title = f"{kind}: {tool.title} [{tool.status.value}]"
        self.block.text = tool_text(tool, "".join(self.streamed), diffs=False)
        self.block.diff = "".join(unified_diff(diff) for diff in tool.diffs)


class _Folder:
    def __init__(self) -> None:
        self.out: list[Block] = []
        self.messages: dict[str, Block] = {}
        self.tools: dict[str, _Tool] = {}
        self.done: list[_Tool] = []  # snapshots cut at a permission request
        self.parked: dict[str, ToolUpdate] = {}  # tools cut at one, not yet seen again
        self.prompts: dict[str, Block] = {}  # sent, their turn not yet started
        self.open_turn: str | None = None
        self.last_turn: str | None = None
        self.usage: dict[str, Usage] = {}
        self.ends: list[Block] = []

    def add(self, block: Block) -> Block:
        self.out.append(block)
        return block

    def event(self, event: Event) -> None:
        match event.kind:
            case TextDelta(message_id=mid, text=text) | ReasoningDelta(message_id=mid, text=text):
                block = self.messages.get(mid)
                if block is None:
                    role = "assistant" if isinstance(event.kind, TextDelta) else "reasoning"
                    block = self.messages[mid] = self.add(_block(event, role))
                block.text += text
            case MessageEnded(message_id=mid):
                self.messages.pop(mid, None)
            case UserMessage(text=text):
                self.add(_block(event, "user", text=text))
            case ToolUpdated(tool=tool):
                self._tool(tool, event)
            case ToolOutputDelta(tool_id=tool_id, text=text):
                if tool_id in self.parked:
                    self._tool(self.parked[tool_id], event)
                if tool_id in self.tools:
                    self.tools[tool_id].streamed.append(text)
            case ContextUsage():
                turn = event.turn_info.id if event.turn_info is not None else self.last_turn
                if turn is not None:
                    self.usage.setdefault(turn, Usage()).add(event)
            case _:
                self._other(event)

    def _tool(self, tool: ToolUpdate, event: Event) -> None:
        self.parked.pop(tool.id, None)
        known = self.tools.get(tool.id)
        if known is None:
            known = self.tools[tool.id] = _Tool(block=self.add(_block(event, "tool")), tool=tool)
        known.tool = tool

    def _asks(self, request: PermissionRequest) -> None:
        """Cut the tool's block where it asks: what it does once allowed comes after."""
        known = self.tools.pop(request.tool.id, None)
        if known is not None:
            self.done.append(known)
            self.parked[request.tool.id] = known.tool

    def prompt(self, block: Block) -> None:
        if self.open_turn is not None:
            self.add(attrs.evolve(block, role="queued", text=block.text.split("\n", 1)[0]))
        self.prompts[block.title] = block

    def _turn(self, event: Event, kind: TurnStarted | TurnEnded) -> Block:
        turn = event.turn_info.id if event.turn_info is not None else None
        if isinstance(kind, TurnEnded):
            self.open_turn = None
            block = _block(event, "turn_end", title=_stop_text(kind))
            self.ends.append(block)
            return self.add(block)
        self.open_turn = self.last_turn = turn
        origin = kind.origin
        by = f"prompt {origin.prompt_id}" if isinstance(origin, PromptOrigin) else "agent"
        block = self.add(_block(event, "turn_start", title=f"turn ({by})"))
        if isinstance(origin, PromptOrigin) and origin.prompt_id in self.prompts:
            self.add(attrs.evolve(self.prompts.pop(origin.prompt_id), turn=turn))
        return block

    def _other(self, event: Event) -> None:
        kind = event.kind
        block: Block | None = None
        match kind:
            case TurnStarted() | TurnEnded():
                self._turn(event, kind)
            case RequestOpened(request=request):
                if isinstance(request, PermissionRequest):
                    self._asks(request)
                    title, text = f"permission: {request.tool.title}", request.detail or ""
                else:
                    title = "question"
                    text = "\n".join(q.text for q in request.questions)
                block = _block(event, "request", title=title, text=text)
            case Diagnostic(level=level, message=message):
                block = _block(event, "diagnostic", title=level.value, text=message)
            case PlanUpdated(entries=entries):
                text = "\n".join(f"[{e.status.value}] {e.text}" for e in entries)
                block = _block(event, "plan", title="plan", text=text)
            case SessionUpdated(info=info) if info.title:
                block = _block(event, "info", title="title", text=info.title)
        if block is not None:
            self.add(block)

    def finish(self) -> list[Block]:
        self.out.extend(self.prompts.values())  # sent, and no turn ever started them
        for tool in [*self.done, *self.tools.values()]:
            tool.refresh()  # once, at the end: output may stream in many deltas
        for end in self.ends:
            usage = self.usage.get(end.turn or "")
            if usage is not None:
                end.tokens, end.cost_usd = usage.tokens, usage.cost_usd
        for block in self.out:
            # A secret streamed over many deltas is masked in each: show one mark.
            block.text = _MARKS.sub(lambda match: match.group(1), block.text)
        return self.out


def _decision(record: DecisionRecord) -> Block:
    title = f"{record.request_id}: {record.decision} by {record.decided_by}"
    text = f"decided by {who_decided(record.decided_by)}, after {record.waited_seconds:.1f} s"
    return Block(
        role="decision",
        sequence=0,
        title=title,
        text=text,
        turn=record.turn_id,
        at=record.at,
        decided_by=record.decided_by,
    )


def blocks(transcript: Transcript) -> list[Block]:
    folder = _Folder()
    for record in transcript.records:
        match record:
            case EventRecord(event=event):
                folder.event(event)
            case PromptRecord(prompt_id=prompt_id, text=text, at=at):
                folder.prompt(Block(role="prompt", sequence=0, title=prompt_id, text=text, at=at))
            case DecisionRecord():
                folder.add(_decision(record))
            case ErrorRecord(error=error):
                stderr = error.fields.get("stderr")
                text = error.message + (f"\n{stderr}" if stderr else "")
                folder.add(Block(role="error", sequence=0, title=error.kind.value, text=text))
            case RepairRecord(cut_bytes=cut, at=at):
                text = f"a torn last line of {cut} bytes was cut on reopen"
                folder.add(Block(role="repair", sequence=0, title="repaired", text=text, at=at))
    return folder.finish()


@attrs.frozen(kw_only=True)
class Summary:
    transcript_id: str
    agent: str
    session: str
    title: str | None
    started: float
    ended: float | None
    status: str
    turns: int
    events: int
    tokens: int
    cost_usd: float
    problems: int
    source: str


def summary(transcript: Transcript, *, live: bool) -> Summary:
    header, footer = transcript.header, transcript.footer
    events = transcript.events()
    usage = Usage.of(events)
    title = header.title if header is not None else None
    for event in events:
        if isinstance(event.kind, SessionUpdated) and event.kind.info.title:
            title = event.kind.info.title
    if footer is not None:
        status = footer.reason + (" (incomplete)" if "incomplete" in footer.raw else "")
    else:
        status = "live" if live else "unfinished"
    problems = len(transcript.problems) + (1 if transcript.torn_bytes and not live else 0)
    return Summary(
        transcript_id=transcript.transcript_id,
        agent=header.agent if header is not None else "?",
        session=header.session_id if header is not None else "?",
        title=title,
        started=header.started_at.seconds if header is not None else 0.0,
        ended=footer.ended_at.seconds if footer is not None else None,
        status=status,
        turns=transcript.turns,
        events=len(events),
        tokens=usage.tokens,
        cost_usd=usage.cost_usd,
        problems=problems,
        source=str(header.source.get("kind", "live")) if header is not None else "?",
    )
