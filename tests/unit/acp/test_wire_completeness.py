"""What ACP agents say beyond text and tools, as meaning (issue 22's ACP part), sans-IO.

Elicitation forms → Question requests answered in the agent's shape; the
`models` state → the `model` option set with `session/set_model`; no
steering (the reference defines none). Notices and compactions are in the
seed goldens (`test_seed_golden.py`); the live paths against a real
subprocess are in `test_wire_live.py`.
"""

from __future__ import annotations

from typing import Any, cast

from corral.actors._generate import Decline
from corral.pipeline.driver import ConfigApplied, LaunchSpec, RequestAsked
from corral.pipeline.events import (
    Capability,
    ChoicesAnswer,
    PermissionAnswer,
    PermissionChoice,
    QuestionRequest,
    QuestionsAnswer,
    TextAnswer,
)
from corral.pipeline.policy import Decide, PolicyContext
from corral.sources._jsonrpc import JsonRpcPeer
from corral.sources.acp._actions import Reply
from corral.sources.acp._asks import Asks
from corral.sources.acp._catalog import RECIPES
from corral.sources.acp._elicit import form_of
from corral.sources.acp._handshake import details_of, initialize_params, open_session
from corral.sources.acp._settings import Settings
from corral.sources.acp._tools import ToolBook

from tests.unit.acp.test_handshake import RecordingPeer

FORM: dict[str, Any] = {
    "sessionId": "s",
    "mode": "form",
    "message": "Set up?",
    "requestedSchema": {
        "type": "object",
        "properties": {
            "name": {"type": "string", "title": "Name"},
            "license": {"type": "string", "enum": ["mit", "gpl"]},
            "workers": {"type": "integer"},
            "ratio": {"type": "number"},
            "ci": {"type": "boolean"},
            "targets": {
                "type": "array",
                "items": {"anyOf": [{"const": "linux", "title": "Linux"}, {"const": "mac"}]},
            },
        },
        "required": ["name"],
    },
}
MODELS = {
    "currentModelId": "sonnet",
    "availableModels": [
        {"modelId": "sonnet", "name": "Sonnet", "description": "fast"},
        {"modelId": "opus", "name": "Opus"},
    ],
}


def asked(params: dict[str, Any]) -> tuple[Asks, QuestionRequest]:
    asks = Asks(ToolBook())
    events = asks.elicitation(7, params)
    assert isinstance(events, list)
    [event] = events
    assert isinstance(event, RequestAsked) and isinstance(event.request, QuestionRequest)
    return asks, event.request


def answered(*answers: ChoicesAnswer | TextAnswer) -> object:
    asks, request = asked(FORM)
    reply = asks.answer(request.id, QuestionsAnswer(answers))
    assert isinstance(reply, Reply) and reply.rpc_id == 7
    return reply.result


# ---- elicitation -------------------------------------------------------------------


def test_each_form_field_becomes_a_question_of_its_kind() -> None:
    _, request = asked(FORM)
    by_id = {q.id: q for q in request.questions}
    assert list(by_id) == ["name", "license", "workers", "ratio", "ci", "targets"]
    assert by_id["name"].allows_free_text and not by_id["name"].choices
    assert by_id["name"].header == "Name" and by_id["name"].text == "Set up?"
    assert [c.id for c in by_id["license"].choices] == ["mit", "gpl"]
    assert not by_id["license"].allows_free_text
    assert by_id["workers"].allows_free_text and by_id["ratio"].allows_free_text
    assert [c.label for c in by_id["ci"].choices] == ["Yes", "No"]
    assert by_id["targets"].multi_select
    assert [(c.id, c.label) for c in by_id["targets"].choices] == [
        ("linux", "Linux"),
        ("mac", "mac"),
    ]


def test_answers_go_back_typed_as_the_form_asked() -> None:
    result = answered(
        TextAnswer("corral"),
        ChoicesAnswer(("gpl",)),
        TextAnswer(" 4 "),
        TextAnswer("0.5"),
        ChoicesAnswer(("false",)),
        ChoicesAnswer(("linux", "mac")),
    )
    assert result == {
        "action": "accept",
        "content": {
            "name": "corral",
            "license": "gpl",
            "workers": 4,
            "ratio": 0.5,
            "ci": False,
            "targets": ["linux", "mac"],
        },
    }


def test_fields_left_empty_are_left_out() -> None:
    empty = ChoicesAnswer(())
    result = answered(TextAnswer("x"), empty, TextAnswer(""), TextAnswer(""), empty, empty)
    assert result == {"action": "accept", "content": {"name": "x"}}


def test_a_required_field_left_empty_declines() -> None:
    assert answered(TextAnswer(""), ChoicesAnswer(("mit",))) == {"action": "decline"}


def test_a_number_that_is_not_one_declines() -> None:
    assert answered(TextAnswer("x"), ChoicesAnswer(()), TextAnswer("four")) == {"action": "decline"}


