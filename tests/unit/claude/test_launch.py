"""How `claude` is launched: flags, sessions, settings, MCP servers, env."""

from __future__ import annotations

import json
from collections.abc import Iterator

import attrs
import pytest
from corral.pipeline.commands import McpServer
from corral.pipeline.driver import LaunchSpec
from corral.pipeline.errors import CorralError, ErrorKind
from corral.sources.claude._launch import (
    WIRE_FLAGS,
    fork_for,
    launch_for,
    mcp_config,
    restart_for,
)


def ids() -> Iterator[str]:
    n = 0
    while True:
        n += 1
        yield f"00000000-0000-4000-8000-{n:012d}"


def launch(**fields: object):  # type: ignore[no-untyped-def]
    spec = LaunchSpec(session_id="s1", executable="/bin/claude", dir="/work", **fields)  # type: ignore[arg-type]
    minted = ids()
    return spec, launch_for("/bin/claude", spec, {"HOME": "/h"}, lambda: next(minted))


def test_wire_flags_ask_through_stdio_and_never_bypass() -> None:
    _, plan = launch()
    exact = (
        "-p --output-format stream-json --input-format stream-json --verbose "
        "--include-partial-messages --permission-prompt-tool stdio --replay-user-messages"
    )
    assert plan.argv[: 1 + len(WIRE_FLAGS)] == ("/bin/claude", *exact.split(" "))
    joined = " ".join(plan.argv)
    assert "bypass" not in joined and "dangerously" not in joined and "--allowedTools" not in joined


def test_new_session_mints_its_id_so_the_token_exists_at_open() -> None:
    _, plan = launch()
    assert plan.argv[-2:] == ("--session-id", "00000000-0000-4000-8000-000000000001")
    assert plan.session_id == "00000000-0000-4000-8000-000000000001"


def test_resume_reuses_the_token() -> None:
    _, plan = launch(resume="abc")
    assert plan.argv[-2:] == ("--resume", "abc") and plan.session_id == "abc"


def test_fork_resumes_into_a_new_session_id() -> None:
    _, plan = launch(fork="abc", fork_at="msg-7")
    tail = plan.argv[len(WIRE_FLAGS) + 1 :]
    assert tail == (
        "--resume",
        "abc",
        "--fork-session",
        "--session-id",
        plan.session_id,
        "--resume-session-at",
        "msg-7",
    )
    assert plan.session_id != "abc"


def test_model_and_plan_mode_become_flags() -> None:
    _, plan = launch(configure=(("model", "sonnet"), ("mode", "plan")))
    assert plan.argv[11:13] == ("--model", "sonnet")
    assert plan.argv[13:15] == ("--permission-mode", "plan")
    assert (plan.model, plan.mode) == ("sonnet", "plan")


@pytest.mark.parametrize(
    "option",
    [("mode", "bypassPermissions"), ("mode", "acceptEdits"), ("effort", "huge"), ("speed", "1")],
)
def test_settings_that_are_not_offered_are_refused(option: tuple[str, str]) -> None:
    with pytest.raises(CorralError) as raised:
        launch(configure=(option,))
    assert raised.value.kind is ErrorKind.INVALID_CONFIGURATION


@pytest.mark.parametrize(
    "args",
    [
        ("--dangerously-skip-permissions",),
        ("--allow-dangerously-skip-permissions",),
        ("--permission-mode", "bypassPermissions"),
        ("--permission-mode=acceptEdits",),
        ("--allowedTools", "Bash"),
        ("--verbose-extra", "--permission-prompt-tool", "mcp__x__y"),
    ],
)
def test_extra_args_that_let_the_cli_decide_are_refused(args: tuple[str, ...]) -> None:
    with pytest.raises(CorralError) as raised:
        launch(args=args)
    assert raised.value.kind is ErrorKind.INVALID_CONFIGURATION
    assert "would let the CLI decide permissions" in raised.value.message


def test_mcp_servers_go_in_one_config() -> None:
    servers = (
        McpServer(name="fs", transport="Stdio", command="mcp-fs", args=("--root", "/")),
        McpServer(name="web", transport="Http", url="http://127.0.0.1:9/mcp"),
    )
    spec = LaunchSpec(session_id="s1", executable="/bin/claude", dir="/work", mcp_servers=servers)
    plan = launch_for("/bin/claude", spec, {}, lambda: "id", mcp_config_path="/private/mcp.json")
    # The argv names the file (its content may hold secrets `ps` would show).
    assert plan.argv[plan.argv.index("--mcp-config") + 1] == "/private/mcp.json"
    assert restart_for(plan, spec, "tok", "opus", "default").mcp_config_path == "/private/mcp.json"
    config = json.loads(mcp_config(servers))
    assert config["mcpServers"]["fs"] == {
        "type": "stdio",
        "command": "mcp-fs",
        "args": ["--root", "/"],
        "env": {},
    }
    assert config["mcpServers"]["web"]["type"] == "http"


def test_extra_args_come_last_and_env_is_added_with_pwd() -> None:
    _, plan = launch(args=("--verbose-extra",), env=(("X", "1"),))
    assert plan.argv[-1] == "--verbose-extra"
    checkpointing = {"CLAUDE_CODE_ENABLE_SDK_FILE_CHECKPOINTING": "1"}  # rewind_files
    assert plan.env == {"HOME": "/h", "X": "1", "PWD": "/work", **checkpointing}


def test_the_app_may_turn_file_checkpointing_off() -> None:
    _, plan = launch(env=(("CLAUDE_CODE_ENABLE_SDK_FILE_CHECKPOINTING", "0"),))
    assert plan.env["CLAUDE_CODE_ENABLE_SDK_FILE_CHECKPOINTING"] == "0"


def test_effort_becomes_a_flag_and_default_adds_none() -> None:
    _, plan = launch(configure=(("effort", "xhigh"),))
    assert plan.argv[11:13] == ("--effort", "xhigh") and plan.effort == "xhigh"
    _, plain = launch(configure=(("effort", "default"),))
    assert "--effort" not in plain.argv and plain.effort == "default"


def test_a_rollback_forks_at_the_kept_entry_with_the_current_settings() -> None:
    spec, plan = launch(configure=(("effort", "low"),))
    fork = fork_for(attrs.evolve(plan, effort="max"), spec, "tok", "new-id", "entry-9")
    assert fork.argv[11:13] == ("--effort", "max")
    assert fork.argv[13:] == (
        "--resume",
        "tok",
        "--fork-session",
        "--resume-session-at",
        "entry-9",
        "--session-id",
        "new-id",
    )
    assert fork.session_id == "new-id" and fork.effort == "max"


def test_a_rollback_of_every_turn_starts_a_fresh_session() -> None:
    spec, plan = launch()
    fresh = fork_for(plan, spec, "tok", "new-id", None)
    assert fresh.argv[len(WIRE_FLAGS) + 1 :] == ("--session-id", "new-id")
    assert fresh.session_id == "new-id"


def test_restart_resumes_the_session_with_the_current_settings() -> None:
    spec, plan = launch(configure=(("model", "sonnet"),))
    again = restart_for(plan, spec, "tok", "opus", "plan")
    assert again.argv[-6:] == ("--model", "opus", "--permission-mode", "plan", "--resume", "tok")
    assert again.session_id == "tok"
