"""Sessions over the real line protocol: death, big turns, generate, configure, steer."""

from __future__ import annotations

from pathlib import Path
from typing import Any

ASK = {
    "Emit": {
        "RequestOpened": {
            "Permission": {
                "id": "r1",
                "tool": {
                    "id": "tool1",
                    "kind": "Execute",
                    "title": "rm -rf build",
                    "status": "Pending",
                    "input": {"Command": {"command": "rm -rf build", "cwd": None}},
                    "diffs": [],
                    "locations": [],
                },
                "options": ["AllowOnce", "DenyOnce"],
            }
        }
    }
}


async def open_session(serve: Any, tmp_path: Path, **extra: Any) -> str:
    info = await serve.ok({"cmd": "open", "agent": "mock", "dir": str(tmp_path), **extra})
    return str(info["id"])


async def test_a_twenty_thousand_event_turn_arrives_whole_and_in_order(
    serve_mock: Any, tmp_path: Path
) -> None:
    # Every delta distinct, so the texts themselves (not only sequence numbers) show the order.
    sent = [f"delta {n};" for n in range(20_000)]
    steps: list[object] = [{"Emit": {"TextDelta": {"message_id": "m1", "text": t}}} for t in sent]
    steps.append({"End": {"Completed": {"source": "Protocol"}}})
    serve = await serve_mock({"turns": [steps]})
    sid = await open_session(serve, tmp_path)
    await serve.ok({"cmd": "prompt", "session": sid, "text": "go"})
    await serve.wait_event(sid, "TurnEnded", timeout=120)
    events = serve.events(sid)
    assert [e["sequence"] for e in events] == list(range(1, len(events) + 1))
    texts = [e["kind"]["TextDelta"]["text"] for e in events if "TextDelta" in e["kind"]]
    assert texts == sent
    assert await serve.finish() == 0


async def test_the_agent_dying_mid_turn_fails_the_turn_then_errors_and_closes_the_session(
    serve_mock: Any, tmp_path: Path
) -> None:
    script = {"turns": [[{"Emit": {"TextDelta": {"message_id": "m", "text": "bye"}}}, "Die"]]}
    serve = await serve_mock(script)
    sid = await open_session(serve, tmp_path)
    await serve.ok({"cmd": "prompt", "session": sid, "text": "go"})
    closed = await serve.wait_for(lambda line: line.get("closed") == sid)
    error_at = next(i for i, line in enumerate(serve.lines) if line.get("session") == sid)
    assert serve.lines[error_at]["error"] == {
        "kind": "ProcessExited",
        "message": "Mock agent exited (status 9)",
        "status": "9",
        "stderr": "mock died",
    }
    assert serve.lines.index(closed) > error_at
    ended = [e["kind"]["TurnEnded"] for e in serve.events(sid) if "TurnEnded" in e["kind"]]
    assert "Failed" in ended[0]["stop"]
    later = await serve.request({"cmd": "prompt", "session": sid, "text": "again"})
    assert later["error"]["kind"] == "SessionClosed"
    assert await serve.finish() == 0
    assert [line.get("closed") for line in serve.lines].count(sid) == 1


async def test_a_permission_is_answered_by_the_app_over_the_wire(
    serve_mock: Any, tmp_path: Path
) -> None:
    script = {"turns": [[ASK, "AwaitAnswer", {"End": {"Completed": {"source": "Protocol"}}}]]}
    serve = await serve_mock(script)
    sid = await open_session(serve, tmp_path)
    await serve.ok({"cmd": "prompt", "session": sid, "text": "clean up"})
    await serve.wait_event(sid, "RequestOpened")
    wrong = await serve.request(
        {"cmd": "answer", "session": sid, "request": "r1", "answer": {"Permission": "AllowAlways"}}
    )
    assert wrong["error"]["kind"] == "InvalidRequest"
    await serve.ok(
        {"cmd": "answer", "session": sid, "request": "r1", "answer": {"Permission": "DenyOnce"}}
    )
    closed = await serve.wait_event(sid, "RequestClosed")
    assert closed["extensions"]["corral/decision"]["decision"] == "deny_once"
    await serve.wait_event(sid, "TurnEnded")
    assert await serve.finish() == 0


