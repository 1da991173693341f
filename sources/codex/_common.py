"""What both Codex wires share: diagnostics, usage, rate limits, plans, diffs.

Codex speaks two dialects: the app-server's camelCase notifications and its
core's snake_case `EventMsg`. They carry the same facts, so the translation
of those facts into corral's vocabulary lives here once:

- diagnostics, including the conventions for unknown frames
  (`corral/unknown_frame` + `codex/raw_frame`) and undecodable ones
  (`corral/decode_error` = "bad_shape");
- token usage: `UsageMeter` turns Codex's running thread totals into the
  tokens spent by the current turn (`corral/tokens` on `ContextUsage`);
  `input` counts uncached input only, `cache_read` the cached part;
- rate limits → `PlanUsage` windows ("Session" for 5 h, "Week" for 7 days);
- the two dialects' names for those token and rate-limit fields, as one
  `Spelling` each (`CAMEL`, `SNAKE`), so `tokens_of` and `limit_windows`
  read both;
- file changes → `FileDiff`: Codex gives whole contents for added and
  deleted files and a unified diff for updates; an update's `old_text` /
  `new_text` are the hunks' old and new sides (what the diff shows).

Everything here is pure: values in, values out.
"""

from __future__ import annotations

from typing import Any

import attrs

from ...pipeline.driver import Emitted, ProblemKind, TokenCount
from ...pipeline.events import (
    ContextUsage,
    Diagnostic,
    DiagnosticLevel,
    Fields,
    FileDiff,
    MessageEnded,
    PlanEntry,
    PlanStatus,
    PlanUpdated,
    PlanUsage,
    ReasoningDelta,
    ShapeError,
    SystemTime,
    TextDelta,
    UsageWindow,
)

__all__ = [
    "CAMEL",
    "RAW_FRAME",
    "SNAKE",
    "LimitWindow",
    "Spelling",
    "Tokens",
    "UsageMeter",
    "bad_shape",
    "context_usage",
    "diagnostic",
    "file_diff",
    "limit_windows",
    "message_end",
    "plan_updated",
    "plan_usage",
    "tokens_of",
    "unknown_frame",
    "user_text",
]

RAW_FRAME = "codex/raw_frame"
_MAX_RAW_CHARS = 16_000


def _bounded(raw: object) -> object:
    """The raw frame for `extensions`, or a prefix of its text when it is huge."""
    text = repr(raw)
    if len(text) <= _MAX_RAW_CHARS:
        return raw
    return {"truncated": True, "prefix": text[:_MAX_RAW_CHARS]}


def diagnostic(level: DiagnosticLevel, message: str, **extensions: Any) -> Emitted:
    return Emitted(kind=Diagnostic(level=level, message=message), extensions=dict(extensions))


def problem(kind: ProblemKind, message: str, **extensions: Any) -> Emitted:
    """A Warning about a line or frame that is not the wire's, of a `ProblemKind`."""
    note = Diagnostic(level=DiagnosticLevel.WARNING, message=message)
    return Emitted(kind=note, problem=kind, extensions=dict(extensions))


def unknown_frame(frame_type: str, raw: object) -> Emitted:
    """A frame corral does not know: kept, never silent."""
    note = Diagnostic(level=DiagnosticLevel.INFO, message=f"unknown Codex frame {frame_type!r}")
    return Emitted(kind=note, unknown_frame=frame_type, extensions={RAW_FRAME: _bounded(raw)})


def bad_shape(frame_type: str, raw: object, error: ShapeError) -> Emitted:
    """A known frame whose fields are not what the protocol says."""
    return problem(
        ProblemKind.BAD_SHAPE,
        f"Codex sent a {frame_type!r} frame corral could not read: {error}",
        **{RAW_FRAME: _bounded(raw)},
    )


# ---- plans ---------------------------------------------------------------------

_PLAN_STATUS = {
    "pending": PlanStatus.PENDING,
    "inProgress": PlanStatus.IN_PROGRESS,
    "in_progress": PlanStatus.IN_PROGRESS,
    "completed": PlanStatus.COMPLETED,
}


def message_end(
    streamed: set[str], item_id: str, text: str, delta: type[TextDelta] | type[ReasoningDelta]
) -> list[Emitted]:
    """A message or reasoning item completed: its whole text unless it streamed, then its end.

    `streamed` holds the ids that had deltas; the item's id leaves it.
    """
    ended = Emitted(kind=MessageEnded(item_id))
    if item_id in streamed:
        streamed.discard(item_id)
        return [ended]
    return [Emitted(kind=delta(message_id=item_id, text=text)), ended] if text else []


