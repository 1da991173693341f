"""The contract between a source (one agent's wire) and the session engine.

Sources translate; the engine decides. A driver turns the agent's frames
into `DriverEvent`s (what the agent said, in corral's vocabulary) and
`DriverCommand`s (what the engine decided) into the agent's wire. The engine
owns turns, status, the prompt queue, requests and sequence numbers; a driver
never emits a `TurnStarted`, `StatusChanged`, `RequestClosed` or sequence.

Rules a driver keeps:
- every `StartTurn` is answered by `TurnBegan` once the wire confirms the
  turn (immediately, for wires with no confirmation), then eventually by
  `TurnFinished`; content the wire sends between the two belongs to it;
- every `SteerTurn` gets one `SteerVerdict`; every `Configure` one
  `ConfigApplied` or `ConfigRefused`; every `Rollback` one `RollbackVerdict`;
- `run` sends a read's worth of events as one batch (`send_batch`) and ends
  when the agent's output ends, after sending `AgentExited`;
- unknown frames become `Emitted(Diagnostic(Info), unknown_frame=<its type>)`
  with the raw frame in `extensions`, never silence; a line that is not the
  wire's becomes `Emitted(Diagnostic(Warning), problem=<its ProblemKind>)`.

What corral itself reads off an event travels in typed fields (`tokens`,
`model`, `problem`, `unknown_frame`); `extensions` holds only the source's
own keys (`<source>/...`: raw frames, the agent's extras), passed to the app
as they are. The engine writes the typed fields into the event's
`extensions` (`corral/tokens`, `corral/model`, `corral/decode_error`,
`corral/unknown_frame`) where it emits the event (`pipeline/extensions.py`,
also where the sinks read them back).
"""

from __future__ import annotations

import asyncio
import enum
from collections.abc import Mapping, Sequence
from typing import Protocol

import attrs

from .commands import McpServer, PermissionMode, RollbackScope
from .errors import ErrorKind
from .events import (
    AgentDetails,
    Answer,
    ConfigOption,
    ConfigValue,
    EventKind,
    Request,
    SlashCommand,
    StopReason,
    encode_kind,
)
from .tokens import TokenCount

__all__ = [
    "AgentExited",
    "AnswerSent",
    "Compact",
    "ConfigApplied",
    "ConfigRefused",
    "Configure",
    "Driver",
    "DriverCommand",
    "DriverEvent",
    "Emitted",
    "Handshake",
    "InfoChanged",
    "Interrupt",
    "LaunchSpec",
    "ProblemKind",
    "PromptSent",
    "ReplayItem",
    "RequestAsked",
    "RequestWithdrawn",
    "Respond",
    "Rollback",
    "RollbackVerdict",
    "SandboxSpec",
    "StartTurn",
    "SteerTurn",
    "SteerVerdict",
    "TokenCount",
    "TurnBegan",
    "TurnFinished",
    "WireFailed",
    "Withdraw",
]

# ---- what the engine asks of the agent --------------------------------------


@attrs.frozen(kw_only=True)
class StartTurn:
    turn_id: str
    prompt_id: str
    text: str
    attachments: tuple[str, ...] = ()


@attrs.frozen(kw_only=True)
class SteerTurn:
    """Add a prompt to the running turn (only for agents with `Steer`)."""

    turn_id: str
    prompt_id: str
    text: str
    attachments: tuple[str, ...] = ()


@attrs.frozen
class Interrupt:
    turn_id: str


@attrs.frozen(kw_only=True)
class Respond:
    """Answer an open request; `message` is read by the agent on a deny."""

    request_id: str
    answer: Answer
    message: str | None = None


@attrs.frozen
class Withdraw:
    """Tell the agent an open request will not be answered (cancelled)."""

    request_id: str


@attrs.frozen(kw_only=True)
class Configure:
    option: str
    value: ConfigValue


@attrs.frozen(kw_only=True)
class Rollback:
    turns: int
    scope: RollbackScope


@attrs.frozen
class Compact:
    pass


DriverCommand = (
    StartTurn | SteerTurn | Interrupt | Respond | Withdraw | Configure | Rollback | Compact
)

# ---- what the agent said ----------------------------------------------------


@attrs.frozen
class TurnBegan:
    """The wire confirmed a turn (ours, or one the agent started itself)."""


class ProblemKind(enum.StrEnum):
    """What is wrong with a line that is not a message of the wire (closed set).

    The same set labels `corral_decode_errors_total`; see `sources/_kit/problems.py`.
    """

    NOT_JSON = "not_json"  # not a JSON object (bad JSON, or a bare value)
    OVERSIZED = "oversized"  # longer than the cap, skipped unread
    BAD_SHAPE = "bad_shape"  # JSON that is not a message of the wire


@attrs.frozen(kw_only=True)
class Emitted:
    """Agent output in corral's vocabulary; the engine attributes it.

    `tokens` and `model` ride on a `ContextUsage`; `problem` (a line that is
    not the wire's) and `unknown_frame` (a frame of a type the source does
    not know, named) on a `Diagnostic`. `extensions`: the source's own keys.
    """

    kind: EventKind
    parent_tool_id: str | None = None
    tokens: TokenCount | None = None
    model: str | None = None
    problem: ProblemKind | None = None
    unknown_frame: str | None = None
    extensions: Mapping[str, object] = attrs.field(factory=dict)
    # The kind's JSON, made once if this event is measured (`pipeline/sizes.py`) and
    # handed on to the event the engine makes of it (`Event.json`).
    _kind_json: bytes | None = attrs.field(default=None, init=False, eq=False, repr=False)

    def kind_json(self) -> bytes:
        """`kind` as JSON bytes (`Event.json`'s part for it); encoded on first use."""
        encoded = self._kind_json
        if encoded is None:
            encoded = encode_kind(self.kind)
            object.__setattr__(self, "_kind_json", encoded)
        return encoded

    def encoded_kind(self) -> bytes | None:
        """The kind's JSON if already made, else None (never encodes)."""
        return self._kind_json


