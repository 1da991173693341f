"""The closed union of event kinds, one frozen class each.

Every `EventKind` of the line-protocol schema has a class here with
`to_wire()`; `kind_from_wire` reads any of them back (used for mock scripts,
transcripts and replay). Unit variants (`ContextCompacted`) are bare strings
on the wire.
"""

from __future__ import annotations

import enum
from collections.abc import Callable

import attrs

from ._discovery import DiagnosticLevel
from ._requests import Request, request_from_wire
from ._session import PlanUsage, SessionInfo, SessionStatus
from ._shape import Fields, ShapeError, tag_of
from ._tools import ToolUpdate

__all__ = [
    "AgentOrigin",
    "Cancelled",
    "Completed",
    "CompletionSource",
    "ContextCompacted",
    "ContextUsage",
    "Diagnostic",
    "EventKind",
    "Failed",
    "MessageEnded",
    "PlanEntry",
    "PlanStatus",
    "PlanUpdated",
    "PlanUsageUpdated",
    "PromptOrigin",
    "ReasoningDelta",
    "Refused",
    "RequestClosed",
    "RequestOpened",
    "SessionUpdated",
    "StatusChanged",
    "StopReason",
    "TextDelta",
    "ToolOutputDelta",
    "ToolUpdated",
    "TurnEnded",
    "TurnOrigin",
    "TurnStarted",
    "UserMessage",
    "kind_from_wire",
    "stop_from_wire",
    "stop_to_wire",
    "text_delta_parts",
]


@attrs.frozen
class PromptOrigin:
    prompt_id: str


@attrs.frozen
class AgentOrigin:
    pass


TurnOrigin = PromptOrigin | AgentOrigin


class CompletionSource(enum.StrEnum):
    PROTOCOL = "Protocol"  # the agent's wire said the turn ended
    INFERRED = "Inferred"  # corral inferred it after the agent went quiet


@attrs.frozen
class Completed:
    source: CompletionSource = CompletionSource.PROTOCOL


@attrs.frozen
class Failed:
    message: str


@attrs.frozen
class Cancelled:
    pass


@attrs.frozen
class Refused:
    pass


StopReason = Completed | Failed | Cancelled | Refused


def stop_to_wire(stop: StopReason) -> object:
    match stop:
        case Completed(source=source):
            return {"Completed": {"source": source.value}}
        case Failed(message=message):
            return {"Failed": {"message": message}}
        case Cancelled():
            return "Cancelled"
        case Refused():
            return "Refused"


def stop_from_wire(raw: object, path: str) -> StopReason:
    tag, payload = tag_of(raw, path, frozenset({"Cancelled", "Refused"}))
    if tag == "Cancelled":
        return Cancelled()
    if tag == "Refused":
        return Refused()
    fields = Fields(payload, f"{path}.{tag}")
    if tag == "Completed":
        return Completed(fields.choice("source", {s.value: s for s in CompletionSource}))
    if tag == "Failed":
        return Failed(fields.string("message"))
    raise ShapeError(path, f"unknown stop reason {tag!r}")


@attrs.frozen
class TurnStarted:
    origin: TurnOrigin

    def to_wire(self) -> object:
        origin: object = (
            {"Prompt": self.origin.prompt_id} if isinstance(self.origin, PromptOrigin) else "Agent"
        )
        return {"TurnStarted": {"origin": origin}}


@attrs.frozen(kw_only=True)
class TextDelta:
    message_id: str
    text: str

    def to_wire(self) -> object:
        return {"TextDelta": {"message_id": self.message_id, "text": self.text}}


@attrs.frozen(kw_only=True)
class ReasoningDelta:
    message_id: str
    text: str

    def to_wire(self) -> object:
        return {"ReasoningDelta": {"message_id": self.message_id, "text": self.text}}


@attrs.frozen(kw_only=True)
class UserMessage:
    """User-role content from the agent's side, never a replay of our prompt."""

    message_id: str
    text: str

    def to_wire(self) -> object:
        return {"UserMessage": {"message_id": self.message_id, "text": self.text}}


@attrs.frozen
class MessageEnded:
    message_id: str

    def to_wire(self) -> object:
        return {"MessageEnded": {"message_id": self.message_id}}


@attrs.frozen
class ToolUpdated:
    tool: ToolUpdate

    def to_wire(self) -> object:
        return {"ToolUpdated": self.tool.to_wire()}


@attrs.frozen(kw_only=True)
class ToolOutputDelta:
    tool_id: str
    text: str

    def to_wire(self) -> object:
        return {"ToolOutputDelta": {"tool_id": self.tool_id, "text": self.text}}


class PlanStatus(enum.StrEnum):
    PENDING = "Pending"
    IN_PROGRESS = "InProgress"
    COMPLETED = "Completed"


@attrs.frozen(kw_only=True)
class PlanEntry:
    text: str
    status: PlanStatus


@attrs.frozen
class PlanUpdated:
    entries: tuple[PlanEntry, ...]

    def to_wire(self) -> object:
        entries = [{"text": e.text, "status": e.status.value} for e in self.entries]
        return {"PlanUpdated": {"entries": entries}}


@attrs.frozen
class RequestOpened:
    request: Request

    def to_wire(self) -> object:
        return {"RequestOpened": self.request.to_wire()}


@attrs.frozen
class RequestClosed:
    request_id: str

    def to_wire(self) -> object:
        return {"RequestClosed": {"request_id": self.request_id}}


@attrs.frozen
class SessionUpdated:
    info: SessionInfo

    def to_wire(self) -> object:
        return {"SessionUpdated": self.info.to_wire()}


@attrs.frozen
class StatusChanged:
    status: SessionStatus

    def to_wire(self) -> object:
        return {"StatusChanged": self.status.value}


