"""The ACP normalizer: what the agent says, as driver events.

Inputs (already decoded JSON-RPC messages): `session/update`
notifications, the agent's requests, and the outcome of our
`session/prompt`. Outputs: `DriverEvent`s, in order, and for requests the
reply to send. Sans-IO: no clock, no files, no asyncio; the driver and the
recorded-wire replay both feed it.

Mapping (`sessionUpdate` → event):
- `agent_message_chunk` → TextDelta, `agent_thought_chunk` →
  ReasoningDelta, `user_message_chunk` → UserMessage. ACP has no
  end-of-message marker: the engine synthesizes `MessageEnded` at turn
  end. Chunks without a `messageId` get one: a new message starts at each
  turn, at each switch between text and thought, and after a tool call.
- `tool_call` / `tool_call_update` → cumulative `ToolUpdated` (`_tools`).
- `plan` (and the unstable item-based `plan_update` / `plan_removed`) →
  PlanUpdated.
- `available_commands_update` → InfoChanged(commands) (slash commands).
- `current_mode_update` / `config_option_update` → ConfigApplied /
  InfoChanged (`_settings`); `session_info_update` → InfoChanged(title).
- `usage_update` → ContextUsage (cost in USD only).
- `notice` → a Diagnostic at the notice's level; `compaction` /
  `compaction_summary` → ContextCompacted, once per compaction
  (`_notices`).
- anything else → Info Diagnostic with the raw update.

The prompt's `stopReason` ends the turn: end_turn → Completed, cancelled
→ Cancelled (unfinished tools are shown Cancelled first), refusal →
Refused, max_tokens / max_turn_requests (or anything unknown) → Failed
with the reason. The response's `usage` (unstable) becomes a ContextUsage
with `corral/tokens` just before the end.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

import attrs

from ...pipeline.driver import (
    DriverEvent,
    Emitted,
    InfoChanged,
    TokenCount,
    TurnBegan,
    TurnFinished,
)
from ...pipeline.events import (
    Cancelled,
    Completed,
    ContextUsage,
    DiagnosticLevel,
    Failed,
    PlanEntry,
    PlanStatus,
    PlanUpdated,
    ReasoningDelta,
    Refused,
    StopReason,
    TextDelta,
    ToolUpdated,
    UserMessage,
)
from ...pipeline.fidelity import DECLINED
from .._choices import slash_commands
from .._kit.quick import text_emitter
from .._kit.recent import Recent
from ._asks import Asks
from ._frames import raw_diagnostic
from ._notices import Compactions, notice
from ._settings import Settings
from ._tools import ToolBook

__all__ = ["Translator", "stop_reason"]

_PLAN_STATUSES = {
    "pending": PlanStatus.PENDING,
    "in_progress": PlanStatus.IN_PROGRESS,
    "completed": PlanStatus.COMPLETED,
}
_TOKEN_KEYS = {
    "inputTokens": "input",
    "outputTokens": "output",
    "cachedReadTokens": "cache_read",
    "cachedWriteTokens": "cache_write",
    "thoughtTokens": "reasoning",
}
_STREAMS = {
    "agent_message_chunk": "m",
    "agent_thought_chunk": "r",
    "user_message_chunk": "u",
}
_CHUNKS = {  # the bulk of a stream: built the quick way (`_kit/quick.py`)
    "m": text_emitter(TextDelta),
    "r": text_emitter(ReasoningDelta),
    "u": text_emitter(UserMessage),
}


def stop_reason(raw: object) -> StopReason:
    match raw:
        case "end_turn":
            return Completed()
        case "cancelled":
            return Cancelled()
        case "refusal":
            return Refused()
        case "max_tokens":
            return Failed("the agent stopped: max_tokens (the model's output limit)")
        case "max_turn_requests":
            return Failed("the agent stopped: max_turn_requests (too many model requests)")
    return Failed(f"the agent stopped with an unknown stop reason {raw!r}")


def _plan_entries(raw_entries: object) -> PlanUpdated:
    entries = []
    for entry in raw_entries if isinstance(raw_entries, list) else []:
        if isinstance(entry, dict) and isinstance(entry.get("content"), str):
            status = _PLAN_STATUSES.get(str(entry.get("status")), PlanStatus.PENDING)
            entries.append(PlanEntry(text=entry["content"], status=status))
    return PlanUpdated(tuple(entries))


def _input_hint(command: dict[str, Any]) -> object:
    hint = command.get("input")
    return hint.get("hint") if isinstance(hint, dict) else None


# The same list comes again and again (each session, and resent within one); only strings count.
_slash_commands = Recent(lambda raw: slash_commands(raw, _input_hint))


def _meta_usage(meta: object, window: tuple[int, int] | None) -> Emitted | None:
    """Gemini's usage, in the prompt answer's `_meta.quota` (not the unstable `usage`)."""
    quota = meta.get("quota") if isinstance(meta, dict) else None
    counts = quota.get("token_count") if isinstance(quota, dict) else None
    if not isinstance(counts, dict):
        return None
    tokens = {
        name: counts[key]
        for key, name in (("input_tokens", "input"), ("output_tokens", "output"))
        if isinstance(counts.get(key), int)
    }
    if not tokens:
        return None
    models = quota.get("model_usage") if isinstance(quota, dict) else None
    model = None
    if isinstance(models, list) and models and isinstance(models[-1], dict):
        named = models[-1].get("model")
        model = named if isinstance(named, str) else None
    used, size = window if window is not None else (sum(tokens.values()), None)
    return Emitted(
        kind=ContextUsage(used_tokens=used, window_tokens=size),
        tokens=TokenCount.from_counts(tokens),
        model=model,
    )


class Translator:
    """One ACP session's normalizer; see the module header."""

    def __init__(self, settings: Settings | None = None) -> None:
        self.settings = settings if settings is not None else Settings()
        self.tools = ToolBook()
        self.asks = Asks(self.tools)
        self.compactions = Compactions()
        self._messages = 0
        self._stream: tuple[str, str] | None = None  # (stream, message id) being written
        self._window: tuple[int, int] | None = None  # last usage_update (used, size)

    # ---- turns -------------------------------------------------------------------

    def turn_began(self) -> list[DriverEvent]:
        self._stream = None
        self.tools.forget_finished()
        self.asks.clear_grants()
        return [TurnBegan()]

    def prompt_done(self, result: object) -> list[DriverEvent]:
        """The `session/prompt` response: its stopReason ends the turn."""
        fields = result if isinstance(result, dict) else {}
        stop = stop_reason(fields.get("stopReason"))
        unfinished = (
            self.tools.cancel_open() if isinstance(stop, Cancelled) else self.tools.settle_refused()
        )
        events: list[DriverEvent] = [Emitted(kind=ToolUpdated(tool)) for tool in unfinished]
        usage = self._turn_usage(fields)
        if usage is not None:
            events.append(usage)
        events.append(TurnFinished(stop=stop))
        self._stream = None
        return events

    def prompt_failed(self, code: int, message: str) -> list[DriverEvent]:
        self._stream = None
        events: list[DriverEvent] = [
            Emitted(kind=ToolUpdated(tool)) for tool in self.tools.settle_refused()
        ]
        stop = Failed(f"session/prompt failed: {message} (code {code})")
        return [*events, TurnFinished(stop=stop)]

    def _turn_usage(self, fields: Mapping[str, Any]) -> Emitted | None:
        raw = fields.get("usage")
        if not isinstance(raw, dict):
            return _meta_usage(fields.get("_meta"), self._window)
        tokens = {
            name: raw[key] for key, name in _TOKEN_KEYS.items() if isinstance(raw.get(key), int)
        }
        total = raw.get("totalTokens")
        used, window = self._window if self._window is not None else (total, None)
        if not isinstance(used, int):
            return None
        return Emitted(
            kind=ContextUsage(used_tokens=used, window_tokens=window),
            tokens=TokenCount.from_counts(tokens),
        )

    # ---- notifications --------------------------------------------------------------

    def notification(self, method: str, params: object) -> list[DriverEvent]:
        if method == "session/update" and isinstance(params, dict):
            update = params.get("update")
            if isinstance(update, dict):
                return self.update(update)
        level = DiagnosticLevel.INFO
        return [raw_diagnostic(level, f"ACP notification {method}", method, params)]

    def update(self, update: Mapping[str, Any]) -> list[DriverEvent]:
        kind = update.get("sessionUpdate")
        if isinstance(kind, str) and (handler := _UPDATES.get(kind)) is not None:
            return handler(self, kind, update)
        return [
            raw_diagnostic(
                DiagnosticLevel.INFO, f"ACP session update {kind!r}", f"update:{kind}", update
            )
        ]

    def _tool_call(self, kind: str, update: Mapping[str, Any]) -> list[DriverEvent]:
        self._stream = None
        tool = self.tools.started(update) if kind == "tool_call" else self.tools.updated(update)
        return [] if tool is None else [Emitted(kind=ToolUpdated(tool))]

    def _plan(self, kind: str, update: Mapping[str, Any]) -> list[DriverEvent]:
        return [Emitted(kind=_plan_entries(update.get("entries")))]

    def _commands(self, kind: str, update: Mapping[str, Any]) -> list[DriverEvent]:
        return [InfoChanged(commands=_slash_commands(update.get("availableCommands")))]

    def _mode(self, kind: str, update: Mapping[str, Any]) -> list[DriverEvent]:
        return self.settings.mode_changed(update.get("currentModeId"))

    def _options(self, kind: str, update: Mapping[str, Any]) -> list[DriverEvent]:
        options = update.get("configOptions")
        return self.settings.replaced(options) if isinstance(options, list) else []

    def _title(self, kind: str, update: Mapping[str, Any]) -> list[DriverEvent]:
        title = update.get("title")
        return [InfoChanged(title=title)] if isinstance(title, str) else []

    def _notice(self, kind: str, update: Mapping[str, Any]) -> list[DriverEvent]:
        return notice(update)

    def _compaction(self, kind: str, update: Mapping[str, Any]) -> list[DriverEvent]:
        if kind == "compaction_summary":
            return self.compactions.summary(update)
        return self.compactions.update(update)

    def _message_id(self, stream: str, given: object) -> str:
        if isinstance(given, str) and given:
            return given if stream == "m" else f"{given}/{stream}"
        current = self._stream
        if current is not None and current[0] == stream:
            return current[1]  # the message being written goes on
        self._messages += 1
        self._stream = (stream, f"acp-{stream}{self._messages}")
        return self._stream[1]

    def _chunk(self, kind: str, update: Mapping[str, Any]) -> list[DriverEvent]:
        content = update.get("content")
        if not isinstance(content, dict) or content.get("type") != "text":
            block = content.get("type") if isinstance(content, dict) else None
            return [
                raw_diagnostic(
                    DiagnosticLevel.INFO,
                    f"ACP {kind} with a {block} block",
                    f"content:{block}",
                    update,
                )
            ]
        text = content.get("text")
        if not text or not isinstance(text, str):
            return []
        stream = _STREAMS[kind]
        given, current = update.get("messageId"), self._stream
        if given is None and current is not None and current[0] == stream:
            return [_CHUNKS[stream](current[1], text)]  # the message being written goes on
        return [_CHUNKS[stream](self._message_id(stream, given), text)]

    def _plan_update(self, kind: str, update: Mapping[str, Any]) -> list[DriverEvent]:
        if kind == "plan_removed":
            return [Emitted(kind=PlanUpdated(()))]
        plan = update.get("plan")
        if isinstance(plan, dict) and plan.get("type") == "items":
            return [Emitted(kind=_plan_entries(plan.get("entries")))]
        return [
            raw_diagnostic(
                DiagnosticLevel.INFO, "ACP plan in a form corral does not show", kind, update
            )
        ]

    def _usage(self, kind: str, update: Mapping[str, Any]) -> list[DriverEvent]:
        used, size = update.get("used"), update.get("size")
        if not isinstance(used, int) or not isinstance(size, int):
            return [
                raw_diagnostic(DiagnosticLevel.INFO, "ACP usage update", "update:usage", update)
            ]
        self._window = (used, size)
        cost = update.get("cost")
        cost_usd = None
        if isinstance(cost, dict) and cost.get("currency") == "USD":
            amount = cost.get("amount")
            cost_usd = float(amount) if isinstance(amount, int | float) else None
        return [Emitted(kind=ContextUsage(used_tokens=used, window_tokens=size, cost_usd=cost_usd))]

    # ---- requests from the agent -----------------------------------------------------

    def unsupported(self, method: str, params: object) -> list[DriverEvent]:
        """A request corral does not serve: the driver answers -32601; the app hears of it."""
        extension = method.startswith("_")
        level = DiagnosticLevel.INFO if extension else DiagnosticLevel.WARNING
        what = "extension method" if extension else "request"
        message = f"the agent sent the {what} {method}, which corral does not support"
        return [_declined(raw_diagnostic(level, message, method, params), method)]

    def declined(self, method: str, params: object, why: str | None = None) -> list[DriverEvent]:
        """A request corral answered with the wire's own decline (`elicitation/create`)."""
        message = why or f"the agent asked for input corral cannot show ({method}); declined"
        note = raw_diagnostic(DiagnosticLevel.WARNING, message, method, params)
        return [_declined(note, method)]


def _declined(note: Emitted, method: str) -> Emitted:
    """`corral/declined`: corral answered this request itself, so the agent is not waiting."""
    return attrs.evolve(note, extensions={**note.extensions, DECLINED: method})


_Update = Callable[[Translator, str, Mapping[str, Any]], list[DriverEvent]]
# The handler of each `sessionUpdate`, looked up once per update (see the module header).
_UPDATES: dict[str, _Update] = {
    **dict.fromkeys(_STREAMS, Translator._chunk),
    **dict.fromkeys(("tool_call", "tool_call_update"), Translator._tool_call),
    "plan": Translator._plan,
    **dict.fromkeys(("plan_update", "plan_removed"), Translator._plan_update),
    "available_commands_update": Translator._commands,
    "current_mode_update": Translator._mode,
    "config_option_update": Translator._options,
    "session_info_update": Translator._title,
    "usage_update": Translator._usage,
    "notice": Translator._notice,
    **dict.fromkeys(("compaction", "compaction_summary"), Translator._compaction),
}
