"""Plan usage without processes: the Runtime's cache, and each wire's answer read.

The cache runs on a clock the test moves; the readers are plain functions
over the shapes Claude Code 2.1.332 (`get_usage`) and Codex 0.171.0
(`account/read`, `account/rateLimits/read`) answer. The Claude protocol is
fed frames and asked what it writes, without a CLI.
"""

from __future__ import annotations

import asyncio
from typing import Any

import orjson
import pytest
from corral.actors._usage_cache import PlanUsageCache
from corral.pipeline.driver import Emitted
from corral.pipeline.errors import CorralError, ErrorKind
from corral.pipeline.events import (
    Capability,
    Fields,
    PlanUsage,
    PlanUsageUpdated,
    SystemTime,
    UsageWindow,
)
from corral.sources.claude._protocol import ClaudeProtocol
from corral.sources.claude._usage import verdict
from corral.sources.codex._usage import plan_of, usage_from
from corral.sources.registry import default_catalog

from tests.support.schema import check
from tests.support.waiting import settled

NOW_NS = 1_796_190_000_123_456_789
USAGE = PlanUsage(windows=(UsageWindow(label="Week", used_percent=5),), fetched_at=SystemTime(1, 0))


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


class Reader:
    """Counts reads; answers `outcome` (a PlanUsage, or raises a CorralError)."""

    def __init__(self, outcome: PlanUsage | CorralError) -> None:
        self.outcome = outcome
        self.reads = 0
        self.release = asyncio.Event()
        self.release.set()

    async def __call__(self) -> PlanUsage:
        self.reads += 1
        await self.release.wait()
        if isinstance(self.outcome, CorralError):
            raise self.outcome
        return self.outcome


# ---- who can tell ---------------------------------------------------------------


def test_exactly_the_agents_that_can_tell_advertise_plan_usage() -> None:
    catalog = default_catalog()
    telling = {
        entry.id
        for entry in catalog.entries()
        if Capability.PLAN_USAGE in entry.details.capabilities.features
    }
    assert telling == {"claude", "codex"}
    assert {entry.id for entry in catalog.entries() if entry.plan_usage is not None} == telling


# ---- the cache -----------------------------------------------------------------


async def test_an_answer_is_kept_for_sixty_seconds_then_read_again() -> None:
    clock, read = Clock(), Reader(USAGE)
    cache = PlanUsageCache(clock=clock)
    assert await cache.get("codex", read) is USAGE
    clock.now += 59.9
    assert await cache.get("codex", read) is USAGE
    assert read.reads == 1
    clock.now += 0.1
    await cache.get("codex", read)
    assert read.reads == 2


async def test_answers_are_kept_per_key() -> None:
    cache, read = PlanUsageCache(clock=Clock()), Reader(USAGE)
    await cache.get(("codex", "/a/codex"), read)
    await cache.get(("codex", "/b/codex"), read)
    assert read.reads == 2


async def test_no_plan_is_kept_but_a_missing_login_is_asked_again() -> None:
    cache = PlanUsageCache(clock=Clock())
    unsupported = Reader(CorralError(ErrorKind.UNSUPPORTED_FEATURE, "api key"))
    logged_out = Reader(CorralError(ErrorKind.AUTH_REQUIRED, "log in"))
    for _ in range(2):
        with pytest.raises(CorralError):
            await cache.get("claude", unsupported)
        with pytest.raises(CorralError):
            await cache.get("codex", logged_out)
    assert (unsupported.reads, logged_out.reads) == (1, 2)


async def test_concurrent_calls_share_one_read() -> None:
    cache, read = PlanUsageCache(clock=Clock()), Reader(USAGE)
    read.release.clear()
    async with asyncio.TaskGroup() as tasks:
        calls = [tasks.create_task(cache.get("codex", read)) for _ in range(3)]
        await settled()  # every call is waiting on the one read
        read.release.set()
    assert [call.result() for call in calls] == [USAGE] * 3
    assert read.reads == 1


async def test_a_cancelled_reader_hands_the_read_to_a_waiter() -> None:
    cache, read = PlanUsageCache(clock=Clock()), Reader(USAGE)
    read.release.clear()
    async with asyncio.TaskGroup() as tasks:
        first = tasks.create_task(cache.get("codex", read))
        await settled()  # the first call reads
        second = tasks.create_task(cache.get("codex", read))
        await settled()  # the second waits on that read
        first.cancel()
        await settled()
        read.release.set()
    assert first.cancelled()
    assert second.result() is USAGE
    assert read.reads == 2


# ---- Claude: get_usage ---------------------------------------------------------