def user_text(content: Fields) -> str:
    """The text parts of a UserMessage item's `content`, joined."""
    text = _plain_user_text(content.raw.get("content"))
    return _checked_user_text(content) if text is None else text


def _plain_user_text(pieces: object) -> str | None:
    """`user_text` of well-formed parts, without the paths; None: read them checked."""
    if pieces is None:
        return ""
    if type(pieces) is not list:
        return None
    parts = []
    for piece in pieces:
        if type(piece) is not dict:
            return None
        kind = piece.get("type")
        if kind == "text" and type(text := piece.get("text")) is str:
            parts.append(text)
        elif kind == "text" or (kind is not None and type(kind) is not str):
            return None
    return "\n".join(parts)


def _checked_user_text(content: Fields) -> str:
    """`user_text` with each part's shape checked (a `ShapeError` says what is wrong)."""
    parts = []
    for path, raw in content.array("content", True):
        piece = Fields(raw, path)
        if piece.opt_string("type") == "text":
            parts.append(piece.string("text"))
    return "\n".join(parts)


def plan_updated(steps: list[tuple[str, str]]) -> PlanUpdated:
    """(step text, Codex status) pairs → PlanUpdated; unknown statuses read as pending."""
    return PlanUpdated(
        tuple(
            PlanEntry(text=text, status=_PLAN_STATUS.get(status, PlanStatus.PENDING))
            for text, status in steps
        )
    )


# ---- token usage ---------------------------------------------------------------


@attrs.frozen(kw_only=True)
class Tokens:
    input: int = 0  # including cached input, as Codex counts it
    cached: int = 0
    cache_write: int = 0
    output: int = 0
    reasoning: int = 0

    def __sub__(self, other: Tokens) -> Tokens:
        return Tokens(
            input=self.input - other.input,
            cached=self.cached - other.cached,
            cache_write=self.cache_write - other.cache_write,
            output=self.output - other.output,
            reasoning=self.reasoning - other.reasoning,
        )

    def __add__(self, other: Tokens) -> Tokens:
        return Tokens(
            input=self.input + other.input,
            cached=self.cached + other.cached,
            cache_write=self.cache_write + other.cache_write,
            output=self.output + other.output,
            reasoning=self.reasoning + other.reasoning,
        )

    @property
    def negative(self) -> bool:
        return min(self.input, self.cached, self.cache_write, self.output, self.reasoning) < 0

    def count(self) -> TokenCount:
        """Under corral's names (`corral/tokens`): `input` is the uncached input only."""
        return TokenCount(
            input=max(self.input - self.cached, 0),
            output=self.output,
            cache_read=self.cached,
            cache_write=self.cache_write,
            reasoning=self.reasoning,
        )


class UsageMeter:
    """Thread totals in, tokens of the current turn out.

    Each Codex update carries the thread's running total and the last
    request's usage. The increment is the change of the total; the first
    update seen counts its last request only (a resumed thread's total
    includes its whole history), or nothing when it comes outside a turn
    (Codex re-reporting the history on resume). Inside a turn increments add up,
    because the engine keeps only a turn's last usage; outside a turn each
    update is reported alone.
    """

    def __init__(self) -> None:
        self._previous_total: Tokens | None = None
        self._turn = Tokens()

    def update(self, *, total: Tokens, last: Tokens, in_turn: bool) -> Tokens:
        if self._previous_total is None:
            # A resumed thread first re-reports its history: that is no new spending.
            increment = last if in_turn else Tokens()
        else:
            change = total - self._previous_total
            increment = last if change.negative else change
        self._previous_total = total
        if not in_turn:
            return increment
        self._turn = self._turn + increment
        return self._turn

    def turn_ended(self) -> None:
        self._turn = Tokens()


def context_usage(*, used: int, window: int | None, tokens: Tokens, model: str | None) -> Emitted:
    return Emitted(
        kind=ContextUsage(used_tokens=max(used, 0), window_tokens=window),
        tokens=tokens.count(),
        model=model or None,
    )


# ---- rate limits ---------------------------------------------------------------

_WINDOW_LABELS = {300: "Session", 10080: "Week"}


@attrs.frozen(kw_only=True)
class LimitWindow:
    used_percent: float
    window_minutes: int | None = None
    resets_at: int | None = None  # unix seconds


