"""Opening a Codex session: options, the thread request, turn input, login, settings."""

from __future__ import annotations

from pathlib import Path

import pytest
from corral.pipeline.commands import McpServer
from corral.pipeline.driver import LaunchSpec
from corral.pipeline.errors import CorralError, ErrorKind
from corral.pipeline.events import (
    Authenticated,
    AuthKind,
    Fields,
    OtherAuth,
    TerminalLogin,
    Unauthenticated,
)
from corral.sources.codex._handshake import ModelInfo, auth_status, config_options
from corral.sources.codex._home import ensure_home, make_private_home, remove_home, source_home
from corral.sources.codex._launch import launch_options, thread_request, turn_input

from tests.support.schema import check
from tests.unit.codex.protocol import check_params


def _spec(**fields: object) -> LaunchSpec:
    return LaunchSpec(session_id="s1", executable="codex", dir="/work", **fields)  # type: ignore[arg-type]


def test_default_options_are_workspace_write_and_a_shared_home() -> None:
    assert launch_options(()) == {"sandbox": "workspace-write", "isolate_home": False}


@pytest.mark.parametrize(
    "chosen",
    [
        (("sandbox", "wide-open"),),
        (("isolate_home", "yes"),),
        (("model", True),),
        (("temperature", "hot"),),
    ],
)
def test_bad_open_options_are_invalid_configuration(chosen: tuple[tuple[str, object], ...]) -> None:
    with pytest.raises(CorralError) as caught:
        launch_options(chosen)  # type: ignore[arg-type]
    assert caught.value.kind is ErrorKind.INVALID_CONFIGURATION


def test_thread_start_asks_before_everything_in_the_session_dir() -> None:
    method, params = thread_request(_spec(), launch_options((("effort", "high"),)))
    assert method == "thread/start"
    assert params == {
        "cwd": "/work",
        "approvalPolicy": "untrusted",
        "sandbox": "workspace-write",
        "config": {"model_reasoning_effort": "high"},
    }


def test_resume_and_fork_name_the_thread() -> None:
    options = launch_options((("model", "gpt-5.5"),))
    method, params = thread_request(_spec(resume="th-1"), options)
    assert (method, params["threadId"], params["model"]) == ("thread/resume", "th-1", "gpt-5.5")
    method, params = thread_request(_spec(fork="th-1", fork_at="turn-3"), options)
    assert (method, params["threadId"], params["lastTurnId"]) == ("thread/fork", "th-1", "turn-3")


def test_fork_params_are_codex_thread_fork_params() -> None:
    options = launch_options((("model", "gpt-5.5"), ("effort", "high")))
    method, params = thread_request(_spec(fork="th-1", fork_at="turn-3"), options)
    assert method == "thread/fork"
    check_params("ThreadForkParams", params)
    assert params == {
        "threadId": "th-1",
        "lastTurnId": "turn-3",  # inclusive: the fork keeps turn-3
        "excludeTurns": True,
        "cwd": "/work",
        "approvalPolicy": "untrusted",
        "sandbox": "workspace-write",
        "model": "gpt-5.5",
        "config": {"model_reasoning_effort": "high"},
    }


def test_mcp_servers_become_codex_config() -> None:
    servers = (
        McpServer(
            name="fs", transport="Stdio", command="mcp-fs", args=("--root", "/w"), env=(("A", "1"),)
        ),
        McpServer(
            name="web", transport="Http", url="http://127.0.0.1:9/mcp", headers=(("X", "y"),)
        ),
    )
    _, params = thread_request(_spec(mcp_servers=servers), launch_options(()))
    assert params["config"]["mcp_servers"] == {
        "fs": {"command": "mcp-fs", "args": ["--root", "/w"], "env": {"A": "1"}},
        "web": {"url": "http://127.0.0.1:9/mcp", "http_headers": {"X": "y"}},
    }


def test_sse_mcp_servers_are_unsupported() -> None:
    servers = (McpServer(name="old", transport="Sse", url="http://127.0.0.1:9/sse"),)
    with pytest.raises(CorralError) as caught:
        thread_request(_spec(mcp_servers=servers), launch_options(()))
    assert caught.value.kind is ErrorKind.UNSUPPORTED_FEATURE


def test_turn_input_sends_images_as_local_images_and_names_other_files() -> None:
    assert turn_input("look", ("/w/a.PNG", "/w/notes.txt")) == [
        {"type": "text", "text": "look\n\nAttached file: /w/notes.txt", "text_elements": []},
        {"type": "localImage", "path": "/w/a.PNG"},
    ]


def test_login_states() -> None:
    def read(**fields: object) -> tuple[object, bool]:
        return auth_status(Fields({"requiresOpenaiAuth": False, **fields}, "account/read"))

    assert read(account={"type": "apiKey"}) == (Authenticated(kind=AuthKind.API_KEY), False)
    chatgpt = read(account={"type": "chatgpt", "email": "a@b.c", "planType": "pro"})
    assert isinstance(chatgpt[0], Authenticated) and chatgpt[0].kind is AuthKind.SUBSCRIPTION
    assert read(account=None) == (Authenticated(kind=OtherAuth("model provider")), False)
    missing, required = read(account=None, requiresOpenaiAuth=True)
    assert required and isinstance(missing, Unauthenticated)
    assert missing.login == (
        TerminalLogin(command=("codex", "login"), description="Log in to Codex"),
    )


def test_config_options_follow_the_current_model() -> None:
    models = (
        ModelInfo(id="fast", name="Fast", efforts=(("low", "quick"), ("high", "deep"))),
        ModelInfo(id="slow", name="Slow"),
    )
    options = config_options(models, {"model": "fast", "effort": "low", "sandbox": "read-only"})
    by_id = {o.id: o for o in options}
    assert [c.value for c in by_id["model"].choices] == ["fast", "slow"]
    assert [c.value for c in by_id["effort"].choices] == ["low", "high"]
    assert (by_id["model"].live, by_id["effort"].live, by_id["sandbox"].live) == (True, True, False)
    assert by_id["isolate_home"].boolean and by_id["sandbox"].current == "read-only"
    for option in options:
        check("line-protocol.schema.json", "ConfigOption", option.to_wire())


def test_an_unlisted_current_model_is_still_offered() -> None:
    (model, *_) = config_options((), {"model": "custom-1"})
    assert [c.value for c in model.choices] == ["custom-1"]


def test_private_home_is_seeded_and_removed(tmp_path: Path) -> None:
    source = tmp_path / "codex-home"
    source.mkdir()
    (source / "config.toml").write_text('model = "x"\n')
    (source / "history.jsonl").write_text("{}\n")
    home = make_private_home(source, parent=str(tmp_path))
    assert sorted(p.name for p in home.iterdir()) == ["config.toml"]
    assert (home / "config.toml").read_text() == 'model = "x"\n'
    remove_home(home)
    assert not home.exists()


def test_codex_home_comes_from_the_environment(tmp_path: Path) -> None:
    assert source_home({"CODEX_HOME": str(tmp_path / "h")}) == tmp_path / "h"
    assert source_home({"HOME": str(tmp_path)}) == tmp_path / ".codex"
    ensure_home({"CODEX_HOME": str(tmp_path / "made" / "here")})
    assert (tmp_path / "made" / "here").is_dir()
