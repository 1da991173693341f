"""The mock agent's script: what a scripted session says and can do.

Format (JSON, every field optional):

    {"turns": [[step, ...], ...],       # turn i answers the i-th prompt
     "steer": false, "steer_rejects": false, "compact": false,
     "permissions": true, "resume": false, "rollback": false | true | "refuse",
     "options": [ConfigOption, ...], "deterministic": true,
     "ignore_cancel": false, "ignore_close": false, "on_open": [step, ...]}

Steps: `{"Emit": EventKind}` (as in the line-protocol schema; an emitted
`RequestOpened` is the agent asking), `"AwaitAnswer"` (pause until the
pending request is answered), `{"End": StopReason}`, `"Die"` (exit status
"9", stderr "mock died"), `{"Sleep": ms}`, `{"Repeat": {"times": N,
"steps": [...]}}`, `{"Usage": {"used_tokens": N, ...}}`.

With `"process": true` the mock runs as a child process speaking JSON lines
over real pipes (see `_wire.py`), and four more steps misbehave on purpose:
`{"Raw": "text"}` (written to stdout as is, no newline added),
`{"RawBytes": "base64"}` (any bytes, e.g. invalid UTF-8), `{"Flood": N}`
(one line of N bytes), `{"Stderr": "text"}` and `{"Exit": code}`; and
`"ignore_close": true` makes the child ignore EOF on stdin and SIGTERM (a
stuck agent that only SIGKILL stops). `"ignore_cancel": true` (either mode)
stops playing an interrupted turn but never confirms it (no turn end).
`"on_open"` (in-process mode) is played as soon as the session runs,
before any command: content the agent sends unprompted, so an agent turn
(end it with an `End` step).

For latency measurements, `{"Paced": {"per_second": R, "count": N}}` emits
N text deltas at R per second (0: as fast as possible) whose text is the
`time.monotonic_ns()` at which each was written.

A prompt beyond the scripted turns gets an echo turn. With `deterministic`
false the mock never ends a turn: the engine infers the end.
"""

from __future__ import annotations

import base64
import binascii
from pathlib import Path
from typing import Any

import attrs
import orjson

from ...pipeline.events import (
    ConfigOption,
    ContextUsage,
    EventKind,
    Fields,
    RequestOpened,
    SessionUpdated,
    ShapeError,
    StatusChanged,
    StopReason,
    TurnEnded,
    TurnStarted,
    kind_from_wire,
    stop_from_wire,
    tag_of,
)
from ...pipeline.tokens import TOKEN_NAMES, TokenCount

__all__ = [
    "AwaitAnswer",
    "Die",
    "Emit",
    "End",
    "Exit",
    "Flood",
    "MockScript",
    "Raw",
    "Repeat",
    "Sleep",
    "Stderr",
    "Step",
    "load_script",
    "parse_script",
]

_ENGINE_KINDS = (TurnStarted, TurnEnded, StatusChanged, SessionUpdated)


@attrs.frozen
class Emit:
    kind: EventKind
    extensions: dict[str, Any] = attrs.field(factory=dict, eq=False)
    tokens: TokenCount | None = attrs.field(default=None, eq=False)
    model: str | None = attrs.field(default=None, eq=False)


@attrs.frozen
class AwaitAnswer:
    pass


@attrs.frozen
class End:
    stop: StopReason


@attrs.frozen
class Die:
    pass


@attrs.frozen
class Sleep:
    seconds: float


@attrs.frozen
class Repeat:
    times: int
    steps: tuple[Step, ...]


@attrs.frozen
class Raw:
    """Process mode only: bytes written to stdout exactly as given."""

    data: bytes


@attrs.frozen
class Flood:
    """Process mode only: one stdout line of `size` bytes."""

    size: int


@attrs.frozen
class Paced:
    per_second: float
    count: int


@attrs.frozen
class Stderr:
    text: str


@attrs.frozen
class Exit:
    code: int


Step = Emit | AwaitAnswer | End | Die | Sleep | Repeat | Raw | Flood | Stderr | Exit | Paced
_PROCESS_ONLY = (Raw, Flood, Stderr, Exit)


@attrs.frozen(kw_only=True)
class MockScript:
    turns: tuple[tuple[Step, ...], ...] = ()
    steer: bool = False
    steer_rejects: bool = False
    compact: bool = False
    permissions: bool = True
    resume: bool = False
    rollback: bool | str = False
    options: tuple[ConfigOption, ...] = ()
    deterministic: bool = True
    ignore_cancel: bool = False
    ignore_close: bool = False  # process mode: the child ignores EOF and SIGTERM
    on_open: tuple[Step, ...] = ()  # played unprompted as the session starts
    process: bool = False
    # The script as written, for the child process of process mode.
    source: dict[str, Any] = attrs.field(factory=dict, eq=False, repr=False)