async def test_auto_approve_decides_without_showing_the_request(
    serve_mock: Any, tmp_path: Path
) -> None:
    script = {"turns": [[ASK, "AwaitAnswer", {"End": {"Completed": {"source": "Protocol"}}}]]}
    serve = await serve_mock(script)
    sid = await open_session(serve, tmp_path, permission_mode="AutoApprove")
    await serve.ok({"cmd": "prompt", "session": sid, "text": "clean up"})
    await serve.wait_event(sid, "TurnEnded")
    assert "RequestOpened" not in serve.kinds(sid)
    assert await serve.finish() == 0


async def test_generate_answers_with_the_turns_text_and_closes_the_session(
    serve_mock: Any, tmp_path: Path
) -> None:
    serve = await serve_mock({})
    reply = await serve.ok(
        {"cmd": "generate", "agent": "mock", "dir": str(tmp_path), "prompt": "ping"}
    )
    assert reply == "You said: ping"  # the text; more in test_generate.py
    assert await serve.finish() == 0


async def test_configure_confirms_with_session_updated(serve_mock: Any, tmp_path: Path) -> None:
    option = {
        "id": "model",
        "name": "Model",
        "kind": {
            "Select": {"choices": [{"value": "a", "label": "A"}, {"value": "b", "label": "B"}]}
        },
        "current": "a",
        "live": True,
    }
    serve = await serve_mock({"options": [option]})
    sid = await open_session(serve, tmp_path)
    bad = await serve.request({"cmd": "configure", "session": sid, "option": "model", "value": "z"})
    assert bad["error"]["kind"] == "InvalidConfiguration"
    # The protocol's client expects `null`; the confirmation is the event.
    configure = {"cmd": "configure", "session": sid, "option": "model", "value": "b"}
    assert await serve.ok(configure) is None
    update = await serve.wait_event(sid, "SessionUpdated")
    assert update["kind"]["SessionUpdated"]["configuration"]["options"]["model"] == "b"
    assert await serve.finish() == 0


async def test_a_prompt_to_a_steering_agent_is_steered(serve_mock: Any, tmp_path: Path) -> None:
    script = {
        "steer": True,
        "turns": [[{"Sleep": 60_000}, {"End": {"Completed": {"source": "Protocol"}}}]],
    }
    serve = await serve_mock(script)
    sid = await open_session(serve, tmp_path)
    first = await serve.ok({"cmd": "prompt", "session": sid, "text": "long job"})
    steered = await serve.ok({"cmd": "prompt", "session": sid, "text": "also this"})
    assert steered["kind"] == {"Steered": {"turn_id": first["kind"]["Started"]["turn_id"]}}
    await serve.ok({"cmd": "cancel", "session": sid})
    ended = await serve.wait_event(sid, "TurnEnded")
    assert ended["kind"]["TurnEnded"]["stop"] == "Cancelled"
    assert await serve.finish() == 0


async def test_close_reports_ok_then_closed_and_info_is_session_closed_after(
    serve_mock: Any, tmp_path: Path
) -> None:
    serve = await serve_mock({})
    sid = await open_session(serve, tmp_path)
    status = await serve.ok({"cmd": "info", "session": sid})
    assert status["status"] == "Idle"
    await serve.ok({"cmd": "close", "session": sid})
    await serve.wait_for(lambda line: line.get("closed") == sid)
    reply = await serve.request({"cmd": "info", "session": sid})
    assert reply["error"]["kind"] == "SessionClosed"
    assert await serve.finish() == 0


async def test_an_open_in_a_missing_directory_is_invalid_request(
    serve_mock: Any, tmp_path: Path
) -> None:
    serve = await serve_mock({})
    reply = await serve.request({"cmd": "open", "agent": "mock", "dir": str(tmp_path / "nope")})
    assert reply["error"]["kind"] == "InvalidRequest"
    unknown = await serve.request({"cmd": "open", "agent": "nobody", "dir": str(tmp_path)})
    assert unknown["error"]["kind"] == "NotInstalled"
    assert "known agents: mock" in unknown["error"]["message"]
    assert unknown["error"]["searched"] and unknown["error"]["install_hint"]
    assert await serve.finish() == 0
