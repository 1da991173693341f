"""A turn's `result` frame: how it ended, and what the context now holds.

What flows in: one `result` frame and the content normalizer's view of the
last model message. What flows out: the `ContextUsage` to ride on the
turn's end, the `StopReason`, and the extensions for `TurnEnded`.

- The truth of success is `is_error`, never `subtype` (the CLI writes
  `subtype: "success"` after an API error). An error after our interrupt is
  `Cancelled`; a `stop_reason` of `refusal` is `Refused`; any other error is
  `Failed` with the CLI's `errors`, else its `result` text.
- `ContextUsage.used_tokens` is what the context holds: the last main-thread
  model message's input (fresh, cache read, cache written) plus its output.
  The window comes from `modelUsage[model].contextWindow`; the cost is the
  CLI's running `total_cost_usd`. The turn's token totals go under
  `corral/tokens`, the model under `corral/model`.
- An assistant frame with `error: "authentication_failed"` means the CLI
  has no usable login: the wire cannot go on (`WireFailed(AuthRequired)`).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ...pipeline.driver import DriverEvent, Emitted, TokenCount, WireFailed
from ...pipeline.errors import ErrorKind
from ...pipeline.events import Cancelled, Completed, ContextUsage, Failed, Refused, StopReason
from ._content import Content, user_text
from ._json import field_obj

__all__ = ["auth_failure", "result_events"]

_AUTH_ERRORS = frozenset({"authentication_failed", "oauth_org_not_allowed"})


def _int(usage: Mapping[str, Any], key: str) -> int:
    value = usage.get(key)
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


def _occupancy(usage: Mapping[str, Any]) -> int:
    return sum(
        _int(usage, key)
        for key in (
            "input_tokens",
            "cache_read_input_tokens",
            "cache_creation_input_tokens",
            "output_tokens",
        )
    )


def _tokens(usage: Mapping[str, Any]) -> dict[str, int]:
    details = usage.get("output_tokens_details")
    names = {
        "input": "input_tokens",
        "output": "output_tokens",
        "cache_read": "cache_read_input_tokens",
        "cache_write": "cache_creation_input_tokens",
    }
    tokens = {name: _int(usage, key) for name, key in names.items() if key in usage}
    if isinstance(details, dict) and "thinking_tokens" in details:
        tokens["reasoning"] = _int(details, "thinking_tokens")
    return tokens


def _model_and_window(frame: Mapping[str, Any], content: Content) -> tuple[str | None, int | None]:
    by_model = field_obj(frame, "modelUsage")
    model = content.model
    if model not in by_model and len(by_model) == 1:
        model = next(iter(by_model))
    stats = by_model.get(model) if model is not None else None
    window = stats.get("contextWindow") if isinstance(stats, dict) else None
    return model, window if isinstance(window, int) and window > 0 else None


def _usage(frame: Mapping[str, Any], content: Content) -> list[DriverEvent]:
    turn_usage = frame.get("usage") if isinstance(frame.get("usage"), dict) else None
    last = content.usage
    if last is None and turn_usage is None:
        return []
    used = _occupancy(last if last is not None else turn_usage or {})
    model, window = _model_and_window(frame, content)
    cost = frame.get("total_cost_usd")
    if isinstance(cost, bool) or not isinstance(cost, int | float):
        cost = None
    tokens = None if turn_usage is None else TokenCount.from_counts(_tokens(turn_usage))
    kind = ContextUsage(
        used_tokens=used,
        window_tokens=window,
        cost_usd=float(cost)
        if isinstance(cost, int | float) and not isinstance(cost, bool)
        else None,
    )
    return [Emitted(kind=kind, tokens=tokens, model=model)]


def _stop(frame: Mapping[str, Any], interrupted: bool) -> StopReason:
    if frame.get("is_error") is not True:
        return Refused() if frame.get("stop_reason") == "refusal" else Completed()
    if interrupted:
        return Cancelled()
    errors = [str(e) for e in frame.get("errors") or [] if e]
    text = frame.get("result")
    message = "; ".join(errors) or (text if isinstance(text, str) and text else "")
    return Failed(message or f"Claude Code ended the turn with {frame.get('subtype', 'an error')}")


_SUMMARY_KEYS = ("subtype", "stop_reason", "terminal_reason", "num_turns", "duration_ms")


def result_events(
    frame: Mapping[str, Any], content: Content, interrupted: bool
) -> tuple[list[DriverEvent], StopReason, dict[str, Any]]:
    summary = {key: frame[key] for key in _SUMMARY_KEYS if key in frame}
    return _usage(frame, content), _stop(frame, interrupted), {"claude/result": summary}


def auth_failure(frame: Mapping[str, Any]) -> WireFailed | None:
    error = frame.get("error")
    if not isinstance(error, str) or error not in _AUTH_ERRORS:
        return None
    message = frame.get("message")
    text = user_text(message.get("content")) if isinstance(message, dict) else None
    return WireFailed(
        kind=ErrorKind.AUTH_REQUIRED,
        message=f"Claude Code is not logged in: {text or error}",
    )