PLAN_ACCOUNT = {"subscriptionType": "Claude Max", "apiProvider": "firstParty"}
API_KEY_ACCOUNT = {"tokenSource": "none", "apiKeySource": "ANTHROPIC_API_KEY"}
LOGGED_OUT = {"tokenSource": "none", "apiProvider": "firstParty"}
NO_LIMITS = {"subscription_type": None, "rate_limits_available": False, "rate_limits": None}


def _success(answer: dict[str, Any]) -> dict[str, Any]:
    return {"subtype": "success", "request_id": "r", "response": answer}


def test_claude_windows_keep_those_with_a_utilization() -> None:
    answer = {
        "subscription_type": "max",
        "rate_limits_available": True,
        "rate_limits": {
            "five_hour": {"utilization": 99.6, "resets_at": "2026-12-02T10:00:00Z"},
            "seven_day": {"utilization": None, "resets_at": None},
            "seven_day_opus": {"utilization": 300, "resets_at": "not a time"},
            "model_scoped": [{"display_name": "Fable", "utilization": 0, "resets_at": None}],
            "extra_usage": {"is_enabled": True, "utilization": 12, "monthly_limit": 50},
        },
    }
    usage = verdict(PLAN_ACCOUNT, _success(answer), NOW_NS)
    check("line-protocol.schema.json", "PlanUsage", usage.to_wire())
    assert usage.plan == "max"
    assert usage.fetched_at == SystemTime.from_ns(NOW_NS)
    assert [(w.label, w.used_percent) for w in usage.windows] == [
        ("Session", 100),
        ("Week (Opus)", 255),
        ("Week (Fable)", 0),
        ("Extra usage", 12),
    ]
    assert usage.windows[0].resets_at == SystemTime(1796205600, 0)
    assert usage.windows[1].resets_at is None


def test_claude_limits_that_could_not_be_read_are_an_answer_without_windows() -> None:
    answer = {"subscription_type": "pro", "rate_limits_available": True, "rate_limits": None}
    usage = verdict(PLAN_ACCOUNT, _success(answer), NOW_NS)
    assert (usage.plan, usage.windows) == ("pro", ())


@pytest.mark.parametrize(
    ("account", "kind"),
    [
        (LOGGED_OUT, ErrorKind.AUTH_REQUIRED),
        (API_KEY_ACCOUNT, ErrorKind.UNSUPPORTED_FEATURE),
        ({"tokenSource": "ANTHROPIC_AUTH_TOKEN"}, ErrorKind.UNSUPPORTED_FEATURE),
        ({"apiProvider": "bedrock"}, ErrorKind.UNSUPPORTED_FEATURE),
        (None, ErrorKind.UNSUPPORTED_FEATURE),  # no account said: no proof of a missing login
    ],
)
def test_claude_without_plan_limits_is_refused_by_login(account: object, kind: ErrorKind) -> None:
    with pytest.raises(CorralError) as refused:
        verdict(account, _success(NO_LIMITS), NOW_NS)
    assert refused.value.kind is kind


def test_claude_refusing_get_usage_is_unsupported_only_when_it_does_not_know_it() -> None:
    old = {"subtype": "error", "error": "Unsupported control request subtype: get_usage"}
    with pytest.raises(CorralError) as refused:
        verdict(PLAN_ACCOUNT, old, NOW_NS)
    assert refused.value.kind is ErrorKind.UNSUPPORTED_FEATURE
    with pytest.raises(CorralError) as failed:
        verdict(PLAN_ACCOUNT, {"subtype": "error", "error": "usage endpoint down"}, NOW_NS)
    assert failed.value.kind is ErrorKind.PROTOCOL_FAILED


def _initialized(account: dict[str, Any]) -> ClaudeProtocol:
    protocol = ClaudeProtocol(wall_clock_ns=lambda: NOW_NS)
    protocol.receive_line(orjson.dumps({"type": "control_response", "response": {}}))
    protocol.initialized = {"account": account}
    return protocol


def _result(protocol: ClaudeProtocol) -> list[dict[str, Any]]:
    """Run one turn to its `result`; the control requests the protocol then writes."""
    protocol.send(_start())
    protocol.receive({"type": "result", "subtype": "success", "is_error": False, "result": "ok"})
    written = [orjson.loads(line) for line in protocol.data_to_send().splitlines()]
    return [frame for frame in written if frame.get("type") == "control_request"]


def _start() -> Any:
    from corral.pipeline.driver import StartTurn

    return StartTurn(turn_id="t1", prompt_id="p1", text="hi")


