"""Plain attrs classes built through their slots (`pipeline/plain.py`): the same objects.

`new_event` (the engine's way to make an event) against `Event(...)`, and
`new_notification` (the JSON-RPC peer's) against `RpcNotification(...)`;
what `plain` turns down falls back to the class's own constructor.
"""

from __future__ import annotations

from typing import Any

import attrs
import orjson
import pytest
from corral.pipeline.events import Event, SystemTime, TextDelta, TurnContext, new_event
from corral.pipeline.events._event import _FIELDS, _constructed
from corral.pipeline.plain import plain, slot_maker
from corral.sources._jsonrpc import RpcNotification, new_notification

KIND = TextDelta(message_id="m1", text="hello")
AT = SystemTime(1_700_000_000, 5)
TURN = TurnContext(id="t1")


@pytest.mark.parametrize("make", [new_event, _constructed])
@pytest.mark.parametrize("kind_json", [None, orjson.dumps(KIND.to_wire())])
def test_a_made_event_is_the_constructors(make: Any, kind_json: bytes | None) -> None:
    extensions = {"corral/model": "m"}
    made = make(7, "s1", KIND, AT, TURN, extensions, kind_json)
    built = Event(
        sequence=7,
        session_id="s1",
        kind=KIND,
        occurred_at=AT,
        turn_info=TURN,
        extensions=extensions,
    )
    assert made == built and type(made) is Event
    assert made.extensions is extensions
    assert made.json() == built.json() == orjson.dumps(built.to_wire())
    with pytest.raises(attrs.exceptions.FrozenInstanceError):
        made.sequence = 8  # type: ignore[misc]


def test_events_are_made_through_their_slots_today() -> None:
    assert plain(Event, _FIELDS)
    assert new_event.__name__ == "make"  # the slot maker's


def test_a_made_event_reuses_the_kind_json_it_is_given() -> None:
    # Marked bytes (not what encoding the kind gives) show they are used, not remade.
    given = b'{"TextDelta":{"message_id":"m1","text":"given"}}'
    for make in (new_event, _constructed):
        assert b'"text":"given"' in make(1, "s1", KIND, AT, None, {}, given).json()
        assert b'"text":"given"' not in make(1, "s1", KIND, AT, None, {}, None).json()


def test_what_runs_something_on_init_or_has_other_fields_is_not_plain() -> None:
    @attrs.frozen
    class Checked:
        value: int = attrs.field(validator=attrs.validators.instance_of(int))

    @attrs.frozen
    class Hooked:
        value: int

        def __attrs_post_init__(self) -> None:
            pass

    @attrs.frozen(slots=False)
    class Unslotted:
        value: int

    @attrs.frozen
    class Plain:
        value: int

    assert plain(Plain, ("value",))
    assert not plain(Plain, ("other",))
    for cls in (Checked, Hooked, Unslotted):
        assert not plain(cls, ("value",)), cls


def test_a_made_notification_is_the_constructors() -> None:
    params = {"sessionId": "s1", "update": {"sessionUpdate": "agent_message_chunk"}}
    made = new_notification("session/update", params, 120)
    assert new_notification.__name__ == "make"  # the slot maker's: plain today
    assert made == RpcNotification("session/update", params, 120)
    assert type(made) is RpcNotification and made.params is params and made.size == 120


def test_a_slot_maker_takes_the_fields_in_order_but_the_fixed_ones() -> None:
    @attrs.frozen
    class Three:
        first: int
        second: object
        third: str

    make = slot_maker(Three, ("first", "second", "third"), otherwise=Three, fixed={"second": None})
    assert make(1, "c") == Three(1, None, "c")
    with pytest.raises(TypeError):
        make(1, None, "c")  # a fixed field is not an argument
