"""The event model writes exactly the schema's JSON and reads it back."""

from __future__ import annotations

import typing

import pytest
from corral.pipeline.events import (
    AgentDetails,
    AgentInstallation,
    AgentOrigin,
    Authenticated,
    AuthKind,
    Cancelled,
    Capabilities,
    Capability,
    Choice,
    CommandInput,
    Completed,
    CompletionSource,
    ConfigChoice,
    ConfigOption,
    ContextCompacted,
    ContextUsage,
    Diagnostic,
    DiagnosticLevel,
    Event,
    EventKind,
    Failed,
    FileDiff,
    InstallationSource,
    Mcp,
    MessageEnded,
    NoInput,
    PathInput,
    PatternInput,
    PermissionChoice,
    PermissionRequest,
    PlanEntry,
    PlanStatus,
    PlanUpdated,
    PlanUsage,
    PlanUsageUpdated,
    PromptOrigin,
    QueryInput,
    Question,
    QuestionRequest,
    RawTool,
    ReasoningDelta,
    Refused,
    RequestClosed,
    RequestOpened,
    SessionInfo,
    SessionStatus,
    SessionUpdated,
    ShapeError,
    SlashCommand,
    StatusChanged,
    SystemTime,
    TextDelta,
    TextInput,
    ToolKind,
    ToolOutputDelta,
    ToolStatus,
    ToolUpdate,
    ToolUpdated,
    TurnContext,
    TurnEnded,
    TurnStarted,
    UrlInput,
    UsageWindow,
    UserMessage,
    kind_from_wire,
)

from tests.support.schema import check

TOOL = ToolUpdate(
    id="t1",
    kind=Mcp(server="github", tool="create_issue"),
    title="Create issue",
    status=ToolStatus.RUNNING,
    input=CommandInput(command="ls -la", cwd="/tmp"),
    output="line\u2028with separator",
    diffs=(FileDiff(path="a.py", old_text=None, new_text="print(1)\n"),),
    locations=("a.py:1",),
    raw=RawTool(name="mcp__github__create_issue", input={"title": "x"}),
)

