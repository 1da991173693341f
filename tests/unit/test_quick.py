"""`text_emitter` (`sources/_kit/quick.py`): the quick way builds what the constructors build."""

from __future__ import annotations

import attrs
import pytest
from corral.pipeline.driver import Emitted
from corral.pipeline.events import ReasoningDelta, TextDelta, UserMessage
from corral.sources._kit.quick import text_emitter


@pytest.mark.parametrize("delta", [TextDelta, ReasoningDelta, UserMessage])
def test_the_quick_way_equals_the_constructors(delta: type[TextDelta]) -> None:
    emit = text_emitter(delta)
    assert emit.__qualname__.startswith("text_emitter.")  # plain today: the quick way is taken
    made = emit("m1", "hello")
    assert made == Emitted(kind=delta(message_id="m1", text="hello"))
    assert type(made.kind) is delta
    assert made.encoded_kind() is None  # every slot set, the private ones too
    assert made.kind_json() == Emitted(kind=delta(message_id="m1", text="hello")).kind_json()


def test_each_emitted_holds_its_own_extensions() -> None:
    emit = text_emitter(TextDelta)
    assert emit("m1", "a").extensions is not emit("m1", "b").extensions


def test_a_class_that_runs_something_on_init_gets_its_constructor() -> None:
    @attrs.frozen(kw_only=True)
    class Checked:
        message_id: str = attrs.field(validator=attrs.validators.instance_of(str))
        text: str

    emit = text_emitter(Checked)  # type: ignore[arg-type]
    assert emit.__qualname__.startswith("_general.")
    assert emit("m1", "a") == Emitted(kind=Checked(message_id="m1", text="a"))  # type: ignore[arg-type]
    with pytest.raises(TypeError):
        emit(7, "a")  # type: ignore[arg-type]  # the validator ran
