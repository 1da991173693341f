"""What corral advertises for Claude Code: capabilities, settings, login."""

from __future__ import annotations

import json

from corral.pipeline.events import (
    Authenticated,
    AuthKind,
    Capability,
    EnvVarLogin,
    TerminalLogin,
    Unauthenticated,
    UnknownAuth,
)
from corral.sources.claude._details import (
    auth_from_account,
    auth_from_status,
    details_from_initialize,
    static_details,
)

from tests.support.schema import check
from tests.unit.claude.support import load


def initialize_payload() -> dict[str, object]:
    for record in load("plain"):
        if "in" in record:
            frame = json.loads(record["in"])
            if frame.get("type") == "control_response":
                return frame["response"]["response"]  # type: ignore[no-any-return]
    raise AssertionError("no initialize response in the plain fixture")


def test_capabilities_are_honest_rollback_with_files_but_no_steer() -> None:
    features = static_details().capabilities.features
    assert Capability.STEER not in features
    assert {Capability.ROLLBACK, Capability.ROLLBACK_FILES} <= features
    assert {
        Capability.IMAGES,
        Capability.RESUME,
        Capability.PERMISSIONS,
        Capability.QUESTIONS,
        Capability.FORK,
        Capability.COMPACT,
        Capability.SLASH_COMMANDS,
        Capability.PLAN,
        Capability.SUBAGENTS,
        Capability.CONTEXT_USAGE,
    } <= features


def test_initialize_gives_version_models_modes_and_commands() -> None:
    details = details_from_initialize(initialize_payload(), "default", "default")
    check("line-protocol.schema.json", "AgentDetails", details.to_wire())
    assert details.version == "2.1.332"
    model, mode, effort = details.config_options
    assert model.id == "model" and model.live and model.current == "default"
    assert effort.id == "effort" and effort.live and effort.current == "default"
    assert [c.value for c in effort.choices] == ["default", "low", "medium", "high", "xhigh", "max"]
    assert {"default", "opus", "sonnet"} <= {c.value for c in model.choices}
    assert mode.id == "mode" and [c.value for c in mode.choices] == ["default", "plan"]
    assert any(c.name == "compact" for c in details.commands)
    assert details.auth == Authenticated(kind=AuthKind.API_KEY)


def test_a_configured_model_outside_the_list_is_still_a_choice() -> None:
    details = details_from_initialize({"models": []}, "claude-custom", "plan")
    model, mode, _ = details.config_options
    assert model.current == "claude-custom" and model.accepts("claude-custom")
    assert mode.current == "plan"


def test_account_without_any_login_is_unknown_until_a_turn() -> None:
    assert auth_from_account({"tokenSource": "none", "apiProvider": "firstParty"}) == UnknownAuth()


def test_auth_status_logged_out_lists_how_to_log_in() -> None:
    auth = auth_from_status({"loggedIn": False, "authMethod": "none"}, "/bin/claude")
    assert isinstance(auth, Unauthenticated)
    assert (
        TerminalLogin(command=("/bin/claude", "auth", "login"), description="Log in to Claude")
        in auth.login
    )
    assert EnvVarLogin(name="ANTHROPIC_API_KEY") in auth.login


def test_auth_status_with_api_key() -> None:
    status = {"loggedIn": True, "authMethod": "api_key", "apiProvider": "firstParty"}
    assert auth_from_status(status, "claude") == Authenticated(kind=AuthKind.API_KEY)


def test_auth_status_on_a_cloud_provider() -> None:
    status = {"loggedIn": True, "authMethod": "third_party", "apiProvider": "bedrock"}
    assert auth_from_status(status, "claude") == Authenticated(kind=AuthKind.CLOUD_PROVIDER)


def test_effort_offers_the_levels_the_current_model_supports() -> None:
    models = [
        {"value": "default", "supportedEffortLevels": ["low", "medium", "high", "xhigh", "max"]},
        {"value": "haiku", "supportedEffortLevels": ["low", "high"]},
    ]
    details = details_from_initialize({"models": models}, "haiku", "default", "high")
    check("line-protocol.schema.json", "AgentDetails", details.to_wire())
    effort = details.config_options[2]
    assert [c.value for c in effort.choices] == ["default", "low", "high"]
    assert effort.current == "high" and effort.category == "thought_level"