SAMPLES: list[EventKind] = [
    TurnStarted(PromptOrigin("p1")),
    TurnStarted(AgentOrigin()),
    TextDelta(message_id="m1", text="héllo 👋"),
    ReasoningDelta(message_id="m2", text="thinking"),
    UserMessage(message_id="m3", text="from the parent agent"),
    MessageEnded("m1"),
    ToolUpdated(TOOL),
    *[
        ToolUpdated(ToolUpdate(id=f"i{n}", kind=kind, title="x", status=status, input=tool_input))
        for n, (kind, status, tool_input) in enumerate(
            [
                (ToolKind.READ, ToolStatus.PENDING, PathInput("/etc/hosts")),
                (ToolKind.SEARCH, ToolStatus.COMPLETED, PatternInput("*.py")),
                (ToolKind.FETCH, ToolStatus.FAILED, UrlInput("https://example.org")),
                (ToolKind.SEARCH, ToolStatus.CANCELLED, QueryInput("asyncio")),
                (ToolKind.SUBAGENT, ToolStatus.RUNNING, TextInput("review this")),
                (ToolKind.THINK, ToolStatus.COMPLETED, NoInput()),
            ]
        )
    ],
    ToolOutputDelta(tool_id="t1", text="out"),
    PlanUpdated((PlanEntry(text="read", status=PlanStatus.IN_PROGRESS),)),
    RequestOpened(
        PermissionRequest(
            id="r1",
            tool=TOOL,
            options=(PermissionChoice.ALLOW_ONCE, PermissionChoice.DENY_ALWAYS),
            detail="why",
        )
    ),
    RequestOpened(
        QuestionRequest(
            id="q1",
            questions=(
                Question(
                    id="a",
                    text="Pick",
                    header="H",
                    choices=(Choice(id="x", label="X", description="the x"),),
                    multi_select=True,
                    allows_free_text=True,
                ),
            ),
        )
    ),
    RequestClosed("r1"),
    SessionUpdated(
        SessionInfo(
            id="s1",
            agent=AgentInstallation(
                id="claude",
                name="Claude Code",
                executable_path="/usr/bin/claude",
                source=InstallationSource.PATH,
                acp_args=("--acp",),
            ),
            details=AgentDetails(
                version="2.1",
                auth=Authenticated(kind=AuthKind.API_KEY),
                capabilities=Capabilities(features=frozenset({Capability.RESUME})),
                config_options=(
                    ConfigOption(
                        id="model",
                        name="Model",
                        live=True,
                        choices=(ConfigChoice(value="a", label="A"),),
                        current="a",
                    ),
                    ConfigOption(id="fast", name="Fast", live=False, boolean=True, current=True),
                ),
                commands=(SlashCommand(name="compact", description="Compact"),),
            ),
            options=(("model", "a"), ("fast", True)),
            resume_token="tok",
            title="A title",
            status=SessionStatus.WORKING,
        )
    ),
    StatusChanged(SessionStatus.NEEDS_INPUT),
    ContextUsage(used_tokens=1200, window_tokens=200000, cost_usd=0.01),
    ContextCompacted(),
    PlanUsageUpdated(
        PlanUsage(
            plan="max",
            windows=(UsageWindow(label="Week", used_percent=40, resets_at=SystemTime(1, 2)),),
            fetched_at=SystemTime(10, 0),
        )
    ),
    Diagnostic(level=DiagnosticLevel.WARNING, message="careful"),
    TurnEnded(stop=Completed(CompletionSource.INFERRED), background=("t9",)),
    TurnEnded(stop=Failed("boom")),
    TurnEnded(stop=Cancelled()),
    TurnEnded(stop=Refused()),
]


def _kind_classes() -> set[type]:
    return set(typing.get_args(EventKind))


def test_the_samples_cover_every_event_kind() -> None:
    assert {type(sample) for sample in SAMPLES} == _kind_classes()


@pytest.mark.parametrize("kind", SAMPLES, ids=lambda k: type(k).__name__)
def test_every_kind_validates_against_the_schema_and_reads_back_equal(kind: EventKind) -> None:
    event = Event(
        sequence=7,
        session_id="s1",
        kind=kind,
        occurred_at=SystemTime(1_700_000_000, 5),
        turn_info=TurnContext(id="t1", parent_tool_id="tool0"),
        extensions={"claude/raw_frame": {"type": "x"}},
    )
    wire = event.to_wire()
    check("line-protocol.schema.json", "Event", wire)
    assert Event.from_wire(wire) == event


def test_unit_variants_are_bare_strings() -> None:
    assert ContextCompacted().to_wire() == "ContextCompacted"
    assert StatusChanged(SessionStatus.IDLE).to_wire() == {"StatusChanged": "Idle"}
    assert TurnEnded(stop=Cancelled()).to_wire() == {
        "TurnEnded": {"stop": "Cancelled", "background": []}
    }


def test_a_shape_error_names_the_exact_field() -> None:
    bad = {"ToolUpdated": {**TOOL.to_wire(), "input": {"Command": {"command": 5}}}}
    with pytest.raises(ShapeError) as raised:
        kind_from_wire(bad)
    assert raised.value.path == "kind.ToolUpdated.input.Command.command"
    assert "expected a string, got a number" in str(raised.value)


def test_an_unknown_kind_is_refused_by_name() -> None:
    with pytest.raises(ShapeError, match="unknown event kind 'Telepathy'"):
        kind_from_wire({"Telepathy": {}})


def test_a_boolean_is_never_read_as_an_integer() -> None:
    with pytest.raises(ShapeError, match="expected an integer, got a boolean"):
        kind_from_wire({"ContextUsage": {"used_tokens": True}})
