"""Codex's plan usage: `account/rateLimits/read` on a short-lived `codex app-server`.

What Codex offers (0.171.0; `codex app-server generate-json-schema`):
`account/read` says how Codex is logged in (`account`: `apiKey`,
`chatgpt` with its `planType`, `amazonBedrock`, `gcp`, or null, with
`requiresOpenaiAuth`); `account/rateLimits/read` (params
`{excludeResetCreditDetails}`) answers `rateLimits`, a `RateLimitSnapshot`
(`primary`, `secondary`: `{usedPercent, windowDurationMins, resetsAt}`,
`planType`, `limitId`, `limitName`), and `rateLimitsByLimitId`, the same
per metered bucket. Without a ChatGPT login Codex refuses the read with
-32600 ("codex account authentication required to read rate limits", or
"chatgpt authentication required ..." under an API key), so the login
decides before the read is sent:

- no account and `requiresOpenaiAuth` → `AuthRequired` (`codex login`);
- no account and no OpenAI auth needed (a configured model provider), an
  API key, Bedrock or Vertex → `UnsupportedFeature`: no plan to read;
- `chatgpt` → the read; its `rateLimits` windows are labelled as in a
  session (`_common.plan_usage`: "Session" for 5 h, "Week" for 7 days), the
  other buckets' windows carry their name ("Week (<limitName>)"). A read
  refused for authentication (an expired login) is `AuthRequired`; any
  other refusal `ProtocolFailed`.

The conversation is the session's handshake head (`initialize`,
`initialized`, `account/read`) then the read, on `ask_briefly`'s process;
notifications meanwhile are read and dropped.
"""

from __future__ import annotations

import asyncio
import os
import time
from collections.abc import Awaitable, Callable, Mapping

import attrs

from ...pipeline.channels import Channel
from ...pipeline.errors import CorralError, ErrorKind
from ...pipeline.events import AgentInstallation, Fields, PlanUsage, ShapeError, SystemTime
from .._jsonrpc import Incoming, JsonRpcPeer, RpcError
from .._process import AgentProcess
from .._usage import ask_briefly
from ._common import CAMEL, limit_windows, plan_usage
from ._handshake import CLIENT_NAME
from ._home import ensure_home

__all__ = ["plan_of", "read_plan_usage", "usage_from"]

DEADLINE = 30.0  # seconds for start, handshake and the read (it goes over the network)


def _unsupported(why: str) -> CorralError:
    return CorralError(
        ErrorKind.UNSUPPORTED_FEATURE, f"{why}: there is no plan quota", feature="PlanUsage"
    )


def plan_of(account_read: Fields) -> str | None:
    """The ChatGPT plan whose limits can be read; raises AuthRequired or UnsupportedFeature."""
    account = account_read.opt_obj("account")
    if account is None:
        if account_read.flag("requiresOpenaiAuth", False):
            raise CorralError(ErrorKind.AUTH_REQUIRED, "Codex is not logged in (codex login)")
        raise _unsupported("Codex runs on a configured model provider, not a ChatGPT login")
    kind = account.string("type")
    if kind != "chatgpt":
        raise _unsupported(f"Codex is logged in with {kind}, not ChatGPT")
    return account.opt_string("planType")


def _snapshot(raw: Fields, plan: str | None, now_ns: int) -> PlanUsage | None:
    primary, secondary = limit_windows(raw, CAMEL)
    return plan_usage(
        primary=primary,
        secondary=secondary,
        plan=raw.opt_string("planType") or plan,
        now_ns=now_ns,
    )


def usage_from(result: Fields, plan: str | None, now_ns: int) -> PlanUsage:
    """`account/rateLimits/read`'s result as PlanUsage (no windows when Codex gave none)."""
    main = result.obj("rateLimits")
    usage = _snapshot(main, plan, now_ns)
    windows = list(usage.windows) if usage is not None else []
    buckets = result.opt_obj("rateLimitsByLimitId")
    for key, raw in buckets.raw.items() if buckets is not None else ():
        bucket = Fields(raw, f"rateLimitsByLimitId.{key}")
        if key == main.opt_string("limitId") or raw == main.raw:
            continue  # the bucket `rateLimits` mirrors
        extra = _snapshot(bucket, plan, now_ns)
        name = bucket.opt_string("limitName") or key
        for window in extra.windows if extra is not None else ():
            windows.append(attrs.evolve(window, label=f"{window.label} ({name})"))
    return PlanUsage(
        windows=tuple(windows),
        fetched_at=SystemTime.from_ns(now_ns),
        plan=usage.plan if usage is not None else (main.opt_string("planType") or plan),
    )


def _read_refused(error: RpcError) -> CorralError:
    if "authentication required" in error.message.lower():
        return CorralError(
            ErrorKind.AUTH_REQUIRED, f"Codex needs a ChatGPT login again: {error.message}"
        )
    return CorralError(ErrorKind.PROTOCOL_FAILED, f"Codex refused its rate limits: {error}")


async def _drain(incoming: Channel[Incoming]) -> None:
    async for _ in incoming:
        pass  # notifications (config warnings, status) say nothing about the quota


async def _ask(peer: JsonRpcPeer, now_ns: Callable[[], int]) -> PlanUsage:
    await peer.request(
        "initialize",
        {"clientInfo": {"name": CLIENT_NAME, "title": "corral", "version": "plan-usage"}},
    )
    await peer.notify("initialized")
    plan = plan_of(Fields(await peer.request("account/read", {}), "account/read"))
    try:
        result = await peer.request("account/rateLimits/read", {"excludeResetCreditDetails": True})
    except RpcError as error:
        raise _read_refused(error) from None
    return usage_from(Fields(result, "account/rateLimits/read"), plan, now_ns())


def _conversation(
    now_ns: Callable[[], int],
) -> Callable[[AgentProcess, asyncio.TaskGroup], Awaitable[PlanUsage]]:
    async def converse(process: AgentProcess, tasks: asyncio.TaskGroup) -> PlanUsage:
        incoming: Channel[Incoming] = Channel(64, name="codex-plan-usage")
        peer = JsonRpcPeer(process)
        tasks.create_task(peer.pump(incoming), name="codex-plan-usage-pump")
        tasks.create_task(_drain(incoming), name="codex-plan-usage-drain")
        try:
            return await _ask(peer, now_ns)
        except (ShapeError, RpcError) as error:
            raise CorralError(
                ErrorKind.PROTOCOL_FAILED, f"Codex answered unexpectedly: {error}"
            ) from None

    return converse


async def read_plan_usage(
    installation: AgentInstallation,
    environ: Mapping[str, str],
    *,
    wall_clock_ns: Callable[[], int] = time.time_ns,
) -> PlanUsage:
    """Ask a short-lived `codex app-server` for its plan usage (see the module docstring)."""
    env = dict(environ)
    await asyncio.to_thread(ensure_home, env)  # Codex refuses a CODEX_HOME that is missing
    return await ask_briefly(
        [installation.executable_path, "app-server"],
        env=env,
        converse=_conversation(wall_clock_ns),
        agent="Codex",
        deadline=DEADLINE,
        cwd=env.get("HOME") or os.getcwd(),
    )
