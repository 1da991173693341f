"""ENGINE.md, Configure, rollback, compact (25-26)."""

from __future__ import annotations

import attrs
import pytest
from corral.pipeline.commands import RollbackScope
from corral.pipeline.driver import (
    Compact,
    ConfigApplied,
    ConfigRefused,
    Configure,
    Emitted,
    RollbackVerdict,
    TurnBegan,
    TurnFinished,
)
from corral.pipeline.errors import CorralError, ErrorKind
from corral.pipeline.events import (
    AgentOrigin,
    Capability,
    Completed,
    ContextCompacted,
    SessionInfo,
    SessionUpdated,
    TurnStarted,
)

from .harness import MODEL_OPTION, events, make_engine, sent


def refused_with(kind: ErrorKind, action: object) -> CorralError:
    with pytest.raises(CorralError) as raised:
        action()  # type: ignore[operator]
    assert raised.value.kind is kind
    return raised.value


def test_configure_refuses_an_option_that_is_not_advertised() -> None:
    engine, _ = make_engine()
    error = refused_with(ErrorKind.INVALID_CONFIGURATION, lambda: engine.configure("colour", "x"))
    assert "options: model" in error.message


def test_configure_refuses_a_value_outside_the_choices() -> None:
    engine, _ = make_engine()
    error = refused_with(ErrorKind.INVALID_CONFIGURATION, lambda: engine.configure("model", "huge"))
    assert "fast, smart" in error.message


def test_configure_refuses_an_advertised_option_that_cannot_change_in_a_live_session() -> None:
    engine, _ = make_engine(options=(attrs.evolve(MODEL_OPTION, live=False),))
    error = refused_with(
        ErrorKind.INVALID_CONFIGURATION, lambda: engine.configure("model", "smart")
    )
    assert "cannot change in a live session" in error.message
    assert not sent(engine) and not events(engine)


def test_configure_confirms_with_session_updated_carrying_the_new_value() -> None:
    engine, _ = make_engine()
    reply = engine.configure("model", "smart")
    assert sent(engine) == [Configure(option="model", value="smart")]
    engine.on_driver_event(ConfigApplied(option="model", value="smart"))
    updates = [e.kind for e in events(engine) if isinstance(e.kind, SessionUpdated)]
    assert dict(updates[0].info.options)["model"] == "smart"
    assert isinstance(reply.value, SessionInfo) and dict(reply.value.options)["model"] == "smart"


def test_an_agent_refusing_a_configuration_fails_the_reply() -> None:
    engine, _ = make_engine()
    reply = engine.configure("model", "smart")
    engine.on_driver_event(ConfigRefused(option="model", reason="not on your plan"))
    assert reply.error is not None and reply.error.kind is ErrorKind.INVALID_CONFIGURATION
    assert "not on your plan" in reply.error.message


def test_rollback_needs_its_capability() -> None:
    engine, _ = make_engine()
    refused_with(
        ErrorKind.UNSUPPORTED_FEATURE, lambda: engine.rollback(1, RollbackScope.CONVERSATION)
    )


def test_rollback_of_files_needs_rollback_files() -> None:
    engine, _ = make_engine(Capability.ROLLBACK)
    refused_with(
        ErrorKind.UNSUPPORTED_FEATURE,
        lambda: engine.rollback(1, RollbackScope.CONVERSATION_AND_FILES),
    )


def test_rollback_needs_an_idle_session() -> None:
    engine, _ = make_engine(Capability.ROLLBACK)
    engine.prompt("busy")
    refused_with(ErrorKind.SESSION_BUSY, lambda: engine.rollback(1, RollbackScope.CONVERSATION))


def test_a_second_rollback_while_one_is_pending_is_busy() -> None:
    engine, _ = make_engine(Capability.ROLLBACK)
    engine.rollback(1, RollbackScope.CONVERSATION)
    refused_with(ErrorKind.SESSION_BUSY, lambda: engine.rollback(1, RollbackScope.CONVERSATION))


def test_the_agent_refusing_a_rollback_is_invalid_request_with_its_reason() -> None:
    engine, _ = make_engine(Capability.ROLLBACK)
    reply = engine.rollback(2, RollbackScope.CONVERSATION)
    engine.on_driver_event(RollbackVerdict(accepted=False, reason="only 1 turn to drop"))
    assert reply.error is not None and reply.error.kind is ErrorKind.INVALID_REQUEST
    assert "only 1 turn to drop" in reply.error.message


def test_compact_needs_its_capability_and_an_idle_session() -> None:
    engine, _ = make_engine()
    refused_with(ErrorKind.UNSUPPORTED_FEATURE, engine.compact)
    busy, _ = make_engine(Capability.COMPACT)
    busy.prompt("work")
    refused_with(ErrorKind.SESSION_BUSY, busy.compact)


def test_compact_runs_as_an_agent_origin_turn() -> None:
    engine, _ = make_engine(Capability.COMPACT)
    engine.compact()
    assert sent(engine) == [Compact()]
    engine.on_driver_event(TurnBegan())
    engine.on_driver_event(Emitted(kind=ContextCompacted()))
    engine.on_driver_event(TurnFinished(stop=Completed()))
    produced = events(engine)
    assert produced[0].kind == TurnStarted(AgentOrigin())
    compacted = [e for e in produced if isinstance(e.kind, ContextCompacted)]
    assert compacted[0].turn_info is not None