def test_a_permission_answer_to_a_form_declines() -> None:
    asks, request = asked(FORM)
    reply = asks.answer(request.id, PermissionAnswer(PermissionChoice.ALLOW_ONCE))
    assert reply == Reply(7, {"action": "decline"})


def test_generate_s_decline_policy_answers_a_text_form_and_the_agent_reads_decline() -> None:
    text_only = {**FORM, "requestedSchema": {"properties": {"name": {"type": "string"}}}}
    asks, request = asked(text_only)
    verdict = Decline().decide(request, cast(PolicyContext, None))
    assert isinstance(verdict, Decide)
    assert asks.answer(request.id, verdict.answer) == Reply(7, {"action": "decline"})


def test_a_withdrawn_form_is_cancelled() -> None:
    asks, request = asked(FORM)
    assert asks.withdraw(request.id) == Reply(7, {"action": "cancel"})
    assert asks.answer(request.id, QuestionsAnswer(())) is None  # settled once


def test_a_url_elicitation_is_declined_at_once_saying_why() -> None:
    url = {
        "sessionId": "s",
        "mode": "url",
        "message": "Log in",
        "url": "https://x",
        "elicitationId": "e",
    }
    reply = Asks(ToolBook()).elicitation(3, url)
    assert isinstance(reply, Reply) and reply.result == {"action": "decline"}
    assert reply.warning is not None and "'url' elicitation" in reply.warning


def test_forms_corral_cannot_show_are_refused_with_the_reason() -> None:
    def schema(properties: dict[str, Any]) -> dict[str, Any]:
        return {"mode": "form", "message": "?", "requestedSchema": {"properties": properties}}

    assert "no fields" in str(form_of(schema({})))
    assert "'_colour'" in str(form_of(schema({"c": {"type": "_colour"}})))
    assert "no choices" in str(form_of(schema({"t": {"type": "array", "items": {}}})))
    assert "no choices" in str(form_of(schema({"s": {"type": "string", "enum": []}})))
    many = {f"f{i}": {"type": "string"} for i in range(40)}
    assert "40 fields" in str(form_of(schema(many)))


def test_questions_are_advertised_and_forms_offered_in_initialize() -> None:
    assert Capability.QUESTIONS in details_of({}).capabilities
    caps = initialize_params(terminal=True)["clientCapabilities"]
    assert caps["elicitation"] == {"form": {}}


# ---- the model option ------------------------------------------------------------------


def test_the_models_state_is_the_model_option() -> None:
    settings = Settings.from_session({"models": MODELS})
    [option] = settings.config_options()
    assert (option.id, option.category, option.current) == ("model", "model", "sonnet")
    assert [(c.value, c.label, c.description) for c in option.choices] == [
        ("sonnet", "Sonnet", "fast"),
        ("opus", "Opus", None),
    ]
    call = settings.set_call("s1", "model", "opus")
    assert call == ("session/set_model", {"sessionId": "s1", "modelId": "opus"})
    assert settings.applied("model", "opus", {}) == [ConfigApplied(option="model", value="opus")]
    assert settings.current() == (("model", "opus"),)


def test_a_config_option_that_is_the_model_wins_over_the_models_state() -> None:
    select = {
        "id": "model",
        "name": "Model",
        "category": "model",
        "type": "select",
        "currentValue": "a",
        "options": [{"value": "a", "name": "A"}],
    }
    settings = Settings.from_session({"models": MODELS, "configOptions": [select]})
    assert [o.id for o in settings.config_options()] == ["model"]
    assert settings.set_call("s1", "model", "a")[0] == "session/set_config_option"


def test_the_model_option_survives_a_new_set_of_config_options() -> None:
    settings = Settings.from_session({"models": MODELS})
    settings.replaced([{"id": "x", "type": "boolean", "currentValue": True, "name": "X"}])
    assert [o.id for o in settings.config_options()] == ["x", "model"]


async def test_configure_model_at_open_goes_through_session_set_model() -> None:
    peer = RecordingPeer(
        {
            "initialize": {"protocolVersion": 1},
            "session/new": {"sessionId": "a1", "models": MODELS},
            "session/set_model": {},
        }
    )
    launch = LaunchSpec(session_id="s1", executable="x", dir="/w", configure=(("model", "opus"),))
    opened = await open_session(
        cast(JsonRpcPeer, peer),
        launch=launch,
        auth=RECIPES["acp"].auth,
        environ={},
        terminal=False,
    )
    assert peer.calls[-1] == ("session/set_model", {"sessionId": "a1", "modelId": "opus"})
    assert opened.settings.current() == (("model", "opus"),)


# ---- steering ----------------------------------------------------------------------------


def test_no_acp_agent_is_said_to_steer() -> None:
    """The reference has no prompt-while-running: the engine queues instead of steering."""
    everything = {
        "agentCapabilities": {
            "loadSession": True,
            "promptCapabilities": {"image": True, "audio": True, "embeddedContext": True},
            "sessionCapabilities": {"resume": {}, "close": {}, "list": {}},
        }
    }
    assert Capability.STEER not in details_of(everything).capabilities
