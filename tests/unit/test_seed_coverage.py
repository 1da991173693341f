"""Every event type a seed wire defines is mapped, or deliberately left out with a reason.

One test per seed: the types the seed schema names, minus what the
translator maps, minus its documented list of deliberate omissions, must be
empty. A new type in a seed (or a mapping removed) fails here until it is
mapped or listed with why. Copilot's list of unmapped types is capped at 20
and each is named in README's Copilot paragraph.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path

from corral.sources.appserver._normalize import IGNORED as APPSERVER_IGNORED
from corral.sources.appserver._normalize import AppServerNormalizer
from corral.sources.codex._eventmsg import IGNORED as CODEX_IGNORED
from corral.sources.codex._eventmsg import EventMsgNormalizer
from corral.sources.copilot import CopilotNormalizer
from corral.sources.copilot._known import UNMAPPED

from tests.support.schema import schema_text

README = Path(__file__).parents[2] / "README.md"


def uncovered(seed: set[str], mapped: frozenset[str], ignored: Mapping[str, str]) -> set[str]:
    """The seed's types with neither a mapping nor a documented reason to ignore them."""
    reasons = {kind for kind, why in ignored.items() if why.strip()}
    return seed - mapped - reasons


def _copilot_types() -> set[str]:
    schema = json.loads(schema_text("copilot-session-events.schema.json"))
    definitions = schema["definitions"]
    return {
        definitions[choice["$ref"].rsplit("/", 1)[1]]["properties"]["type"]["const"]
        for choice in definitions["SessionEvent"]["anyOf"]
    }


def _codex_types() -> set[str]:
    schema = json.loads(schema_text("codex-eventmsg.schema.json"))
    return {str(choice["properties"]["type"]["enum"][0]) for choice in schema["oneOf"]}


def _appserver_methods() -> set[str]:
    schema = json.loads(schema_text("app-server-notifications.schema.json"))
    return {choice["properties"]["method"]["const"] for choice in schema["oneOf"]}


def test_the_coverage_check_names_a_type_with_neither_mapping_nor_reason() -> None:
    assert uncovered({"a", "b", "c"}, frozenset({"a"}), {"b": "why"}) == {"c"}
    assert uncovered({"a", "b"}, frozenset({"a"}), {"b": " "}) == {"b"}  # a reason is needed


def test_every_copilot_session_event_type_is_mapped_or_listed_unmapped() -> None:
    seed = _copilot_types()
    assert len(seed) == 116
    assert uncovered(seed, CopilotNormalizer.mapped_types(), UNMAPPED) == set()


def test_copilot_leaves_at_most_twenty_types_unmapped_each_in_the_readme() -> None:
    assert len(UNMAPPED) <= 20
    assert set(UNMAPPED) <= _copilot_types()
    assert not set(UNMAPPED) & CopilotNormalizer.mapped_types()
    readme = README.read_text("utf-8")
    assert [kind for kind in UNMAPPED if f"| `{kind}` |" not in readme] == []


def test_every_codex_eventmsg_type_is_mapped_or_ignored_with_a_reason() -> None:
    seed = _codex_types()
    collab = frozenset(kind for kind in seed if kind.startswith("collab_"))  # one handler
    mapped = EventMsgNormalizer().handled_types | collab
    assert uncovered(seed, mapped, CODEX_IGNORED) == set()
    assert not set(CODEX_IGNORED) & mapped


def test_every_app_server_notification_is_mapped_or_ignored_with_a_reason() -> None:
    mapped = AppServerNormalizer.mapped_methods()
    assert uncovered(_appserver_methods(), mapped, APPSERVER_IGNORED) == set()
