"""Every type of the line protocol reads back exactly what it writes.

For each wire type X: `X.from_wire(x.to_wire()) == x`, and for the JSON
corral (or a canonical app) writes, `to_wire(from_wire(j)) == j`; every
sample is first checked against the project's copy of the schema. Lines
are compared as bytes: the `*_line` encoders corral uses write exactly
`to_wire` of the matching `Line` variant. Bad input raises `ShapeError`
naming the field.
"""

from __future__ import annotations

import typing
from typing import Any

import orjson
import pytest
from corral.pipeline.commands import (
    AcpRef,
    AnswerCmd,
    AppServerRef,
    CancelCmd,
    Command,
    Frame,
    McpServer,
    OpenCmd,
    PermissionMode,
    ProbeCmd,
    SessionOptions,
    command_to_wire,
)
from corral.pipeline.errors import CorralError, ErrorBody, ErrorKind
from corral.pipeline.events import (
    AccountInfo,
    AgentDetails,
    AgentInstallation,
    Authenticated,
    AuthKind,
    Capabilities,
    Capability,
    ConfigChoice,
    ConfigOption,
    Delivery,
    DiagnosticLevel,
    DiagnosticNote,
    DiscoveryReport,
    EnvVarLogin,
    Event,
    InstallationSource,
    McpTransport,
    MissingAgent,
    OtherAuth,
    PermissionAnswer,
    PermissionChoice,
    Queued,
    SessionInfo,
    SessionStatus,
    ShapeError,
    SlashCommand,
    Started,
    Steered,
    SystemTime,
    TerminalLogin,
    TextDelta,
    TurnContext,
    Unauthenticated,
    UnknownAuth,
)
from corral.pipeline.wire import (
    ClosedLine,
    ErrorReply,
    EventLine,
    Hello,
    Line,
    OkReply,
    SessionErrorLine,
    closed_line,
    error_line,
    event_line,
    hello_line,
    line_from_wire,
    ok_line,
    parse_frame,
    read_line,
    session_error_line,
)

from tests.support.schema import check, check_line

SCHEMA = "line-protocol.schema.json"

UPGRADE = MissingAgent(
    id="agy-acp",
    name="Antigravity ACP",
    searched=("/usr/bin", "~/.local/bin"),
    install_hint="npm i",
)
INSTALLATION = AgentInstallation(
    id="claude",
    name="Claude Code",
    executable_path="/usr/bin/claude",
    source=InstallationSource.VERSION_MANAGER,
    upgrade=UPGRADE,
    acp_args=("--acp",),
)
DETAILS = AgentDetails(
    version="2.1.0",
    auth=Authenticated(kind=OtherAuth("Bedrock"), account=AccountInfo(email="a@b.c")),
    capabilities=Capabilities(
        features=frozenset({Capability.STEER, Capability.RESUME}),
        mcp_transports=(McpTransport.STDIO, McpTransport.HTTP),
    ),
    config_options=(
        ConfigOption(
            id="model",
            name="Model",
            live=True,
            choices=(ConfigChoice(value="opus", label="Opus", description="big"),),
            category="model",
            current="opus",
        ),
        ConfigOption(id="fast", name="Fast", live=False, boolean=True, current=False),
    ),
    commands=(SlashCommand(name="review", description="Review", input_hint="a path"),),
)
SESSION_INFO = SessionInfo(
    id="s1",
    agent=INSTALLATION,
    details=DETAILS,
    options=(("model", "opus"), ("fast", False)),
    resume_token="tok",
    title="Fix the bug",
    status=SessionStatus.NEEDS_INPUT,
)
REPORT = DiscoveryReport(
    agents=(
        INSTALLATION,
        AgentInstallation(
            id="mock", name="Mock", executable_path="-", source=InstallationSource.PINNED
        ),
    ),
    missing=(UPGRADE,),
    diagnostics=(DiagnosticNote(level=DiagnosticLevel.WARNING, message="PATH unreadable"),),
)
LOGGED_OUT = AgentDetails(
    auth=Unauthenticated(
        login=(
            TerminalLogin(command=("claude", "login"), description="Log in", env=(("A", "1"),)),
            EnvVarLogin(name="ANTHROPIC_API_KEY"),
        )
    )
)