def test_a_claude_session_on_a_plan_reads_its_usage_after_each_turn() -> None:
    protocol = _initialized(PLAN_ACCOUNT)
    [asked] = _result(protocol)
    assert asked["request"] == {"subtype": "get_usage", "skip_behaviors": True, "detached": True}
    answer = {"subscription_type": "max", "rate_limits_available": True, "rate_limits": {
        "five_hour": {"utilization": 20, "resets_at": None}}}  # fmt: skip
    events = protocol.receive(
        {"type": "control_response", "response": {**_success(answer), "request_id": asked["request_id"]}}
    )  # fmt: skip
    assert events == [
        Emitted(
            kind=PlanUsageUpdated(
                PlanUsage(
                    plan="max",
                    windows=(UsageWindow(label="Session", used_percent=20),),
                    fetched_at=SystemTime.from_ns(NOW_NS),
                )
            )
        )
    ]
    assert len(_result(protocol)) == 1  # and again after the next turn


def test_a_claude_that_refuses_get_usage_is_not_asked_again() -> None:
    protocol = _initialized(PLAN_ACCOUNT)
    [asked] = _result(protocol)
    error = "Unsupported control request subtype: get_usage"
    refusal = {"subtype": "error", "request_id": asked["request_id"], "error": error}
    assert protocol.receive({"type": "control_response", "response": refusal}) == []
    assert _result(protocol) == []


def test_a_claude_session_without_a_plan_reads_no_usage() -> None:
    assert _result(_initialized(API_KEY_ACCOUNT)) == []


def test_a_usage_answer_without_a_window_is_no_event() -> None:
    protocol = _initialized(PLAN_ACCOUNT)
    [asked] = _result(protocol)
    response = {**_success(NO_LIMITS), "request_id": asked["request_id"]}
    assert protocol.receive({"type": "control_response", "response": response}) == []


# ---- Codex: account/read and account/rateLimits/read ---------------------------


@pytest.mark.parametrize(
    ("account_read", "kind"),
    [
        ({"account": None, "requiresOpenaiAuth": True}, ErrorKind.AUTH_REQUIRED),
        ({"account": None, "requiresOpenaiAuth": False}, ErrorKind.UNSUPPORTED_FEATURE),
        ({"account": {"type": "apiKey"}, "requiresOpenaiAuth": True}, ErrorKind.UNSUPPORTED_FEATURE),
        ({"account": {"type": "amazonBedrock"}, "requiresOpenaiAuth": False}, ErrorKind.UNSUPPORTED_FEATURE),
    ],
)  # fmt: skip
def test_codex_login_decides_before_the_read(account_read: dict[str, Any], kind: ErrorKind) -> None:
    with pytest.raises(CorralError) as refused:
        plan_of(Fields(account_read, "account/read"))
    assert refused.value.kind is kind


def test_codex_chatgpt_login_names_its_plan() -> None:
    account = {"account": {"type": "chatgpt", "email": None, "planType": "pro"}}
    assert plan_of(Fields({**account, "requiresOpenaiAuth": True})) == "pro"


def test_codex_rate_limits_without_a_window_are_an_answer_without_windows() -> None:
    result = {"rateLimits": {"limitId": "codex", "primary": None, "secondary": None}}
    usage = usage_from(Fields(result), "plus", NOW_NS)
    check("line-protocol.schema.json", "PlanUsage", usage.to_wire())
    assert (usage.plan, usage.windows) == ("plus", ())


def test_codex_bucket_mirrored_by_rate_limits_is_not_counted_twice() -> None:
    main = {"limitId": None, "primary": {"usedPercent": 4, "windowDurationMins": 300}}
    result = {"rateLimits": main, "rateLimitsByLimitId": {"codex": main}}
    usage = usage_from(Fields(result), None, NOW_NS)
    assert [(w.label, w.used_percent) for w in usage.windows] == [("Session", 4)]


def test_codex_windows_are_labelled_by_their_length() -> None:
    result = {
        "rateLimits": {
            "limitId": "codex",
            "planType": "team",
            "primary": {"usedPercent": 120, "windowDurationMins": 60, "resetsAt": None},
            "secondary": {"usedPercent": 3, "windowDurationMins": 10080, "resetsAt": 5},
        },
        "rateLimitsByLimitId": {
            "codex": {"limitId": "codex", "primary": {"usedPercent": 120}},
            "other": {"limitId": "other", "secondary": {"usedPercent": 9, "windowDurationMins": 2880}},
        },
    }  # fmt: skip
    usage = usage_from(Fields(result), "plus", NOW_NS)
    assert usage.plan == "team"
    assert [(w.label, w.used_percent) for w in usage.windows] == [
        ("1h", 120),
        ("Week", 3),
        ("2d (other)", 9),
    ]
