"""App-server notifications through the normalizer, against golden files.

The fixtures under `tests/fixtures/appserver/` are notifications checked
against the seed schema here (one deliberately unknown method aside);
together they use every notification method the schema names.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from corral.pipeline.driver import Emitted, RequestAsked, TurnBegan, TurnFinished
from corral.pipeline.events import (
    Cancelled,
    Completed,
    Failed,
    PermissionRequest,
    ToolStatus,
    ToolUpdated,
    UserMessage,
)
from corral.sources.appserver import AppServerNormalizer
from corral.sources.appserver._normalize import NOTIFICATIONS

from tests.support.fake_appserver._schema import notification_problem
from tests.support.schema import schema_text
from tests.unit.copilot.golden import assert_golden, check_items

FIXTURES = Path(__file__).parents[2] / "fixtures" / "appserver"
SCENARIOS = sorted(FIXTURES.glob("*.jsonl"))


def frames(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_bytes().split(b"\n") if line]


def normalize(
    messages: list[dict[str, Any]], normalizer: AppServerNormalizer | None = None
) -> list[object]:
    normalizer = normalizer or AppServerNormalizer()
    out: list[object] = []
    for message in messages:
        out.extend(normalizer.feed(message["method"], message.get("params")))
    check_items(out)
    return out


def notification(method: str, **params: Any) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "method": method, "params": params}


@pytest.mark.parametrize("scenario", SCENARIOS, ids=lambda path: path.stem)
def test_every_fixture_notification_of_a_schema_method_is_valid(scenario: Path) -> None:
    for message in frames(scenario):
        if message["method"] in NOTIFICATIONS:
            assert notification_problem(message) is None, message


@pytest.mark.parametrize("scenario", SCENARIOS, ids=lambda path: path.stem)
def test_a_scenario_normalizes_as_its_golden_file(scenario: Path) -> None:
    assert_golden(FIXTURES / "expected" / f"{scenario.stem}.json", normalize(frames(scenario)))


def test_the_fixtures_use_every_notification_the_schema_names() -> None:
    used = {message["method"] for path in SCENARIOS for message in frames(path)}
    assert NOTIFICATIONS - used == set()


def test_the_method_list_is_the_schemas() -> None:
    schema = json.loads(schema_text("app-server-notifications.schema.json"))
    named = {choice["properties"]["method"]["const"] for choice in schema["oneOf"]}
    assert named == NOTIFICATIONS


def test_our_prompts_echo_is_not_a_user_message_but_another_is() -> None:
    normalizer = AppServerNormalizer()
    normalizer.expect_turn("hi")
    item = {
        "itemId": "i",
        "threadId": "t",
        "turnId": "u",
        "type": "userMessage",
        "status": "completed",
    }
    echo = notification("item/completed", **item, payload={"text": "hi"}, createdAt=0, updatedAt=0)
    other = notification(
        "item/completed", **item, payload={"text": "psst"}, createdAt=0, updatedAt=0
    )
    out = normalize([echo, other], normalizer)
    assert out[0] == TurnBegan()
    first = next(e.kind for e in out[1:] if isinstance(e, Emitted))
    assert first == UserMessage(message_id="i", text="psst")


def test_a_turn_that_completes_without_starting_still_begins_first() -> None:
    normalizer = AppServerNormalizer()
    normalizer.expect_turn("hi")
    out = normalize(
        [notification("turn/completed", threadId="t", turnId="u", status="failed", error="boom")],
        normalizer,
    )
    assert out[0] == TurnBegan()
    assert isinstance(out[1], TurnFinished) and out[1].stop == Failed("boom")


@pytest.mark.parametrize(
    ("status", "stop"),
    [
        ("completed", Completed()),
        ("interrupted", Cancelled()),
        ("cancelled", Cancelled()),
        ("wait_user", Completed()),
    ],
)
def test_turn_status_becomes_the_stop(status: str, stop: object) -> None:
    [finished] = normalize(
        [notification("turn/completed", threadId="t", turnId="u", status=status)]
    )
    assert isinstance(finished, TurnFinished) and finished.stop == stop
    assert finished.extensions["appserver/status"] == status


def test_an_approval_asks_about_the_tool_it_names_and_remembers_where_it_belongs() -> None:
    normalizer = AppServerNormalizer()
    asked = notification(
        "approval/requested",
        requestId="r",
        threadId="t",
        turnId="u",
        toolCallId="c",
        toolName="run_command",
        preview="run ls",
        arguments={"command": "ls"},
    )
    [request] = normalize([asked], normalizer)
    assert isinstance(request, RequestAsked) and isinstance(request.request, PermissionRequest)
    assert request.request.tool.id == "c" and request.request.detail == "run ls"
    assert normalizer.approvals["r"].turn_id == "u"


def test_a_tool_delta_with_text_is_tool_output() -> None:
    item = {
        "itemId": "i",
        "threadId": "t",
        "turnId": "u",
        "type": "toolCall",
        "status": "inProgress",
    }
    started = notification(
        "item/started", **item, payload={"toolName": "bash"}, createdAt=0, updatedAt=0
    )
    delta = notification(
        "item/toolCall/delta", **item, payload={}, createdAt=0, updatedAt=0, delta="out"
    )
    out = normalize([started, delta])
    assert isinstance(out[0], Emitted) and isinstance(out[0].kind, ToolUpdated)
    assert out[0].kind.tool.status is ToolStatus.RUNNING
    assert isinstance(out[1], Emitted) and out[1].kind.to_wire() == {
        "ToolOutputDelta": {"tool_id": "i", "text": "out"}
    }
