"""The HTML export a person can trust: the case of code, the order things happened in,
diffs, times, tokens and cost per turn, redactions and who decided each permission.

Each test writes a transcript, renders it and reads the page back with `html.parser`
(elements, classes, ids and text), never with regexes on the raw page.
"""

from __future__ import annotations

from html.parser import HTMLParser
from pathlib import Path

import attrs
from corral.pipeline.events import (
    Completed,
    ContextUsage,
    FileDiff,
    MessageEnded,
    PathInput,
    PermissionChoice,
    PermissionRequest,
    PromptOrigin,
    RequestOpened,
    TextDelta,
    ToolKind,
    ToolStatus,
    ToolUpdate,
    ToolUpdated,
    TurnEnded,
    TurnStarted,
)
from corral.pipeline.records import Decision, Outcome, Prompted
from corral.sinks.transcript import read_transcript
from corral.sinks.transcript._paths import files_of
from corral.sinks.transcript._render import render_html, render_show

from .helpers import at, closed, event, opened, writer

SECRET = "sk-" + "ant-api03-" + "Zq8vN2mL4kT7wR1pX9cB3dF6gH0jS5aE"


@attrs.define
class Element:
    tag: str
    attrs: dict[str, str]
    text: str = ""
    children: list[Element] = attrs.field(factory=list)

    @property
    def classes(self) -> list[str]:
        return self.attrs.get("class", "").split()

    def all_text(self) -> str:
        return self.text + "".join(child.all_text() for child in self.children)

    def walk(self) -> list[Element]:
        return [self, *(e for child in self.children for e in child.walk())]


class _Page(HTMLParser):
    VOID = frozenset({"meta", "br", "img", "link", "input", "hr"})

    def __init__(self) -> None:
        super().__init__()
        self.root = Element("root", {})
        self.stack = [self.root]

    def handle_starttag(self, tag: str, attributes: list[tuple[str, str | None]]) -> None:
        element = Element(tag, {k: v or "" for k, v in attributes})
        self.stack[-1].children.append(element)
        if tag not in self.VOID:
            self.stack.append(element)

    def handle_endtag(self, tag: str) -> None:
        while len(self.stack) > 1 and self.stack.pop().tag != tag:
            pass

    def handle_data(self, data: str) -> None:
        self.stack[-1].children.append(Element("#text", {}, text=data))


def parse(page: str) -> Element:
    parser = _Page()
    parser.feed(page)
    parser.close()
    return parser.root


def blocks_of(root: Element) -> list[Element]:
    """The page's blocks and turn markers, in document order."""
    return [e for e in root.walk() if {"block", "turn"} & set(e.classes)]


def _edit(status: ToolStatus) -> object:
    diff = FileDiff(path="src/dates.py", old_text="a = 1\nb = <2>\n", new_text="a = 1\nb = 3\n")
    tool = ToolUpdate(id="x1", kind=ToolKind.EDIT, title="Edit src/dates.py", status=status,
                      input=PathInput(path="src/dates.py"), diffs=(diff,))  # fmt: skip
    return ToolUpdated(tool)


def _session(tmp_path: Path) -> Path:
    """Two prompts (the second sent while the first turn runs), an edit that asks first."""
    path = tmp_path / "t.jsonl"
    pending = _edit(ToolStatus.PENDING)
    assert isinstance(pending, ToolUpdated)
    request = PermissionRequest(id="r1", tool=pending.tool, options=(PermissionChoice.ALLOW_ONCE,))
    usage = event(6, ContextUsage(used_tokens=900, cost_usd=0.25),
                  **{"corral/tokens": {"input": 800, "output": 100}})  # fmt: skip
    records: list[object] = [
        opened(),
        Prompted(session_id="s1", prompt_id="p1", text="run PYTEST -q on src/dates.py", at=at(0)),
        event(1, TurnStarted(PromptOrigin("p1"))),
        event(2, pending),  # type: ignore[arg-type]
        event(3, RequestOpened(request)),
        Decision(
            session_id="s1",
            request_id="r1",
            decision=Outcome.ALLOW_ONCE,
            decided_by="rule:safe-edits",
            at=at(3),
            turn_id="t1",
        ),
        Prompted(session_id="s1", prompt_id="p2", text="then commit it\nplease", at=at(3)),
        event(4, _edit(ToolStatus.COMPLETED)),  # type: ignore[arg-type]
        event(5, TextDelta(message_id="m1", text=f"done, key {SECRET}")),
        usage,
        event(7, MessageEnded("m1")),
        event(8, TurnEnded(stop=Completed())),
        event(9, TurnStarted(PromptOrigin("p2")), turn="t2"),
        event(10, TextDelta(message_id="m2", text="committed"), turn="t2"),
        event(11, MessageEnded("m2"), turn="t2"),
        event(12, TurnEnded(stop=Completed()), turn="t2"),
    ]
    writer(path).write([*records, closed(12, turns=2)])  # type: ignore[list-item]
    return path


def _page(tmp_path: Path) -> Element:
    return parse(render_html(read_transcript(files_of(_session(tmp_path)))))


