"""What corral tells the app about Claude Code: capabilities, settings, login.

Capabilities are advertised honestly. Claude Code has no real steer: a
message sent mid-turn runs as a turn of its own, so `Steer` is absent and
the engine queues prompts instead. `Rollback` and `RollbackFiles`: the
files' rewind and a fork at the turn (`_rollback.py`). `PlanUsage`: it
tells a claude.ai plan's quota (`get_usage`, `_usage.py`).

Settings (live, through control requests):
- `model`: the choices the `initialize` response lists (`set_model`);
- `mode`: Claude Code's permission mode, `default` or `plan`
  (`set_permission_mode`). The modes that let the CLI allow tools by itself
  (`acceptEdits`, `auto`, `dontAsk`, `bypassPermissions`) are not offered:
  corral keeps the CLI in its most asking mode, and its own policy
  (`AutoApprove`, `AcceptEdits`) decides instead.
- `effort`: `default` (the CLI's own for the model) or one of the levels
  the model supports (`supportedEffortLevels` in `initialize`'s `models`;
  the CLI's `--effort` at launch, `apply_flag_settings {effortLevel}` live,
  where null means back to the default). The CLI takes any string there
  silently, so corral checks the value.

Login comes from the `initialize` response's `account`, or, for `probe`,
from `claude auth status --json`.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ...pipeline.events import (
    AccountInfo,
    AgentDetails,
    Authenticated,
    AuthKind,
    AuthStatus,
    Capabilities,
    Capability,
    ConfigChoice,
    ConfigOption,
    EnvVarLogin,
    McpTransport,
    TerminalLogin,
    Unauthenticated,
    UnknownAuth,
)
from .._choices import choices_of, model_select, slash_commands

__all__ = [
    "CAPABILITIES",
    "EFFORT_LEVELS",
    "MODE_CHOICES",
    "auth_from_account",
    "auth_from_status",
    "details_from_initialize",
    "static_details",
]

CAPABILITIES = Capabilities(
    features=frozenset(
        {
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
            Capability.PLAN_USAGE,  # `plan_usage`, and PlanUsageUpdated after turns
            Capability.ROLLBACK,  # a fork at the turn
            Capability.ROLLBACK_FILES,  # `rewind_files` (file checkpointing on)
        }
    ),
    mcp_transports=(McpTransport.STDIO, McpTransport.HTTP, McpTransport.SSE),
)

MODE_CHOICES = (
    ConfigChoice(value="default", label="Ask", description="Ask before every tool that needs it"),
    ConfigChoice(value="plan", label="Plan", description="Plan only; change nothing"),
)
DEFAULT_MODEL = "default"
EFFORT_LEVELS = ("low", "medium", "high", "xhigh", "max")  # `claude --help`, 2.1.332
_CLOUD_PROVIDERS = frozenset({"bedrock", "vertex", "foundry"})


def static_details() -> AgentDetails:
    """What is known without starting the CLI."""
    return AgentDetails(capabilities=CAPABILITIES)


def _model_option(models: object, current: str) -> ConfigOption:
    choices = choices_of(models, "value", "displayName")
    if not any(choice.value == current for choice in choices):
        choices.append(ConfigChoice(value=current, label=current))
    return model_select(choices, current)


def mode_option(current: str) -> ConfigOption:
    return ConfigOption(
        id="mode",
        name="Permission mode",
        live=True,
        choices=MODE_CHOICES,
        category="mode",
        current=current,
    )


def _effort_levels(models: object, model: str) -> tuple[str, ...]:
    for entry in models if isinstance(models, list) else []:
        if isinstance(entry, dict) and entry.get("value") == model:
            levels = entry.get("supportedEffortLevels")
            if isinstance(levels, list):
                return tuple(level for level in levels if level in EFFORT_LEVELS)
    return EFFORT_LEVELS


def effort_option(current: str, levels: tuple[str, ...] = EFFORT_LEVELS) -> ConfigOption:
    default = ConfigChoice(value="default", label="Default", description="The model's own")
    choices = (default, *(ConfigChoice(value=level, label=level.title()) for level in levels))
    if not any(choice.value == current for choice in choices):
        choices += (ConfigChoice(value=current, label=current.title()),)
    return ConfigOption(
        id="effort",
        name="Effort",
        live=True,
        choices=choices,
        category="thought_level",
        current=current,
    )


def _argument_hint(command: dict[str, Any]) -> object:
    return command.get("argumentHint") or None  # an empty hint is none


def auth_from_account(account: object) -> AuthStatus:
    """Login as the `initialize` response's `account` shows it."""
    if not isinstance(account, dict):
        return UnknownAuth()
    provider = account.get("apiProvider")
    if isinstance(provider, str) and provider in _CLOUD_PROVIDERS:
        return Authenticated(kind=AuthKind.CLOUD_PROVIDER)
    email = account.get("email") if isinstance(account.get("email"), str) else None
    plan = account.get("subscriptionType")
    token = account.get("tokenSource")
    if isinstance(token, str) and token not in ("", "none"):
        info = AccountInfo(email=email, plan=plan if isinstance(plan, str) else None)
        return Authenticated(kind=AuthKind.SUBSCRIPTION, account=info)
    key = account.get("apiKeySource")
    if isinstance(key, str) and key not in ("", "none"):
        return Authenticated(kind=AuthKind.API_KEY)
    # The CLI answers `initialize` without any login; the first turn tells.
    return UnknownAuth()


def login_methods(executable: str) -> Unauthenticated:
    return Unauthenticated(
        login=(
            TerminalLogin(command=(executable, "auth", "login"), description="Log in to Claude"),
            EnvVarLogin(name="ANTHROPIC_API_KEY"),
        )
    )


def auth_from_status(status: Mapping[str, Any], executable: str) -> AuthStatus:
    """Login as `claude auth status --json` reports it."""
    if status.get("loggedIn") is not True:
        return login_methods(executable)
    method = str(status.get("authMethod") or "")
    provider = str(status.get("apiProvider") or "")
    if provider in _CLOUD_PROVIDERS:
        return Authenticated(kind=AuthKind.CLOUD_PROVIDER)
    email = status.get("email") if isinstance(status.get("email"), str) else None
    plan = status.get("subscriptionType")
    account = AccountInfo(email=email, plan=plan if isinstance(plan, str) else None)
    if method in ("api_key", "apiKey", "api_key_helper"):
        return Authenticated(kind=AuthKind.API_KEY)
    if method in ("claude.ai", "claude_ai", "oauth", "subscription"):
        return Authenticated(kind=AuthKind.SUBSCRIPTION, account=account)
    return Authenticated(kind=AuthKind.SUBSCRIPTION if email else AuthKind.API_KEY, account=account)


def details_from_initialize(
    payload: Mapping[str, Any], model: str, mode: str, effort: str = "default"
) -> AgentDetails:
    version = payload.get("claude_code_version")
    models = payload.get("models")
    return AgentDetails(
        capabilities=CAPABILITIES,
        auth=auth_from_account(payload.get("account")),
        version=version if isinstance(version, str) else None,
        config_options=(
            _model_option(models, model),
            mode_option(mode),
            effort_option(effort, _effort_levels(models, model)),
        ),
        commands=slash_commands(payload.get("commands"), _argument_hint),
    )
