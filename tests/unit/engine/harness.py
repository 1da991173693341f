"""A sans-IO engine on virtual time, and readers for what it produced.

Tests drive `Engine` directly: commands, driver events, `clock.advance()`,
`on_time()`, `on_quiescent()`; then read `events()` (schema-checked),
`kinds()` and `sent()` (commands to the driver).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from corral.actors.engine import Engine, EngineSettings
from corral.pipeline.commands import PermissionMode
from corral.pipeline.driver import DriverCommand, Handshake
from corral.pipeline.events import (
    AgentDetails,
    AgentInstallation,
    Capabilities,
    Capability,
    Choice,
    CommandInput,
    ConfigChoice,
    ConfigOption,
    Event,
    InstallationSource,
    PermissionChoice,
    PermissionRequest,
    Question,
    QuestionRequest,
    ToolKind,
    ToolStatus,
    ToolUpdate,
)
from corral.pipeline.policy import Policy
from corral.pipeline.records import Decision

from tests.support.schema import check


class FakeClock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now

    def advance(self, seconds: float) -> None:
        self.now += seconds


MODEL_OPTION = ConfigOption(
    id="model",
    name="Model",
    live=True,
    choices=(ConfigChoice(value="fast", label="Fast"), ConfigChoice(value="smart", label="Smart")),
    current="fast",
)


def make_engine(
    *features: Capability,
    reliable: bool = True,
    mode: PermissionMode = PermissionMode.ASK,
    policy: Policy | None = None,
    show_auto: bool = False,
    options: tuple[ConfigOption, ...] = (MODEL_OPTION,),
    settings: EngineSettings | None = None,
) -> tuple[Engine, FakeClock]:
    clock = FakeClock()
    engine = Engine(
        session_id="s1",
        agent=AgentInstallation(
            id="fake",
            name="Fake agent",
            executable_path="/bin/fake",
            source=InstallationSource.PATH,
        ),
        handshake=Handshake(
            details=AgentDetails(
                capabilities=Capabilities(
                    features=frozenset({Capability.PERMISSIONS, Capability.QUESTIONS, *features})
                ),
                config_options=options,
            ),
            options=(("model", "fast"),),
            reliable_turn_end=reliable,
        ),
        clock=clock,
        wall_clock_ns=lambda: 1_700_000_000_000_000_000,
        session_dir="/work/project",
        mode=mode,
        policy=policy,
        show_auto_decisions=show_auto,
        settings=settings,
    )
    return engine, clock


def events(engine: Engine) -> list[Event]:
    """The events produced since the last call, each schema-checked.

    Takes them out of the outbox; decision records stay for `decisions()`.
    """
    out = []
    kept = []
    for item in engine.outbox:
        if isinstance(item, Event):
            check("line-protocol.schema.json", "Event", item.to_wire())
            out.append(item)
        else:
            kept.append(item)
    engine.outbox.clear()
    engine.outbox.extend(kept)
    return out


def decisions(engine: Engine) -> list[Decision]:
    return [item for item in engine.outbox if isinstance(item, Decision)]


def kind_name(event: Event) -> str:
    wire = event.kind.to_wire()
    return wire if isinstance(wire, str) else next(iter(wire))  # type: ignore[arg-type]


def kinds(items: Iterable[Event]) -> list[str]:
    return [kind_name(event) for event in items]


def sent(engine: Engine) -> list[DriverCommand]:
    out = list(engine.to_driver)
    engine.to_driver.clear()
    return out


def wire(event: Event) -> Any:
    return event.kind.to_wire()


def tool(tool_id: str = "tool1", kind: ToolKind = ToolKind.EXECUTE) -> ToolUpdate:
    return ToolUpdate(
        id=tool_id,
        kind=kind,
        title="run ls",
        status=ToolStatus.PENDING,
        input=CommandInput(command="ls"),
    )


def permission(
    request_id: str = "r1",
    *,
    tool_id: str = "tool1",
    kind: ToolKind = ToolKind.EXECUTE,
    options: tuple[PermissionChoice, ...] = (
        PermissionChoice.ALLOW_ONCE,
        PermissionChoice.DENY_ONCE,
    ),
) -> PermissionRequest:
    return PermissionRequest(id=request_id, tool=tool(tool_id, kind), options=options)


def question(request_id: str = "q1", *, multi: bool = False, free: bool = False) -> QuestionRequest:
    return QuestionRequest(
        id=request_id,
        questions=(
            Question(
                id="color",
                text="Which color?",
                choices=(Choice(id="red", label="Red"), Choice(id="blue", label="Blue")),
                multi_select=multi,
                allows_free_text=free,
            ),
        ),
    )