@attrs.frozen(kw_only=True)
class ContextUsage:
    used_tokens: int
    window_tokens: int | None = None
    cost_usd: float | None = None

    def to_wire(self) -> object:
        return {
            "ContextUsage": {
                "used_tokens": self.used_tokens,
                "window_tokens": self.window_tokens,
                "cost_usd": self.cost_usd,
            }
        }


@attrs.frozen
class ContextCompacted:
    def to_wire(self) -> object:
        return "ContextCompacted"


@attrs.frozen
class PlanUsageUpdated:
    usage: PlanUsage

    def to_wire(self) -> object:
        return {"PlanUsageUpdated": self.usage.to_wire()}


@attrs.frozen(kw_only=True)
class Diagnostic:
    level: DiagnosticLevel
    message: str

    def to_wire(self) -> object:
        return {"Diagnostic": {"level": self.level.value, "message": self.message}}


@attrs.frozen(kw_only=True)
class TurnEnded:
    stop: StopReason
    background: tuple[str, ...] = ()  # tools still running when the turn ended

    def to_wire(self) -> object:
        return {"TurnEnded": {"stop": stop_to_wire(self.stop), "background": list(self.background)}}


EventKind = (
    TurnStarted
    | TextDelta
    | ReasoningDelta
    | UserMessage
    | MessageEnded
    | ToolUpdated
    | ToolOutputDelta
    | PlanUpdated
    | RequestOpened
    | RequestClosed
    | SessionUpdated
    | StatusChanged
    | ContextUsage
    | ContextCompacted
    | PlanUsageUpdated
    | Diagnostic
    | TurnEnded
)


def _origin(raw: object, path: str) -> TurnOrigin:
    tag, payload = tag_of(raw, path, frozenset({"Agent"}))
    if payload is None:
        return AgentOrigin()
    if tag != "Prompt" or not isinstance(payload, str):
        raise ShapeError(path, 'expected "Agent" or {"Prompt": prompt id}')
    return PromptOrigin(payload)


def _plan(fields: Fields) -> PlanUpdated:
    entries = []
    for item_path, item in fields.array("entries"):
        entry = Fields(item, item_path)
        entries.append(
            PlanEntry(
                text=entry.string("text"),
                status=entry.choice("status", {s.value: s for s in PlanStatus}),
            )
        )
    return PlanUpdated(tuple(entries))


_READERS: dict[str, Callable[[Fields], EventKind]] = {
    "TurnStarted": lambda f: TurnStarted(_origin(f.value("origin"), f"{f.path}.origin")),
    "TextDelta": lambda f: TextDelta(message_id=f.string("message_id"), text=f.string("text")),
    "ReasoningDelta": lambda f: ReasoningDelta(
        message_id=f.string("message_id"), text=f.string("text")
    ),
    "UserMessage": lambda f: UserMessage(message_id=f.string("message_id"), text=f.string("text")),
    "MessageEnded": lambda f: MessageEnded(f.string("message_id")),
    "ToolUpdated": lambda f: ToolUpdated(ToolUpdate.from_wire(f.raw, f.path)),
    "ToolOutputDelta": lambda f: ToolOutputDelta(
        tool_id=f.string("tool_id"), text=f.string("text")
    ),
    "PlanUpdated": _plan,
    "RequestClosed": lambda f: RequestClosed(f.string("request_id")),
    "SessionUpdated": lambda f: SessionUpdated(SessionInfo.from_wire(f.raw, f.path)),
    "ContextUsage": lambda f: ContextUsage(
        used_tokens=f.integer("used_tokens"),
        window_tokens=f.opt_integer("window_tokens"),
        cost_usd=f.opt_number("cost_usd"),
    ),
    "PlanUsageUpdated": lambda f: PlanUsageUpdated(PlanUsage.from_wire(f.raw, f.path)),
    "Diagnostic": lambda f: Diagnostic(
        level=f.choice("level", {lv.value: lv for lv in DiagnosticLevel}),
        message=f.string("message"),
    ),
    "TurnEnded": lambda f: TurnEnded(
        stop=stop_from_wire(f.value("stop"), f"{f.path}.stop"),
        background=f.strings("background", default_empty=True),
    ),
}

_STATUSES = {status.value: status for status in SessionStatus}


def text_delta_parts(raw: object) -> tuple[str, str] | None:
    """A `TextDelta`'s message id and text, when `raw` is exactly its wire shape (the
    commonest event of any stream, read without the checked readers)."""
    if type(raw) is dict and len(raw) == 1:
        delta = raw.get("TextDelta")
        if type(delta) is dict and len(delta) == 2:
            message_id, text = delta.get("message_id"), delta.get("text")
            if type(message_id) is str and type(text) is str:
                return message_id, text
    return None


def kind_from_wire(raw: object, path: str = "kind") -> EventKind:
    # Fast path for the commonest event of any stream; any doubt about its
    # shape falls through to the checked readers below.
    if (parts := text_delta_parts(raw)) is not None:
        return TextDelta(message_id=parts[0], text=parts[1])
    tag, payload = tag_of(raw, path, frozenset({"ContextCompacted"}))
    if tag == "ContextCompacted":
        return ContextCompacted()
    if tag == "StatusChanged":
        if payload not in _STATUSES:
            raise ShapeError(f"{path}.StatusChanged", f"unknown status {payload!r}")
        return StatusChanged(_STATUSES[str(payload)])
    if tag == "RequestOpened":
        return RequestOpened(request_from_wire(payload, f"{path}.RequestOpened"))
    reader = _READERS.get(tag)
    if reader is None:
        raise ShapeError(path, f"unknown event kind {tag!r}")
    return reader(Fields(payload, f"{path}.{tag}"))
