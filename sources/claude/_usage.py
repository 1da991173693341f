"""Claude Code's plan usage: the control protocol's `get_usage` request.

What the CLI offers (Claude Code 2.1.332, read from the schema of its
control protocol that the CLI carries, and checked against the CLI here):
a `control_request` of subtype `get_usage` (marked experimental, "the
response shape may change") answers the data of `/usage`:

- `subscription_type`: the claude.ai plan (`pro`, `max`, `team`,
  `enterprise`), null for API-key and cloud-provider sessions;
- `rate_limits_available`: false when plan limits do not apply (an API
  key, Bedrock, Vertex, an OAuth token without the profile scope);
- `rate_limits`: windows `five_hour`, `seven_day`, `seven_day_opus`,
  `seven_day_sonnet`, `seven_day_oauth_apps`, each `{utilization: 0-100 |
  null, resets_at: ISO 8601 | null}` or null, per-model weekly windows
  under `model_scoped`, and `extra_usage`; null when the claude.ai usage
  endpoint could not be read;
- `skip_behaviors: true` skips a scan of seven days of local transcripts
  that a usage meter does not need; with it, `detached: true` lets later
  messages overtake the answer (a CLI that does not know it waits).

The stream's other source, `rate_limit_event` (from the
`anthropic-ratelimit-unified-*` headers), comes only mid-turn, only after
a model response carried those headers, with its per-window detail marked
internal: it cannot answer `plan_usage` between sessions, so it stays a
quiet frame.

What corral does with it:
- `read_plan_usage` (the catalog's `plan_usage`): a short-lived `claude -p`
  on the session's stream-json wire, plus `--no-session-persistence`;
  `initialize` and `get_usage {skip_behaviors}` are written at once and
  both answers awaited, under one deadline; then the process group stops.
- `verdict`: limits available → `PlanUsage` (`plan` is the
  `subscription_type`; no windows when the CLI could not read them).
  Not available: logged out (the `initialize` account names no token
  source, no API key and no plan, on the first-party API) is
  `AuthRequired`; anything else (API key, auth token, cloud provider, an
  OAuth token without the profile scope) is `UnsupportedFeature`, as is a
  CLI that answers "Unsupported control request subtype".
- In a live session on a claude.ai plan (`has_plan`: the `initialize`
  account names a `subscriptionType`), the protocol asks `get_usage
  {skip_behaviors, detached}` after each turn's `result`; the answer
  becomes `PlanUsageUpdated` (`usage_update`).

Windows: `five_hour` → "Session", `seven_day` → "Week", the others "Week
(Opus)", "Week (Sonnet)", "Week (OAuth apps)", "Week (<model bucket>)",
and an enabled `extra_usage` with a utilization "Extra usage". A window
whose utilization is null is left out; percentages are rounded into 0..255.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from datetime import UTC, datetime
from typing import Any

import orjson

from ...pipeline.errors import AgentGone, CorralError, ErrorKind
from ...pipeline.events import AgentInstallation, PlanUsage, SystemTime, UsageWindow
from ...pipeline.framing import LineSplitter, Oversized
from .._process import AgentProcess
from .._usage import ask_briefly, used_percent
from ._encode import control_request, encode
from ._launch import WIRE_FLAGS

__all__ = [
    "USAGE_REQUEST",
    "has_plan",
    "read_plan_usage",
    "usage_from",
    "usage_update",
    "verdict",
]

USAGE_REQUEST: dict[str, Any] = {"subtype": "get_usage", "skip_behaviors": True}
DEADLINE = 30.0  # seconds for start, both answers (the plan's limits come over the network)
_WINDOWS = (
    ("five_hour", "Session"),
    ("seven_day", "Week"),
    ("seven_day_opus", "Week (Opus)"),
    ("seven_day_sonnet", "Week (Sonnet)"),
    ("seven_day_oauth_apps", "Week (OAuth apps)"),
)
_INIT_ID, _USAGE_ID = "corral-usage-init", "corral-usage"
_UNSUPPORTED = "Unsupported control request subtype"


def has_plan(account: object) -> bool:
    """Whether the `initialize` account is on a claude.ai plan."""
    return isinstance(account, Mapping) and bool(account.get("subscriptionType"))


def _logged_out(account: object) -> bool:
    if not isinstance(account, Mapping):
        return False  # nothing said: not a proof of a missing login
    token = account.get("tokenSource")
    if token not in (None, "", "none") or account.get("apiKeySource"):
        return False
    return not account.get("subscriptionType") and account.get("apiProvider") in (
        None,
        "firstParty",
    )


def _time(raw: object) -> SystemTime | None:
    if not isinstance(raw, str) or not raw:
        return None
    try:
        moment = datetime.fromisoformat(raw)
    except ValueError:
        return None
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    seconds = int(moment.timestamp())
    return SystemTime(seconds, moment.microsecond * 1000) if seconds >= 0 else None


def _window(label: str, raw: object) -> UsageWindow | None:
    if not isinstance(raw, Mapping):
        return None
    utilization = raw.get("utilization")
    if not isinstance(utilization, int | float) or isinstance(utilization, bool):
        return None
    return UsageWindow(
        label=label, used_percent=used_percent(utilization), resets_at=_time(raw.get("resets_at"))
    )


def _windows(limits: Mapping[str, Any]) -> list[UsageWindow]:
    found = [_window(label, limits.get(key)) for key, label in _WINDOWS]
    scoped = limits.get("model_scoped")
    for bucket in scoped if isinstance(scoped, list) else []:
        if isinstance(bucket, Mapping) and isinstance(bucket.get("display_name"), str):
            found.append(_window(f"Week ({bucket['display_name']})", bucket))
    extra = limits.get("extra_usage")
    if isinstance(extra, Mapping) and extra.get("is_enabled") is True:
        found.append(_window("Extra usage", extra))
    return [window for window in found if window is not None]


def usage_from(answer: Mapping[str, Any], now_ns: int) -> PlanUsage | None:
    """A `get_usage` answer as PlanUsage; None when plan limits do not apply."""
    if answer.get("rate_limits_available") is not True:
        return None
    limits = answer.get("rate_limits")
    plan = answer.get("subscription_type")
    return PlanUsage(
        windows=tuple(_windows(limits)) if isinstance(limits, Mapping) else (),
        fetched_at=SystemTime.from_ns(now_ns),
        plan=plan if isinstance(plan, str) and plan else None,
    )


def usage_update(response: Mapping[str, Any], now_ns: int) -> PlanUsage | None:
    """A live session's `get_usage` control response: the usage worth an event, or None."""
    payload = response.get("response")
    if response.get("subtype") != "success" or not isinstance(payload, Mapping):
        return None
    usage = usage_from(payload, now_ns)
    return usage if usage is not None and usage.windows else None


