"""Golden wires: real `codex app-server` recordings, real rollouts, seed-built EventMsgs.

Each input, fed whole, byte by byte and in 7-byte pieces, gives exactly its
`.expected.json` (see `golden.py`); trailing garbage adds one decode
problem and changes nothing else; every event produced is a valid
line-protocol Event; played through a real engine, every turn ends once.
"""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest
from corral.pipeline.driver import PromptSent, ReplayItem, TurnBegan
from corral.pipeline.events import TurnEnded, TurnStarted
from corral.sources.codex import EventMsgNormalizer
from corral.sources.codex._eventmsg import IGNORED_EVENTS

from tests.support.schema import check, schema_text
from tests.unit.codex.golden import (
    APPSERVER,
    EVENTMSG,
    ROLLOUTS,
    appserver_events,
    check_outputs,
    describe,
    eventmsg_items,
    expected_path,
    our_prompts,
    recordings,
    rollout_items,
    run_engine,
)

CHUNKS = [0, 1, 7]
GARBAGE = b'{"method": "turn/started", "par'  # a torn last line


def _expected(folder: Path, name: str) -> list[object]:
    loaded: list[object] = json.loads(expected_path(folder, name).read_text("utf-8"))
    return loaded


def _appserver(name: str, chunk: int, extra: bytes = b"") -> list[object]:
    data = (APPSERVER / f"{name}.jsonl").read_bytes() + extra
    prompts = our_prompts((APPSERVER / f"{name}.client.jsonl").read_bytes())
    return [describe(item) for item in appserver_events(data, chunk, prompts)]


@pytest.mark.parametrize("folder", [APPSERVER, ROLLOUTS, EVENTMSG], ids=lambda f: f.name)
def test_every_input_has_a_golden_file(folder: Path) -> None:
    names = recordings(folder)
    assert names, f"no fixtures in {folder}"
    assert [n for n in names if not expected_path(folder, n).exists()] == []


def test_the_recordings_cover_every_scenario_of_the_issue() -> None:
    wanted = {
        "plain",
        "command_accepted",
        "command_declined",
        "interrupt_text",
        "interrupt_command",
        "steer",
        "resume",
        "question",
        "file_change",
        "compact",
        "failed",
    }
    assert wanted <= set(recordings(APPSERVER))
    assert wanted <= set(recordings(ROLLOUTS))


@pytest.mark.parametrize("chunk", CHUNKS)
@pytest.mark.parametrize("name", recordings(APPSERVER))
def test_appserver_recording_matches_golden(name: str, chunk: int) -> None:
    assert _appserver(name, chunk) == _expected(APPSERVER, name)


@pytest.mark.parametrize("name", recordings(APPSERVER))
def test_appserver_trailing_garbage_is_one_noise_item(name: str) -> None:
    assert _appserver(name, 0, GARBAGE) == [*_expected(APPSERVER, name), {"noise": "NotJson"}]


@pytest.mark.parametrize("name", recordings(APPSERVER))
def test_appserver_outputs_are_valid_events(name: str) -> None:
    data = (APPSERVER / f"{name}.jsonl").read_bytes()
    check_outputs(appserver_events(data))


@pytest.mark.parametrize("name", recordings(APPSERVER))
def test_appserver_recording_through_an_engine_ends_every_turn(name: str) -> None:
    data = (APPSERVER / f"{name}.jsonl").read_bytes()
    items = [i for i in appserver_events(data) if not isinstance(i, dict)]
    kinds = Counter(type(e.kind) for e in run_engine(items))
    assert kinds[TurnStarted] == kinds[TurnEnded] == items.count(TurnBegan())


@pytest.mark.parametrize("chunk", CHUNKS)
@pytest.mark.parametrize("name", recordings(ROLLOUTS))
def test_rollout_matches_golden(name: str, chunk: int) -> None:
    data = (ROLLOUTS / f"{name}.jsonl").read_bytes()
    assert [describe(i) for i in rollout_items(data, chunk)] == _expected(ROLLOUTS, name)


@pytest.mark.parametrize("name", recordings(ROLLOUTS))
def test_rollout_trailing_garbage_is_one_warning(name: str) -> None:
    data = (ROLLOUTS / f"{name}.jsonl").read_bytes() + GARBAGE
    described = [describe(i) for i in rollout_items(data)]
    expected = _expected(ROLLOUTS, name)
    assert described[: len(expected)] == expected
    (extra,) = described[len(expected) :]
    assert isinstance(extra, dict)
    assert extra["extensions"]["corral/decode_error"] == "not_json"


@pytest.mark.parametrize("name", recordings(ROLLOUTS))
def test_rollout_replays_as_prompted_turns(name: str) -> None:
    items: list[ReplayItem] = rollout_items((ROLLOUTS / f"{name}.jsonl").read_bytes())
    check_outputs(items)
    events = run_engine(items)
    started = [e.kind for e in events if isinstance(e.kind, TurnStarted)]
    ended = [e for e in events if isinstance(e.kind, TurnEnded)]
    prompts = sum(isinstance(i, PromptSent) for i in items)
    assert len(started) == len(ended) >= prompts >= 1
    assert all(e.turn_info is not None for e in ended)


@pytest.mark.parametrize("chunk", CHUNKS)
@pytest.mark.parametrize("name", recordings(EVENTMSG))
def test_eventmsg_fixture_matches_golden(name: str, chunk: int) -> None:
    data = (EVENTMSG / f"{name}.jsonl").read_bytes()
    assert [describe(i) for i in eventmsg_items(data, chunk)] == _expected(EVENTMSG, name)
    check_outputs(eventmsg_items(data))


def _built_frames() -> list[dict[str, object]]:
    frames = []
    for name in recordings(EVENTMSG):
        for line in (EVENTMSG / f"{name}.jsonl").read_text("utf-8").splitlines():
            frames.append(json.loads(line))
    return frames


def _seed_types() -> set[str]:
    seed = json.loads(schema_text("codex-eventmsg.schema.json"))
    return {str(v["properties"]["type"]["enum"][0]) for v in seed["oneOf"]}


def test_built_eventmsg_frames_are_valid_against_the_seed() -> None:
    for frame in _built_frames():
        check("codex-eventmsg.schema.json", "EventMsg", frame)


def test_built_frames_cover_every_type_the_normalizer_knows() -> None:
    # A type the normalizer handles (or deliberately ignores) with no built frame fails here.
    seed = _seed_types()
    collab = {t for t in seed if t.startswith("collab_")}
    known = EventMsgNormalizer().handled_types | (IGNORED_EVENTS & seed) | collab
    built = {str(frame["type"]) for frame in _built_frames()}
    assert sorted(known - built) == []


def test_every_handled_type_is_a_seed_type() -> None:
    # So every handled type can have a frame that validates against the seed.
    assert sorted(EventMsgNormalizer().handled_types - _seed_types()) == []


def test_the_normalizer_knows_every_seed_event_type() -> None:
    normalizer = EventMsgNormalizer()
    unknown = {t for t in _seed_types() if t not in normalizer.handled_types | IGNORED_EVENTS}
    assert sorted(t for t in unknown if not t.startswith("collab_")) == []
