"""The readers several wires share (`sources/_choices.py`, `_inputs.py`, `_mcp.py`)."""

from __future__ import annotations

from typing import Any

from corral.pipeline.commands import McpServer
from corral.pipeline.events import (
    CommandInput,
    ConfigChoice,
    Mcp,
    NoInput,
    PathInput,
    QueryInput,
    ToolKind,
    UrlInput,
)
from corral.sources._choices import choices_of, model_select, slash_commands
from corral.sources._inputs import ArgumentKeys
from corral.sources._mcp import mcp_entry


def test_a_choice_needs_its_id_and_its_label_falls_back_to_it() -> None:
    raw = [
        {"modelId": "m1", "name": "Model one", "description": "fast"},
        {"modelId": "m2", "name": 7, "description": 7},
        {"name": "no id"},
        "not an object",
    ]
    assert choices_of(raw, "modelId", "name") == [
        ConfigChoice(value="m1", label="Model one", description="fast"),
        ConfigChoice(value="m2", label="m2", description=None),
    ]
    assert choices_of({"modelId": "m1"}, "modelId", "name") == []


def test_the_model_select_is_live_and_in_the_model_category() -> None:
    option = model_select([ConfigChoice(value="m1", label="m1")], "m1")
    assert (option.id, option.live, option.category, option.current) == (
        "model",
        True,
        "model",
        "m1",
    )


def test_slash_commands_skip_nameless_ones_and_keep_only_string_hints() -> None:
    def hint(command: dict[str, Any]) -> object:
        return command.get("hint")

    commands = slash_commands(
        [{"name": "plan", "hint": "goal"}, {"name": "x", "hint": 3, "description": "d"}, {}],
        hint,
    )
    assert [(c.name, c.description, c.input_hint) for c in commands] == [
        ("plan", "", "goal"),
        ("x", "d", None),
    ]


_KEYS = ArgumentKeys(
    command=("command", "cmd"),
    command_words=True,
    readers={ToolKind.READ: (PathInput, ("path", "file")), ToolKind.FETCH: (UrlInput, ("url",))},
)


def test_a_tool_input_is_read_by_kind_from_the_first_key_with_text() -> None:
    assert _KEYS.input_of(ToolKind.READ, {"path": "", "file": "a.py"}) == PathInput("a.py")
    assert _KEYS.input_of(ToolKind.EXECUTE, {"cmd": "ls", "workdir": "/w"}) == CommandInput(
        command="ls", cwd="/w"
    )
    assert _KEYS.input_of(ToolKind.EXECUTE, {"command": ["git", "status"]}) == CommandInput(
        command="git status"
    )


def test_a_fetch_without_a_url_is_its_query_and_other_kinds_have_no_input() -> None:
    assert _KEYS.input_of(ToolKind.FETCH, {"query": "corral"}) == QueryInput("corral")
    assert _KEYS.input_of(ToolKind.SEARCH, {"pattern": "x"}) == NoInput()
    assert _KEYS.input_of(Mcp(server="s", tool="t"), {"path": "a"}) == NoInput()
    assert _KEYS.input_of(ToolKind.READ, ["path"]) == NoInput()


def test_without_command_words_a_list_command_is_no_input() -> None:
    keys = ArgumentKeys(command=("command",), readers={})
    assert keys.input_of(ToolKind.EXECUTE, {"command": ["ls"]}) == NoInput()


def test_an_mcp_entry_names_local_servers_as_the_cli_does() -> None:
    local = McpServer(name="fs", transport="Stdio", command="srv", args=("-v",), env=(("K", "v"),))
    remote = McpServer(name="web", transport="Sse", url="https://example.invalid/sse")
    assert mcp_entry(local, local="stdio") == {
        "type": "stdio",
        "command": "srv",
        "args": ["-v"],
        "env": {"K": "v"},
    }
    assert mcp_entry(remote, local="local") == {
        "type": "sse",
        "url": "https://example.invalid/sse",
        "headers": {},
    }
