"""What people read: the list table, `show`, the HTML page (escaping, blocks)."""

from __future__ import annotations

from pathlib import Path

import attrs
from corral.pipeline.events import (
    CommandInput,
    ToolKind,
    ToolOutputDelta,
    ToolStatus,
    ToolUpdate,
    ToolUpdated,
)
from corral.pipeline.records import Prompted
from corral.sinks.transcript import TranscriptIndex, read_transcript
from corral.sinks.transcript._paths import files_of
from corral.sinks.transcript._render import render_html, render_list, render_show

from .helpers import at, closed, event, opened, turn, writer


def _tool(sequence: int, status: ToolStatus, output: str | None = None) -> object:
    tool = ToolUpdate(id="x1", kind=ToolKind.EXECUTE, title="list files", status=status,
                      input=CommandInput(command="ls -la"), output=output)  # fmt: skip
    return event(sequence, ToolUpdated(tool))


def _transcript(tmp_path: Path) -> Path:
    path = tmp_path / "t.jsonl"
    events = turn(1, "Here are <b>the files</b> & more")
    body = [
        *events[:4],
        _tool(5, ToolStatus.RUNNING),
        event(6, ToolOutputDelta(tool_id="x1", text="a.txt\n")),
        event(7, ToolOutputDelta(tool_id="x1", text="b.txt\n")),
        _tool(8, ToolStatus.COMPLETED),
    ]
    tail = [attrs.evolve(e, sequence=9 + i) for i, e in enumerate(events[4:])]
    prompt = Prompted(session_id="s1", prompt_id="p1", text="list <my> files", at=at())
    writer(path).write([opened(), prompt, *body, *tail, closed(10)])
    return path


def test_show_reads_like_a_conversation(tmp_path: Path) -> None:
    text = render_show(read_transcript(files_of(_transcript(tmp_path))))
    assert "you:\n    list <my> files" in text
    assert "agent:\n    Here are <b>the files</b> & more" in text
    assert "tool: Execute: list files [Completed]\n    ls -la\n    a.txt\n    b.txt" in text
    assert "── turn (prompt p1) ──" in text and "── completed (protocol) ──" in text
    assert "ended: closed" in text


def test_show_reports_damage_and_a_torn_line(tmp_path: Path) -> None:
    path = _transcript(tmp_path)
    lines = path.read_bytes().split(b"\n")
    lines[3] = b"garbage"
    path.write_bytes(b"\n".join(lines) + b'{"torn')
    text = render_show(read_transcript(files_of(path)))
    assert "t.jsonl:4: damaged record" in text
    assert "an unfinished last line of 6 bytes is not shown" in text


def test_html_escapes_everything_the_agent_said(tmp_path: Path) -> None:
    page = render_html(read_transcript(files_of(_transcript(tmp_path))))
    assert page.startswith("<!DOCTYPE html>")
    assert "Here are &lt;b&gt;the files&lt;/b&gt; &amp; more" in page
    assert "list &lt;my&gt; files" in page
    assert "<b>" not in page and "<script" not in page and "http" not in page


def test_the_list_table_has_the_columns(tmp_path: Path) -> None:
    _transcript(tmp_path)
    with TranscriptIndex(tmp_path) as index:
        index.update()
        table = render_list(index.summaries())
    header, row = table.splitlines()
    assert header.split() == ["SESSION", "AGENT", "START", "TURNS", "TOKENS", "COST", "STATUS"]
    assert row.split()[0:2] == ["t", "mock"] and row.split()[-1] == "closed"
