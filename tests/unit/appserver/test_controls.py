"""Checkpoints as resume tokens and `model/list` as the `model` option (pure functions)."""

from __future__ import annotations

import pytest
from corral.pipeline.events import ConfigChoice
from corral.sources.appserver._controls import (
    Checkpoint,
    checkpoint_of,
    model_option,
    parse_token,
    token,
)


def completed(status: str, *, acknowledged: bool = False, key: str = "k-1") -> dict[str, object]:
    point = {
        "key": key,
        "resumeAttempt": 0,
        "cycleIndex": 1,
        "status": status,
        "terminalAcknowledged": acknowledged,
    }
    return {"threadId": "t", "turnId": "turn-2", "status": "completed", "checkpoint": point}


@pytest.mark.parametrize("status", ["wait_user", "failed"])
def test_a_wait_user_or_failed_checkpoint_is_resumable(status: str) -> None:
    assert checkpoint_of(completed(status)) == Checkpoint("turn-2", "k-1")


@pytest.mark.parametrize("status", ["completed", "running", "max_cycles", "pending"])
def test_other_checkpoints_are_not(status: str) -> None:
    assert checkpoint_of(completed(status)) is None


def test_an_acknowledged_terminal_checkpoint_is_not_resumable() -> None:
    assert checkpoint_of(completed("failed", acknowledged=True)) is None


def test_a_turn_without_a_checkpoint_has_none() -> None:
    assert checkpoint_of({"threadId": "t", "turnId": "turn-2", "status": "failed"}) is None


@pytest.mark.parametrize(
    ("thread", "checkpoint"),
    [
        ("thread-1", None),
        ("thread-1", Checkpoint("turn-1", "turn-1-checkpoint")),
        ("a#b", Checkpoint("t#1", "key#with#hashes")),
        ("", Checkpoint("t", "k")),
    ],
)
def test_a_token_names_its_thread_and_checkpoint(
    thread: str, checkpoint: Checkpoint | None
) -> None:
    parsed = parse_token(token(thread, checkpoint))
    if thread:
        assert parsed == (thread, checkpoint)
    else:  # no thread: not a checkpoint token
        assert parsed[1] is None


def test_a_plain_thread_id_is_a_plain_resume() -> None:
    assert parse_token("thread-9") == ("thread-9", None)


def test_the_listed_models_are_a_live_select() -> None:
    listed = {
        "models": [
            {"id": "m1", "displayName": "Model One", "provider": "p", "supportsTools": True},
            {"id": "m2", "supportsTools": False},
            {"displayName": "no id", "supportsTools": True},
        ]
    }
    option = model_option(listed, "m2")
    assert option is not None
    assert option.id == "model" and option.live and option.current == "m2"
    assert option.choices == (
        ConfigChoice(value="m1", label="Model One", description="p"),
        ConfigChoice(value="m2", label="m2"),
    )


@pytest.mark.parametrize("listed", [{"models": []}, {}, None, {"models": [{"x": 1}]}])
def test_no_listed_model_is_no_option(listed: object) -> None:
    assert model_option(listed) is None