@attrs.frozen(kw_only=True)
class TurnFinished:
    stop: StopReason
    extensions: Mapping[str, object] = attrs.field(factory=dict)


@attrs.frozen(kw_only=True)
class RequestAsked:
    request: Request
    parent_tool_id: str | None = None
    extensions: Mapping[str, object] = attrs.field(factory=dict)


@attrs.frozen
class RequestWithdrawn:
    """The agent resolved or dropped a request on its own."""

    request_id: str


@attrs.frozen(kw_only=True)
class SteerVerdict:
    prompt_id: str
    accepted: bool
    reason: str | None = None


@attrs.frozen(kw_only=True)
class ConfigApplied:
    option: str
    value: ConfigValue


@attrs.frozen(kw_only=True)
class ConfigRefused:
    option: str
    reason: str


@attrs.frozen(kw_only=True)
class RollbackVerdict:
    accepted: bool
    reason: str | None = None


@attrs.frozen(kw_only=True)
class InfoChanged:
    """Session facts the wire revealed; None means unchanged."""

    resume_token: str | None = None
    title: str | None = None
    config_options: tuple[ConfigOption, ...] | None = None
    commands: tuple[SlashCommand, ...] | None = None


@attrs.frozen(kw_only=True)
class AgentExited:
    """The agent's output ended; `status` as the OS reported it."""

    status: str
    stderr: str = ""


@attrs.frozen(kw_only=True)
class WireFailed:
    """The wire cannot go on (auth lost, protocol broken): the session ends.

    `kind` is the error the app sees (AuthRequired, ProtocolFailed...): an
    `ErrorKind`, so a misspelt kind is a type error, not an engine crash.
    """

    kind: ErrorKind = attrs.field(validator=attrs.validators.instance_of(ErrorKind))
    message: str


DriverEvent = (
    TurnBegan
    | Emitted
    | TurnFinished
    | RequestAsked
    | RequestWithdrawn
    | SteerVerdict
    | ConfigApplied
    | ConfigRefused
    | RollbackVerdict
    | InfoChanged
    | AgentExited
    | WireFailed
)

# ---- replay -------------------------------------------------------------------


@attrs.frozen(kw_only=True)
class PromptSent:
    """Replay only: a prompt of the user's, as an agent's own transcript recorded it.

    Readers of native transcripts (`sources/<agent>/`) yield `PromptSent`
    and `DriverEvent`s in file order; the replay runs them through a real
    engine (`prompt` for each `PromptSent`), so imported sessions get the
    same turns, status and sequence rules as live ones.
    """

    text: str
    at_ns: int | None = None  # when, if the transcript says


@attrs.frozen(kw_only=True)
class AnswerSent:
    """Replay only: the app's answer to a request, as corral's wire recording shows it.

    The replay gives it to the engine (`answer`), so an imported request
    closes where and as the live one did (decided by the app).
    """

    request_id: str
    answer: Answer


ReplayItem = PromptSent | AnswerSent | DriverEvent

# ---- launching --------------------------------------------------------------


@attrs.frozen(kw_only=True)
class SandboxSpec:
    """corral's OS sandbox (bubblewrap) for one session, and what runs inside it."""

    bwrap: str  # the bubblewrap executable that passed the Runtime's probe
    commands: bool = True  # commands corral runs for the agent (ACP terminals)
    agent: bool = False  # the agent process itself (`open`'s `sandbox: true`)


@attrs.frozen(kw_only=True)
class LaunchSpec:
    """Everything a source needs to start one session of its agent."""

    session_id: str
    executable: str
    dir: str
    resume: str | None = None
    fork: str | None = None
    fork_at: str | None = None
    permission_mode: PermissionMode = PermissionMode.ASK
    mcp_servers: tuple[McpServer, ...] = ()
    configure: tuple[tuple[str, ConfigValue], ...] = ()
    env: tuple[tuple[str, str], ...] = ()
    args: tuple[str, ...] = ()
    # False: start the agent with no tools, where its wire can (a source that
    # can says so with `CatalogEntry.disables_tools`); `generate` asks for it.
    tools: bool = True
    sandbox: SandboxSpec | None = None  # None: nothing of this session is sandboxed


@attrs.frozen(kw_only=True)
class Handshake:
    """What a started driver knows about its session."""

    details: AgentDetails
    resume_token: str | None = None
    title: str | None = None
    options: tuple[tuple[str, ConfigValue], ...] = ()
    # False for wires that never say when a turn ended: the engine infers it.
    reliable_turn_end: bool = True


class EventSink(Protocol):
    async def send(self, item: DriverEvent) -> None: ...

    async def send_batch(self, batch: Sequence[DriverEvent]) -> None: ...


class Driver(Protocol):
    """One running agent session, as the engine's actor drives it."""

    async def start(self, tasks: asyncio.TaskGroup) -> Handshake:
        """Launch the agent and complete the handshake; raise CorralError.

        Helper tasks (stdout and stderr readers) go into `tasks`, the
        session's own task group, so they never outlive the session."""

    async def run(self, events_out: EventSink) -> None:
        """Read the wire until it ends, sending DriverEvents; ends with AgentExited."""

    async def send(self, command: DriverCommand) -> None:
        """Encode one engine decision onto the wire."""

    async def stop(self, grace: float) -> None:
        """End the agent: EOF, then SIGTERM, then SIGKILL, within `grace` seconds."""
