"""The Copilot fixtures are real SessionEvents, and they cover every mapped type."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from corral.sources.copilot import CopilotNormalizer
from corral.sources.copilot._known import SCHEMA_EVENT_TYPES

from tests.support.schema import check, schema_text

FIXTURES = Path(__file__).parents[2] / "fixtures" / "copilot" / "sessions"


def fixture_events() -> list[tuple[str, dict[str, Any]]]:
    events = []
    for path in sorted(FIXTURES.glob("*.jsonl")):
        for number, line in enumerate(path.read_bytes().split(b"\n"), start=1):
            if line:
                events.append((f"{path.stem}:{number}", json.loads(line)))
    return events


EVENTS = fixture_events()


@pytest.mark.parametrize(("where", "event"), EVENTS, ids=[where for where, _ in EVENTS])
def test_every_fixture_event_of_a_schema_type_is_a_valid_session_event(
    where: str, event: dict[str, Any]
) -> None:
    if event["type"] not in SCHEMA_EVENT_TYPES:
        pytest.skip(f"{where}: {event['type']} is deliberately unknown to the schema")
    check("copilot-session-events.schema.json", "SessionEvent", event)


def test_the_fixtures_use_every_type_the_normalizer_maps() -> None:
    used = {event["type"] for _, event in EVENTS}
    assert CopilotNormalizer.mapped_types() - used == set()


BEYOND_THE_SEED = {"session.usage_record"}  # observed in Copilot 1.0.102 transcripts


def test_every_mapped_type_is_a_type_the_schema_names_or_a_documented_newer_one() -> None:
    assert CopilotNormalizer.mapped_types() - SCHEMA_EVENT_TYPES == BEYOND_THE_SEED


def test_the_fixtures_hold_an_unknown_type_and_an_unmapped_schema_type() -> None:
    types = {event["type"] for _, event in EVENTS}
    assert types - SCHEMA_EVENT_TYPES - BEYOND_THE_SEED, "no unknown type in the fixtures"
    assert (types & SCHEMA_EVENT_TYPES) - CopilotNormalizer.mapped_types(), "no unmapped type"


def test_the_known_type_list_is_the_schema_list() -> None:
    schema = json.loads(schema_text("copilot-session-events.schema.json"))
    definitions = schema["definitions"]
    named = {
        definitions[choice["$ref"].rsplit("/", 1)[1]]["properties"]["type"]["const"]
        for choice in definitions["SessionEvent"]["anyOf"]
    }
    assert named == SCHEMA_EVENT_TYPES