@attrs.frozen(kw_only=True)
class Spelling:
    """One Codex wire's names for the fields of token counts and rate-limit windows."""

    input: str
    cached: str
    cache_write: str
    output: str
    reasoning: str
    used_percent: str
    window_minutes: str
    resets_at: str


# The app-server's notifications and `account/rateLimits/read`.
CAMEL = Spelling(
    input="inputTokens",
    cached="cachedInputTokens",
    cache_write="cacheWriteInputTokens",
    output="outputTokens",
    reasoning="reasoningOutputTokens",
    used_percent="usedPercent",
    window_minutes="windowDurationMins",
    resets_at="resetsAt",
)
# The core's EventMsg wire (live and in rollouts).
SNAKE = Spelling(
    input="input_tokens",
    cached="cached_input_tokens",
    cache_write="cache_write_input_tokens",
    output="output_tokens",
    reasoning="reasoning_output_tokens",
    used_percent="used_percent",
    window_minutes="window_minutes",
    resets_at="resets_at",
)


def tokens_of(fields: Fields, spelling: Spelling) -> Tokens:
    """A token-usage object's counts (0 where the wire leaves one out)."""
    return Tokens(
        input=fields.opt_integer(spelling.input) or 0,
        cached=fields.opt_integer(spelling.cached) or 0,
        cache_write=fields.opt_integer(spelling.cache_write) or 0,
        output=fields.opt_integer(spelling.output) or 0,
        reasoning=fields.opt_integer(spelling.reasoning) or 0,
    )


def _limit_window(fields: Fields | None, spelling: Spelling) -> LimitWindow | None:
    if fields is None:
        return None
    return LimitWindow(
        used_percent=fields.opt_number(spelling.used_percent) or 0.0,
        window_minutes=fields.opt_integer(spelling.window_minutes),
        resets_at=fields.opt_integer(spelling.resets_at),
    )


def limit_windows(
    limits: Fields, spelling: Spelling
) -> tuple[LimitWindow | None, LimitWindow | None]:
    """A rate-limit snapshot's primary and secondary windows (None where it has none)."""
    primary = _limit_window(limits.opt_obj("primary"), spelling)
    return primary, _limit_window(limits.opt_obj("secondary"), spelling)


def _window_label(minutes: int | None, fallback: str) -> str:
    if minutes is None:
        return fallback
    if minutes in _WINDOW_LABELS:
        return _WINDOW_LABELS[minutes]
    if minutes % 1440 == 0:
        return f"{minutes // 1440}d"
    if minutes % 60 == 0:
        return f"{minutes // 60}h"
    return f"{minutes}m"


def plan_usage(
    *, primary: LimitWindow | None, secondary: LimitWindow | None, plan: str | None, now_ns: int
) -> PlanUsage | None:
    """Codex's two rate-limit windows as PlanUsage; None when it reported neither."""
    windows = []
    for window, fallback in ((primary, "Primary"), (secondary, "Secondary")):
        if window is None:
            continue
        windows.append(
            UsageWindow(
                label=_window_label(window.window_minutes, fallback),
                used_percent=min(max(round(window.used_percent), 0), 255),
                resets_at=None if window.resets_at is None else SystemTime(window.resets_at, 0),
            )
        )
    if not windows:
        return None
    return PlanUsage(windows=tuple(windows), fetched_at=SystemTime.from_ns(now_ns), plan=plan)


# ---- file changes --------------------------------------------------------------


def _hunk_sides(unified_diff: str) -> tuple[str, str]:
    old: list[str] = []
    new: list[str] = []
    for line in unified_diff.split("\n"):
        if line.startswith(("--- ", "+++ ", "@@", "diff ", "index ", "\\ ")):
            continue
        if line.startswith("-"):
            old.append(line[1:])
        elif line.startswith("+"):
            new.append(line[1:])
        elif line.startswith(" "):
            old.append(line[1:])
            new.append(line[1:])
    return "\n".join(old), "\n".join(new)


def file_diff(path: str, change: str, text: str) -> FileDiff:
    """One changed file: `change` is add, delete or update; `text` the content or diff."""
    if change == "add":
        return FileDiff(path=path, old_text=None, new_text=text)
    if change == "delete":
        return FileDiff(path=path, old_text=text, new_text="")
    old, new = _hunk_sides(text)
    return FileDiff(path=path, old_text=old, new_text=new)