# (schema definition, value): every reply value and the error body.
VALUES: list[tuple[str, Any]] = [
    ("SessionInfo", SESSION_INFO),
    ("SessionInfo", SessionInfo(id="s2", agent=INSTALLATION, details=AgentDetails())),
    ("AgentDetails", DETAILS),
    ("AgentDetails", LOGGED_OUT),
    ("AgentDetails", AgentDetails(auth=Authenticated(kind=AuthKind.SUBSCRIPTION))),
    ("AgentDetails", AgentDetails(auth=UnknownAuth())),
    ("DiscoveryReport", REPORT),
    ("DiscoveryReport", DiscoveryReport()),
    ("Delivery", Delivery(prompt_id="p1", kind=Started("t1"))),
    ("Delivery", Delivery(prompt_id="p2", kind=Steered("t1"))),
    ("Delivery", Delivery(prompt_id="p3", kind=Queued(2))),
    ("ErrorBody", ErrorBody(kind=ErrorKind.SESSION_BUSY, message="busy")),
    (
        "ErrorBody",
        ErrorBody(
            kind=ErrorKind.PROCESS_EXITED,
            message="exited",
            extra={"status": "9", "stderr": "mock died", "searched": ["/bin"]},
        ),
    ),
]


@pytest.mark.parametrize(
    ("definition", "value"), VALUES, ids=lambda v: getattr(v, "__name__", None)
)
def test_a_value_validates_and_reads_back_equal(definition: str, value: Any) -> None:
    wire = value.to_wire()
    check(SCHEMA, definition, wire)
    again = type(value).from_wire(orjson.loads(orjson.dumps(wire)), "value")
    assert again == value
    assert again.to_wire() == wire


def test_the_values_cover_every_reply_type_and_variant() -> None:
    types = {type(value) for _, value in VALUES}
    assert types == {SessionInfo, AgentDetails, DiscoveryReport, Delivery, ErrorBody}
    assert {type(v.kind) for _, v in VALUES if isinstance(v, Delivery)} == {
        Started,
        Steered,
        Queued,
    }


def test_an_error_body_is_what_corral_error_writes() -> None:
    error = CorralError(ErrorKind.NOT_INSTALLED, "no claude", searched=["/usr/bin"])
    body = ErrorBody.from_wire(error.body())
    assert body == error.error_body()
    assert CorralError.from_error_body(body).body() == error.body()


def test_a_missing_status_reads_as_idle() -> None:
    wire = SESSION_INFO.to_wire()
    del wire["status"]
    check(SCHEMA, "SessionInfo", wire)
    assert SessionInfo.from_wire(wire, "info").status is SessionStatus.IDLE


# ---- frames -------------------------------------------------------------------------------

MCP_STDIO = {
    "name": "fs",
    "connection": {"Stdio": {"command": "mcp", "args": ["-v"], "env": {"K": "v"}}},
}
MCP_HTTP = {"name": "web", "connection": {"Http": {"url": "http://x", "headers": {"H": "1"}}}}
MCP_SSE = {"name": "sse", "connection": {"Sse": {"url": "http://y", "headers": {}}}}

# Canonical frames (optional fields at their default left out), one or more per command.
FRAMES: list[dict[str, Any]] = [
    {"id": 0, "cmd": "discover"},
    {"id": 1, "cmd": "probe", "agent": "claude"},
    {"id": 2, "cmd": "plan_usage", "agent": {"acp": {"name": "a", "path": "/a", "args": ["--x"]}}},
    {"id": 3, "cmd": "open", "agent": "mock", "dir": "/w"},
    {
        "id": 4,
        "cmd": "open",
        "agent": {"acp": {"name": "a", "path": "/a"}},
        "dir": "/w",
        "resume": "tok",
        "fork": "f",
        "fork_at": "m3",
        "permission_mode": "AutoApprove",
        "mcp_servers": [MCP_STDIO, MCP_HTTP, MCP_SSE],
        "configure": {"model": "opus", "fast": True, "plan": False},
    },
    {"id": 5, "cmd": "generate", "agent": "mock", "dir": "/w", "prompt": ""},
    {"id": 6, "cmd": "prompt", "session": "s1", "text": "hi"},
    {"id": 7, "cmd": "prompt", "session": "s1", "text": "hi", "attachments": ["a.png"]},
    {"id": 8, "cmd": "dequeue", "session": "s1", "prompt": "p2"},
    {
        "id": 9,
        "cmd": "answer",
        "session": "s1",
        "request": "r1",
        "answer": {"Permission": "DenyAlways"},
    },
    {
        "id": 10,
        "cmd": "answer",
        "session": "s1",
        "request": "q1",
        "answer": {"Question": [{"Choices": ["a", "b"]}, {"Text": "free"}]},
    },
    {"id": 11, "cmd": "configure", "session": "s1", "option": "fast", "value": False},
    {"id": 12, "cmd": "configure", "session": "s1", "option": "model", "value": "opus"},
    {"id": 13, "cmd": "rollback", "session": "s1", "turns": 2, "scope": "ConversationAndFiles"},
    {"id": 14, "cmd": "compact", "session": "s1"},
    {"id": 15, "cmd": "cancel", "session": "s1"},
    {"id": 16, "cmd": "cancel", "session": "s1", "clear_queue": True},
    {"id": 17, "cmd": "info", "session": "s1"},
    {"id": 18, "cmd": "close", "session": "s1"},
]