def verdict(account: object, response: Mapping[str, Any], now_ns: int) -> PlanUsage:
    """`plan_usage`'s answer from the `initialize` account and the `get_usage` response."""
    if response.get("subtype") != "success":
        reason = str(response.get("error") or "no reason given")
        if _UNSUPPORTED in reason:
            raise CorralError(
                ErrorKind.UNSUPPORTED_FEATURE,
                f"this Claude Code cannot tell its plan usage ({reason})",
                feature="PlanUsage",
            )
        raise CorralError(ErrorKind.PROTOCOL_FAILED, f"Claude Code refused get_usage: {reason}")
    payload = response.get("response")
    usage = usage_from(payload, now_ns) if isinstance(payload, Mapping) else None
    if usage is not None:
        return usage
    if _logged_out(account):
        raise CorralError(
            ErrorKind.AUTH_REQUIRED, "Claude Code is not logged in (claude auth login)"
        )
    raise CorralError(
        ErrorKind.UNSUPPORTED_FEATURE,
        "Claude Code runs without a claude.ai plan here (API key or cloud provider): "
        "there is no plan quota",
        feature="PlanUsage",
    )


def _answers(lines: list[bytes | Oversized], found: dict[str, Mapping[str, Any]]) -> None:
    for line in lines:
        if isinstance(line, Oversized) or not line.strip():
            continue
        try:
            frame = orjson.loads(line)
        except orjson.JSONDecodeError:
            continue  # not ours to report: this process lives for two answers
        if not isinstance(frame, dict) or frame.get("type") != "control_response":
            continue
        response = frame.get("response")
        if isinstance(response, dict):
            request_id = response.get("request_id")
            if request_id in (_INIT_ID, _USAGE_ID):
                found[request_id] = response


async def _converse(process: AgentProcess, _tasks: object) -> dict[str, Mapping[str, Any]]:
    await process.write(
        encode(control_request(_INIT_ID, {"subtype": "initialize"}))
        + encode(control_request(_USAGE_ID, USAGE_REQUEST))
    )
    lines = LineSplitter()
    found: dict[str, Mapping[str, Any]] = {}
    while len(found) < 2:
        chunk = await process.read()
        if not chunk:
            raise AgentGone("Claude Code closed its output")
        _answers(lines.feed(chunk), found)
    return found


async def read_plan_usage(
    installation: AgentInstallation,
    environ: Mapping[str, str],
    *,
    wall_clock_ns: Callable[[], int] = time.time_ns,
) -> PlanUsage:
    """Ask a short-lived `claude -p` for its plan usage (see the module docstring)."""
    found = await ask_briefly(
        [installation.executable_path, *WIRE_FLAGS, "--no-session-persistence"],
        env=dict(environ),
        converse=_converse,
        agent="Claude Code",
        deadline=DEADLINE,
    )
    init = found[_INIT_ID].get("response")
    account = init.get("account") if isinstance(init, Mapping) else None
    return verdict(account, found[_USAGE_ID], wall_clock_ns())
