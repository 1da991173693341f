"""corral's own `extensions` keys on events: written here, read here, nowhere else.

An event's `extensions` travel to the app as they are. Beside a source's
own keys (`<source>/...`), corral writes its own, from the typed fields a
driver fills (`Emitted`, `pipeline/driver.py`) and from the engine's
decisions:

- `corral/decode_error`: a line that was not the wire's (a `ProblemKind`);
- `corral/tokens`: the tokens a `ContextUsage` reports, by name
  (`TOKEN_NAMES`, ints, any subset), counted since the previous report;
- `corral/model`: the model that spent them;
- `corral/unknown_frame`: the type of a frame no translator knows;
- `corral/decision`: how a request was decided (`Decision.to_wire()`): on
  a `RequestOpened`, one corral decided itself and the app only sees; on
  every `RequestClosed`.

The engine writes them where it emits the event (`wire_extensions`,
`decision_mark`); the sinks (metrics, the transcript's totals, the demo)
read them back through the typed readers below, so no sink walks the
dictionary or knows a key.
"""

from __future__ import annotations

from collections.abc import Mapping

from .driver import Emitted
from .events import Event
from .tokens import TokenCount

__all__ = [
    "decision_mark",
    "marked_decision",
    "reported_model",
    "reported_tokens",
    "wire_extensions",
]

_DECODE_ERROR = "corral/decode_error"
_TOKENS = "corral/tokens"
_MODEL = "corral/model"
_UNKNOWN_FRAME = "corral/unknown_frame"
_DECISION = "corral/decision"


def wire_extensions(said: Emitted | None, extra: Mapping[str, object] | None) -> dict[str, object]:
    """An event's `extensions`: the driver's typed fields as `corral/*` keys, its own, the engine's.

    In this order: `corral/decode_error`, `corral/tokens`, `corral/model`,
    the source's own keys, the engine's marks, then `corral/unknown_frame`.
    """
    if said is None:
        return {} if extra is None else dict(extra)
    extensions: dict[str, object] = {}
    if said.problem is not None:
        extensions[_DECODE_ERROR] = said.problem.value
    if said.tokens is not None:
        extensions[_TOKENS] = said.tokens.counts()
    if said.model is not None:
        extensions[_MODEL] = said.model
    if said.extensions:
        extensions.update(said.extensions)
    if extra:
        extensions.update(extra)
    if said.unknown_frame is not None:
        extensions[_UNKNOWN_FRAME] = said.unknown_frame
    return extensions


def decision_mark(decision: Mapping[str, object]) -> dict[str, object]:
    """The mark on a request event saying how it was decided (`Decision.to_wire()`)."""
    return {_DECISION: decision}


def marked_decision(event: Event) -> Mapping[str, object] | None:
    """The decision a request event carries (`decision_mark`), else None.

    On a `RequestOpened` it means corral decided the request itself; on a
    `RequestClosed`, how the request ended, whoever decided it.
    """
    mark = event.extensions.get(_DECISION)
    return mark if isinstance(mark, Mapping) else None


def reported_tokens(event: Event) -> TokenCount | None:
    """The tokens an event reports (`ContextUsage`), or None when it says none."""
    counts = event.extensions.get(_TOKENS)
    return TokenCount.from_counts(counts) if isinstance(counts, Mapping) else None


def reported_model(event: Event) -> str | None:
    """The model an event names, or None."""
    model = event.extensions.get(_MODEL)
    return model if isinstance(model, str) and model else None