def test_the_page_never_changes_the_case_of_code(tmp_path: Path) -> None:
    root = _page(tmp_path)
    (style,) = [e for e in root.walk() if e.tag == "style"]
    assert "text-transform" not in style.all_text()
    assert "font-variant" not in style.all_text()
    headings = [e.all_text() for e in root.walk() if e.tag == "h3"]
    assert any("Edit src/dates.py" in heading for heading in headings)


def test_a_queued_prompt_is_shown_where_its_turn_starts_and_marked_where_sent(
    tmp_path: Path,
) -> None:
    shown = blocks_of(_page(tmp_path))
    order = [(e.classes[-1], e.attrs.get("id", "")) for e in shown]
    roles = [role for role, _ in order]
    second = order.index(("turn", "turn-t2"))
    prompts = [i for i, e in enumerate(shown) if "prompt" in e.classes]
    assert len(prompts) == 2
    first_turn_end = roles.index("turn", 1)  # the marker that ends turn t1
    assert prompts[0] == 1 and prompts[1] == second + 1  # each just after its turn marker
    assert "then commit it\nplease" in shown[prompts[1]].all_text()
    (queued,) = [i for i, e in enumerate(shown) if "queued" in e.classes]
    assert queued < first_turn_end < second  # the mark sits inside the first turn
    assert "then commit it" in shown[queued].all_text()


def test_the_permission_comes_before_the_tool_shows_completed(tmp_path: Path) -> None:
    shown = blocks_of(_page(tmp_path))
    roles = [e.classes[-1] for e in shown]
    texts = [e.all_text() for e in shown]
    asked, decided = roles.index("request"), roles.index("decision")
    tools = [i for i, role in enumerate(roles) if role == "tool"]
    assert len(tools) == 2 and tools[0] < asked < decided < tools[1]
    assert "[Pending]" in texts[tools[0]] and "[Completed]" in texts[tools[1]]
    assert "[Completed]" not in " ".join(texts[: decided + 1])


def test_an_edit_shows_its_unified_diff_coloured_and_escaped(tmp_path: Path) -> None:
    root = _page(tmp_path)
    diffs = [e for e in root.walk() if e.tag == "pre" and "diff" in e.classes]
    assert diffs
    lines = [(span.attrs.get("class", ""), span.all_text()) for span in diffs[-1].children]
    assert ("file", "--- a/src/dates.py") in lines and ("file", "+++ b/src/dates.py") in lines
    assert ("del", "-b = <2>") in lines and ("add", "+b = 3") in lines
    assert ("", " a = 1") in lines
    assert any(kind == "hunk" for kind, _ in lines)
    assert "<2>" not in render_html(read_transcript(files_of(tmp_path / "t.jsonl")))


def test_each_turn_has_its_time_tokens_and_cost(tmp_path: Path) -> None:
    root = _page(tmp_path)
    first = next(e for e in root.walk() if e.attrs.get("id") == "turn-t1")
    (stamp,) = [e for e in first.children if e.tag == "time"]
    assert stamp.attrs["datetime"] == "2025-06-15T15:06:40Z"  # T0 + 1 ms
    ends = [e for e in blocks_of(root) if e.attrs.get("id") in ("seq-8", "seq-12")]
    assert [e.attrs["id"] for e in ends] == ["seq-8", "seq-12"]
    assert "900 tokens, $0.2500" in ends[0].all_text()
    assert "tokens" not in ends[1].all_text()  # the second turn reported none
    timed = [any(c.tag == "time" for c in e.walk()) for e in blocks_of(root)]
    assert timed and all(timed)


def test_every_event_block_has_a_deep_link_id(tmp_path: Path) -> None:
    root = _page(tmp_path)
    ids = {e.attrs["id"] for e in root.walk() if "id" in e.attrs}
    assert {"turn-t1", "turn-t2", "seq-1", "seq-2", "seq-3", "seq-5", "seq-8", "seq-12"} <= ids


def test_the_redaction_count_and_who_decided_are_shown(tmp_path: Path) -> None:
    root = _page(tmp_path)
    (footer,) = [e for e in root.walk() if e.tag == "footer"]
    assert footer.attrs["data-redactions"] == "1"
    assert "1 secrets were redacted" in footer.all_text()
    (decision,) = [e for e in blocks_of(root) if "decision" in e.classes]
    assert decision.attrs["data-decided-by"] == "rule:safe-edits"
    assert "r1: allow_once by rule:safe-edits" in decision.all_text()
    assert "decided by rule safe-edits" in decision.all_text()


def test_show_in_a_terminal_follows_the_same_order_and_shows_the_diff(tmp_path: Path) -> None:
    text = render_show(read_transcript(files_of(_session(tmp_path))))
    assert text.index("[Pending]") < text.index("asks:") < text.index("[Completed]")
    assert "    -b = <2>\n    +b = 3" in text
    assert "completed (protocol), 900 tokens, $0.2500" in text
    assert (
        text.index("queued: p2")
        < text.index("turn (prompt p2)")
        < text.index("then commit it\n    please")
    )
