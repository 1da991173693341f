"""The tool table: each Claude Code tool's kind, input, title and results."""

from __future__ import annotations

from typing import Any

import pytest
from corral.pipeline.events import (
    CommandInput,
    FileDiff,
    Mcp,
    NoInput,
    PathInput,
    PatternInput,
    QueryInput,
    TextInput,
    ToolKind,
    ToolStatus,
    UrlInput,
)
from corral.sources.claude._tools import file_diffs, finished_tool, started_tool, tool_output

from tests.unit.claude.support import as_event


@pytest.mark.parametrize(
    ("name", "tool_input", "kind", "expected"),
    [
        ("Bash", {"command": "ls -la"}, ToolKind.EXECUTE, CommandInput(command="ls -la")),
        ("Read", {"file_path": "/a.py"}, ToolKind.READ, PathInput("/a.py")),
        (
            "Edit",
            {"file_path": "/a.py", "old_string": "x", "new_string": "y"},
            ToolKind.EDIT,
            PathInput("/a.py"),
        ),
        ("MultiEdit", {"file_path": "/a.py", "edits": []}, ToolKind.EDIT, PathInput("/a.py")),
        ("Write", {"file_path": "/b.py", "content": ""}, ToolKind.EDIT, PathInput("/b.py")),
        ("NotebookEdit", {"notebook_path": "/n.ipynb"}, ToolKind.EDIT, PathInput("/n.ipynb")),
        ("Glob", {"pattern": "**/*.py"}, ToolKind.SEARCH, PatternInput("**/*.py")),
        ("Grep", {"pattern": "TODO"}, ToolKind.SEARCH, PatternInput("TODO")),
        ("WebFetch", {"url": "https://x.test"}, ToolKind.FETCH, UrlInput("https://x.test")),
        ("WebSearch", {"query": "corral"}, ToolKind.SEARCH, QueryInput("corral")),
        (
            "Task",
            {"description": "find it", "prompt": "..."},
            ToolKind.SUBAGENT,
            TextInput("find it"),
        ),
        ("Agent", {"prompt": "go"}, ToolKind.SUBAGENT, TextInput("go")),
        ("ExitPlanMode", {"plan": "p"}, ToolKind.OTHER, NoInput()),
    ],
)
def test_tool_kind_and_input(
    name: str, tool_input: dict[str, Any], kind: ToolKind, expected: object
) -> None:
    tool = started_tool("t1", name, tool_input)
    assert tool.kind is kind
    assert tool.input == expected
    assert tool.status is ToolStatus.RUNNING
    as_event_kind(tool)


def as_event_kind(tool: Any) -> None:
    from corral.pipeline.events import ToolUpdated

    as_event(ToolUpdated(tool))


def test_bash_title_prefers_the_description() -> None:
    tool = started_tool("t1", "Bash", {"command": "make -j8", "description": "Build it"})
    assert tool.title == "Build it"


def test_file_tools_name_their_location() -> None:
    assert started_tool("t1", "Read", {"file_path": "/x"}).locations == ("/x",)


def test_unknown_tool_keeps_its_raw_name_and_input() -> None:
    tool = started_tool("t1", "Frobnicate", {"level": 3})
    assert tool.kind is ToolKind.OTHER
    assert tool.raw is not None and tool.raw.name == "Frobnicate" and tool.raw.input == {"level": 3}


def test_mcp_server_name_may_hold_single_underscores() -> None:
    tool = started_tool("t1", "mcp__my_server__do__it", {})
    assert tool.kind == Mcp(server="my_server", tool="do__it")


def test_tool_output_joins_text_blocks_and_names_others() -> None:
    content = [
        {"type": "text", "text": "a"},
        {"type": "image", "source": {}},
        {"type": "text", "text": "b"},
    ]
    assert tool_output(content) == "a\n[image]\nb"


def test_failed_result_has_no_diffs() -> None:
    started = started_tool("t1", "Write", {"file_path": "/a"})
    done = finished_tool(
        started,
        {"type": "tool_result", "is_error": True, "content": "denied"},
        {"type": "create", "filePath": "/a", "content": "x"},
    )
    assert done.status is ToolStatus.FAILED and done.output == "denied" and done.diffs == ()


def test_edit_diff_applies_the_replacement_to_the_original() -> None:
    result = {
        "filePath": "/a",
        "oldString": "two",
        "newString": "2",
        "originalFile": "one two two",
        "replaceAll": False,
    }
    assert file_diffs(result) == (
        FileDiff(path="/a", old_text="one two two", new_text="one 2 two"),
    )


def test_edit_diff_without_original_is_the_strings() -> None:
    result = {"filePath": "/a", "oldString": "x", "newString": "y"}
    assert file_diffs(result) == (FileDiff(path="/a", old_text="x", new_text="y"),)


def test_multi_edit_applies_every_edit_in_order() -> None:
    result = {
        "filePath": "/a",
        "originalFile": "a b c",
        "edits": [{"old_string": "a", "new_string": "A"}, {"old_string": "c", "new_string": "C"}],
    }
    assert file_diffs(result) == (FileDiff(path="/a", old_text="a b c", new_text="A b C"),)


def test_write_over_an_existing_file_keeps_the_old_text() -> None:
    result = {"type": "update", "filePath": "/a", "content": "new", "originalFile": "old"}
    assert file_diffs(result) == (FileDiff(path="/a", old_text="old", new_text="new"),)
