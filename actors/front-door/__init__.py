"""corral: supervise coding agents from Python; this module is the front door.

    import asyncio
    from corral import Runtime, TextDelta

    async def main() -> None:
        async with Runtime() as rt, await rt.open("claude", dir=".") as session:
            async for event in session.turn("fix the failing test"):
                if isinstance(event.kind, TextDelta):
                    print(event.kind.text, end="")

    asyncio.run(main())

Everything the README's Python API shows is imported from here: the
`Runtime` and its `Session`s, their typed open options, the one-shot
`query`, the normalized event model (events, requests, answers), the error
family (`CorralError`, `ErrorKind`), and the stream operators (`only`,
`batches`; `Runtime.events()` merges every session). The names live in
`corral.actors` and below (ARCHITECTURE.md); this module only gathers them,
so it sits at the top of the import graph and nothing in the package
imports it.

Where it lives: the repository's top level shows the architecture
(`pipeline/`, `sources/`, `sinks/`, `actors/`), so this file sits in
`actors/front-door/`, which setup.py maps to the `corral` package itself.
The folder's name is not an identifier, so it is never also importable as
`corral.actors.<something>`: the file has one module name only.
"""

from corral.actors.handle import Session
from corral.actors.options import OpenOptions
from corral.actors.query import query
from corral.actors.runtime import Runtime, RuntimeSettings
from corral.actors.streams import batches, only
from corral.pipeline.commands import (
    AcpRef,
    AgentRef,
    AppServerRef,
    McpServer,
    PermissionMode,
    RollbackScope,
    SessionOptions,
)
from corral.pipeline.errors import CorralError, ErrorKind
from corral.pipeline.events import (
    AgentDetails,
    AgentOrigin,
    Answer,
    Cancelled,
    Choice,
    ChoicesAnswer,
    Completed,
    CompletionSource,
    ConfigValue,
    ContextCompacted,
    ContextUsage,
    Delivery,
    Diagnostic,
    DiscoveryReport,
    Event,
    EventKind,
    Failed,
    MessageEnded,
    PermissionAnswer,
    PermissionChoice,
    PermissionRequest,
    PlanEntry,
    PlanStatus,
    PlanUpdated,
    PlanUsage,
    PlanUsageUpdated,
    PromptOrigin,
    Question,
    QuestionAnswer,
    QuestionRequest,
    QuestionsAnswer,
    Queued,
    ReasoningDelta,
    Refused,
    Request,
    RequestClosed,
    RequestOpened,
    SessionInfo,
    SessionStatus,
    SessionUpdated,
    Started,
    StatusChanged,
    Steered,
    StopReason,
    TextAnswer,
    TextDelta,
    ToolKind,
    ToolOutputDelta,
    ToolStatus,
    ToolUpdate,
    ToolUpdated,
    TurnContext,
    TurnEnded,
    TurnOrigin,
    TurnStarted,
    UserMessage,
)
from corral.pipeline.rules import load_policy
from corral.sinks.metrics import Metrics
from corral.sinks.transcript import TranscriptSettings
from corral.sources.mock import MockScript, load_script

__all__ = [
    "AcpRef",
    "AgentDetails",
    "AgentOrigin",
    "AgentRef",
    "Answer",
    "AppServerRef",
    "Cancelled",
    "Choice",
    "ChoicesAnswer",
    "Completed",
    "CompletionSource",
    "ConfigValue",
    "ContextCompacted",
    "ContextUsage",
    "CorralError",
    "Delivery",
    "Diagnostic",
    "DiscoveryReport",
    "ErrorKind",
    "Event",
    "EventKind",
    "Failed",
    "McpServer",
    "MessageEnded",
    "Metrics",
    "MockScript",
    "OpenOptions",
    "PermissionAnswer",
    "PermissionChoice",
    "PermissionMode",
    "PermissionRequest",
    "PlanEntry",
    "PlanStatus",
    "PlanUpdated",
    "PlanUsage",
    "PlanUsageUpdated",
    "PromptOrigin",
    "Question",
    "QuestionAnswer",
    "QuestionRequest",
    "QuestionsAnswer",
    "Queued",
    "ReasoningDelta",
    "Refused",
    "Request",
    "RequestClosed",
    "RequestOpened",
    "RollbackScope",
    "Runtime",
    "RuntimeSettings",
    "Session",
    "SessionInfo",
    "SessionOptions",
    "SessionStatus",
    "SessionUpdated",
    "Started",
    "StatusChanged",
    "Steered",
    "StopReason",
    "TextAnswer",
    "TextDelta",
    "ToolKind",
    "ToolOutputDelta",
    "ToolStatus",
    "ToolUpdate",
    "ToolUpdated",
    "TranscriptSettings",
    "TurnContext",
    "TurnEnded",
    "TurnOrigin",
    "TurnStarted",
    "UserMessage",
    "batches",
    "load_policy",
    "load_script",
    "only",
    "query",
]