@pytest.mark.parametrize("wire", FRAMES, ids=lambda f: f"{f['id']}-{f['cmd']}")
def test_a_canonical_frame_reads_and_writes_back_exactly(wire: dict[str, Any]) -> None:
    check(SCHEMA, "Frame", wire)
    frame = Frame.from_wire(wire)
    assert frame.to_wire() == wire
    assert Frame.from_wire(frame.to_wire()) == frame
    assert parse_frame(orjson.dumps(frame.to_wire())) == (frame.id, frame.command)


def test_the_frames_cover_every_command() -> None:
    commands = {type(Frame.from_wire(wire).command) for wire in FRAMES}
    assert commands == set(typing.get_args(Command))


@pytest.mark.parametrize(
    ("explicit", "canonical"),
    [
        (
            {
                "id": 1,
                "cmd": "open",
                "agent": "mock",
                "dir": ".",
                "resume": None,
                "fork": None,
                "permission_mode": None,
                "mcp_servers": [],
                "configure": {},
            },
            {"id": 1, "cmd": "open", "agent": "mock", "dir": "."},
        ),
        (
            {
                "id": 2,
                "cmd": "open",
                "agent": {"acp": {"name": "a", "path": "/a", "args": []}},
                "dir": ".",
            },
            {"id": 2, "cmd": "open", "agent": {"acp": {"name": "a", "path": "/a"}}, "dir": "."},
        ),
        (
            {"id": 3, "cmd": "prompt", "session": "s", "text": "t", "attachments": []},
            {"id": 3, "cmd": "prompt", "session": "s", "text": "t"},
        ),
        (
            {"id": 4, "cmd": "cancel", "session": "s", "clear_queue": False},
            {"id": 4, "cmd": "cancel", "session": "s"},
        ),
    ],
)
def test_a_default_written_out_reads_as_the_canonical_frame(
    explicit: dict[str, Any], canonical: dict[str, Any]
) -> None:
    check(SCHEMA, "Frame", explicit)
    assert Frame.from_wire(explicit).to_wire() == canonical


def test_options_outside_the_schema_write_back_too() -> None:
    options = SessionOptions(
        agent=AppServerRef(name="codex", path="/bin/codex", args=("app-server",)),
        dir="/w",
        permission_mode=PermissionMode.ACCEPT_EDITS,
        mcp_servers=(McpServer(name="fs", transport="Stdio", command="mcp"),),
        env=(("FOO", "1"),),
        args=("--verbose",),
        policy="/p.toml",
        show_auto_decisions=True,
    )
    frame = Frame(7, OpenCmd(options))
    assert Frame.from_wire(orjson.loads(orjson.dumps(frame.to_wire()))) == frame


def test_a_command_encodes_without_an_id() -> None:
    command = AnswerCmd(
        session="s", request="r", answer=PermissionAnswer(PermissionChoice.ALLOW_ONCE)
    )
    assert command_to_wire(command) == {
        "cmd": "answer",
        "session": "s",
        "request": "r",
        "answer": {"Permission": "AllowOnce"},
    }
    assert command_to_wire(CancelCmd(session="s", clear_queue=True))["clear_queue"] is True
    probe = Frame.from_wire(
        {"id": 1, "cmd": "probe", "agent": {"acp": {"name": "a", "path": "/a"}}}
    )
    assert probe.command == ProbeCmd(AcpRef(name="a", path="/a"))


# ---- lines --------------------------------------------------------------------------------

EVENT = Event(
    sequence=3,
    session_id="s1",
    kind=TextDelta(message_id="m1", text="hé\u2028llo"),
    occurred_at=SystemTime(1_700_000_000, 42),
    turn_info=TurnContext(id="t1"),
    extensions={"mock/step": 2},
)
BUSY = CorralError(ErrorKind.SESSION_BUSY, "a turn is running")
DIED = CorralError(ErrorKind.PROCESS_EXITED, "mock exited", status="9", stderr="mock died")

# What corral writes, made by the encoders corral itself uses.
LINES: list[bytes] = [
    hello_line("1.2.3"),
    ok_line(1, None),
    ok_line(2, SESSION_INFO),
    ok_line(3, REPORT),
    ok_line(4, DETAILS),
    ok_line(5, Delivery(prompt_id="p1", kind=Queued(0))),
    error_line(6, BUSY),
    error_line(None, CorralError(ErrorKind.BAD_FRAME, "not JSON")),
    event_line(EVENT),
    session_error_line("s1", DIED),
    closed_line("s1"),
]