def _step(raw: object, path: str) -> Step:
    tag, payload = tag_of(raw, path, frozenset({"AwaitAnswer", "Die"}))
    if tag == "AwaitAnswer":
        return AwaitAnswer()
    if tag == "Die":
        return Die()
    holder = Fields({tag: payload}, path)
    if tag == "Emit":
        kind = kind_from_wire(payload, f"{path}.Emit")
        if isinstance(kind, _ENGINE_KINDS):
            name = type(kind).__name__
            raise ShapeError(f"{path}.Emit", f"{name} belongs to the engine; use turns and End")
        return Emit(kind)
    if tag == "End":
        return End(stop_from_wire(payload, f"{path}.End"))
    if tag == "Sleep":
        return Sleep(holder.integer("Sleep") / 1000)
    if tag == "Usage":
        usage = Fields(payload, f"{path}.Usage")
        tokens = None
        if usage.has("tokens"):
            counts = usage.obj("tokens")
            unknown = sorted(set(counts.raw) - set(TOKEN_NAMES))
            if unknown:
                raise ShapeError(f"{path}.Usage.tokens", f"no token kind {unknown[0]!r}")
            tokens = TokenCount.from_counts({name: counts.integer(name) for name in counts.raw})
        return Emit(
            ContextUsage(
                used_tokens=usage.integer("used_tokens"),
                window_tokens=usage.opt_integer("window_tokens"),
                cost_usd=usage.opt_number("cost_usd"),
            ),
            tokens=tokens,
            model=usage.string("model") if usage.has("model") else None,
        )
    if tag == "Raw":
        return Raw(holder.string("Raw").encode("utf-8"))
    if tag == "RawBytes":
        try:
            return Raw(base64.b64decode(holder.string("RawBytes"), validate=True))
        except binascii.Error:
            raise ShapeError(f"{path}.RawBytes", "not valid base64") from None
    if tag == "Flood":
        return Flood(holder.integer("Flood"))
    if tag == "Stderr":
        return Stderr(holder.string("Stderr"))
    if tag == "Exit":
        return Exit(holder.integer("Exit"))
    if tag == "Paced":
        body = Fields(payload, f"{path}.Paced")
        rate = body.opt_number("per_second") or 0.0
        return Paced(per_second=rate, count=body.integer("count"))
    if tag == "Repeat":
        body = Fields(payload, f"{path}.Repeat")
        return Repeat(
            times=body.integer("times"),
            steps=tuple(_step(item, p) for p, item in body.array("steps")),
        )
    raise ShapeError(path, f"unknown step {tag!r}")


def parse_script(raw: object) -> MockScript:
    fields = Fields(raw, "script")
    turns = []
    for turn_path, turn in fields.array("turns", True):
        if not isinstance(turn, list):
            raise ShapeError(turn_path, "a turn is an array of steps")
        turns.append(tuple(_step(step, f"{turn_path}[{i}]") for i, step in enumerate(turn)))
    process = fields.flag("process", False)
    if not process:
        for index, turn in enumerate(turns):
            for step_index, step in enumerate(_flatten(turn)):
                if isinstance(step, _PROCESS_ONLY):
                    raise ShapeError(
                        f"script.turns[{index}]",
                        f'{type(step).__name__} steps need "process": true (step {step_index})',
                    )
    on_open = tuple(_step(step, path) for path, step in fields.array("on_open", True))
    if on_open and process:
        fields.fail("on_open", 'is played in-process only, not with "process": true')
    rollback = fields.raw.get("rollback", False)
    if rollback not in (True, False, "refuse"):
        fields.fail("rollback", 'expected true, false or "refuse"')
    return MockScript(
        turns=tuple(turns),
        steer=fields.flag("steer", False),
        steer_rejects=fields.flag("steer_rejects", False),
        compact=fields.flag("compact", False),
        permissions=fields.flag("permissions", True),
        resume=fields.flag("resume", False),
        rollback=rollback,
        options=tuple(ConfigOption.from_wire(o, p) for p, o in fields.array("options", True)),
        deterministic=fields.flag("deterministic", True),
        ignore_cancel=fields.flag("ignore_cancel", False),
        ignore_close=fields.flag("ignore_close", False),
        on_open=on_open,
        process=process,
        source=dict(fields.raw),
    )


def _flatten(steps: tuple[Step, ...]) -> list[Step]:
    flat: list[Step] = []
    for step in steps:
        flat.extend(_flatten(step.steps) if isinstance(step, Repeat) else [step])
    return flat


def load_script(path: str | Path) -> MockScript:
    """Read and check a script file; ShapeError or OSError say what is wrong."""
    text = Path(path).read_bytes()
    try:
        raw = orjson.loads(text)
    except orjson.JSONDecodeError as error:
        raise ShapeError(str(path), f"not JSON: {error}") from None
    return parse_script(raw)


def requests_in(steps: tuple[Step, ...]) -> bool:
    return any(
        (isinstance(s, Emit) and isinstance(s.kind, RequestOpened))
        or (isinstance(s, Repeat) and requests_in(s.steps))
        for s in steps
    )