@pytest.mark.parametrize("encoded", LINES, ids=lambda b: b[:24].decode())
def test_a_line_reads_and_writes_back_byte_for_byte(encoded: bytes) -> None:
    check_line(orjson.loads(encoded))
    line = read_line(encoded)
    assert orjson.dumps(line.to_wire(), option=orjson.OPT_APPEND_NEWLINE) == encoded
    assert line_from_wire(line.to_wire()) == line


def test_the_lines_cover_every_variant() -> None:
    assert {type(read_line(encoded)) for encoded in LINES} == set(typing.get_args(Line))


def test_lines_read_into_their_typed_values() -> None:
    assert read_line(hello_line("1.2.3")) == Hello(protocol=1, anyagent="1.2.3")
    assert read_line(event_line(EVENT)) == EventLine(EVENT)
    assert read_line(error_line(None, BUSY)) == ErrorReply(id=None, error=BUSY.error_body())
    assert read_line(session_error_line("s1", DIED)) == SessionErrorLine(
        session="s1", error=DIED.error_body()
    )
    assert read_line(closed_line("s1")) == ClosedLine("s1")
    reply = read_line(ok_line(2, SESSION_INFO))
    assert isinstance(reply, OkReply) and reply.id == 2
    assert SessionInfo.from_wire(reply.value, "ok") == SESSION_INFO


def test_an_error_without_an_id_reads_as_a_reply_to_no_frame() -> None:
    wire = {"error": {"kind": "BadFrame", "message": "x"}}
    check_line(wire)
    assert line_from_wire(wire) == ErrorReply(
        id=None, error=ErrorBody(kind=ErrorKind.BAD_FRAME, message="x")
    )


# ---- bad input ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("read", "raw", "message"),
    [
        (
            line_from_wire,
            {"greeting": 1},
            "not a line: expected a hello, ok, error, event or closed",
        ),
        (line_from_wire, [1], "expected an object, got an array"),
        (line_from_wire, {"id": True, "ok": None}, "id: expected an integer, got a boolean"),
        (line_from_wire, {"hello": {"protocol": 1}}, "hello.anyagent: missing"),
        (line_from_wire, {"closed": 5}, "closed: expected a string, got a number"),
        (
            line_from_wire,
            {"id": 1, "error": {"kind": "Oops", "message": "x"}},
            "error.kind: expected one of NotInstalled",
        ),
        (line_from_wire, {"session": "s", "error": {"kind": "BadFrame"}}, "error.message: missing"),
        (
            line_from_wire,
            {"event": {"extensions": {}, "sequence": "1"}},
            "event.sequence: expected an integer, got a string",
        ),
        (Frame.from_wire, {"cmd": "discover"}, "id: missing"),
        (Frame.from_wire, {"id": 1, "cmd": "fly"}, "cmd: unknown command 'fly'"),
        (
            lambda raw: DiscoveryReport.from_wire(raw),
            {"agents": [], "missing": [{"id": "x"}], "diagnostics": []},
            "report.missing[0].name: missing",
        ),
        (
            lambda raw: DiscoveryReport.from_wire(raw),
            {"agents": [], "missing": [], "diagnostics": [{"level": "Loud", "message": "x"}]},
            "report.diagnostics[0].level: expected one of Info, Warning, Error",
        ),
        (
            lambda raw: Delivery.from_wire(raw, "ok"),
            {"prompt_id": "p", "kind": {"Lost": {}}},
            "ok.kind: unknown delivery 'Lost'",
        ),
        (
            lambda raw: SessionInfo.from_wire(raw, "ok"),
            {**SESSION_INFO.to_wire(), "status": "Asleep"},
            "ok.status: expected one of Idle, Working, NeedsInput",
        ),
        (
            lambda raw: AgentDetails.from_wire(raw, "ok"),
            {**DETAILS.to_wire(), "auth": {"Authenticated": {"kind": {"Other": 5}}}},
            "ok.auth.Authenticated.kind.Other: expected a string, got a number",
        ),
        (
            lambda raw: AgentDetails.from_wire(raw, "ok"),
            {**LOGGED_OUT.to_wire(), "auth": {"Unauthenticated": {"login": [{"Phone": {}}]}}},
            "ok.auth.Unauthenticated.login[0]: unknown login method 'Phone'",
        ),
        (
            lambda raw: ConfigOption.from_wire(raw, "opt"),
            {"id": "x", "name": "X", "live": True, "kind": {"Slider": {"choices": []}}},
            "opt.kind: unknown config kind 'Slider'",
        ),
    ],
)
def test_bad_input_is_a_shape_error_naming_the_field(
    read: typing.Callable[[object], object], raw: object, message: str
) -> None:
    with pytest.raises(ShapeError) as raised:
        read(raw)
    assert message in str(raised.value)


def test_a_line_that_is_not_json_is_a_shape_error() -> None:
    with pytest.raises(ShapeError, match="not JSON"):
        read_line(b'{"closed": ')
