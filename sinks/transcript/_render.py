"""Transcripts for people: the `list` table, `show` in a terminal, an HTML page.

All three render the blocks of `_view` (never raw events) and are pure
functions from a transcript (or summaries) to text. The HTML export is one
standalone page: inline CSS, no script, no external resource, every piece
of agent text escaped, so it opens anywhere and shows nothing it should not.
Every block's text keeps its line breaks (`white-space: pre-wrap`): a prompt
or an answer of several lines reads as it was written.

The page never changes the case of what it shows: headings carry tool
titles, paths and commands, and `text-transform` would turn `src/dates.py`
into `SRC/DATES.PY`. An edit shows its unified diff, one line per element
so added and removed lines are coloured (and escaped like everything
else). Each block carries its time; each turn's end, its tokens and cost;
each decision, who made it. Deep links: the turn marker has the id
`turn-<turn id>` and every block made from an event `seq-<sequence>`.
"""

from __future__ import annotations

import html
import time
from collections.abc import Sequence

from ._reader import Transcript
from ._view import Block, Summary, blocks, summary

__all__ = ["render_html", "render_list", "render_show"]


def _when(seconds: float | None) -> str:
    if not seconds:
        return "-"
    return time.strftime("%Y-%m-%d %H:%M", time.localtime(seconds))


def _cost(cost: float) -> str:
    return f"${cost:.4f}" if cost else "-"


def _usage(block: Block) -> str:
    """A turn's tokens and cost, as `1234 tokens, $0.0100`; empty when unknown."""
    parts = [f"{block.tokens} tokens"] if block.tokens else []
    parts += [_cost(block.cost_usd)] if block.cost_usd else []
    return ", ".join(parts)


def render_list(rows: Sequence[Summary]) -> str:
    header = ("SESSION", "AGENT", "START", "TURNS", "TOKENS", "COST", "STATUS")
    table = [header]
    for row in rows:
        status = row.status + (" !" if row.problems else "")
        table.append(
            (
                row.transcript_id,
                row.agent,
                _when(row.started),
                str(row.turns),
                str(row.tokens) if row.tokens else "-",
                _cost(row.cost_usd),
                status,
            )
        )
    widths = [max(len(line[i]) for line in table) for i in range(len(header))]
    right = {3, 4, 5}
    lines = []
    for line in table:
        cells = [
            cell.rjust(widths[i]) if i in right else cell.ljust(widths[i])
            for i, cell in enumerate(line)
        ]
        lines.append("  ".join(cells).rstrip())
    return "\n".join(lines) + "\n"


_LABELS = {
    "prompt": "you",
    "assistant": "agent",
    "reasoning": "thinking",
    "user": "user",
    "tool": "tool",
    "request": "asks",
    "decision": "decided",
    "diagnostic": "note",
    "error": "error",
    "plan": "plan",
    "info": "title",
    "repair": "repair",
    "queued": "queued",
}
_COLORS = {"prompt": "1;36", "assistant": "0", "reasoning": "2", "tool": "33", "error": "1;31"}


def _indent(text: str, prefix: str = "    ") -> str:
    return "\n".join(prefix + line for line in text.split("\n"))


def _show_block(block: Block, color: bool) -> str:
    if block.role == "turn_start":
        return f"\n── {block.title} ──"
    if block.role == "turn_end":
        usage = _usage(block)
        return f"── {block.title}{', ' + usage if usage else ''} ──"
    label = _LABELS.get(block.role, block.role)
    head = f"{label}: {block.title}" if block.title and block.role != "prompt" else f"{label}:"
    if color and block.role in _COLORS:
        head = f"\x1b[{_COLORS[block.role]}m{head}\x1b[0m"
    text = "\n".join(part.rstrip("\n") for part in (block.text, block.diff) if part)
    return head + ("\n" + _indent(text) if text else "")


def _heading(transcript: Transcript) -> list[str]:
    row = summary(transcript, live=False)
    lines = [
        f"transcript {row.transcript_id}",
        f"agent {row.agent}, session {row.session}, started {_when(row.started)}, "
        f"{row.turns} turns, {row.events} events, status {row.status}",
    ]
    if row.title:
        lines.append(f"title: {row.title}")
    return lines


def _problems(transcript: Transcript) -> list[str]:
    lines = [f"! {problem}" for problem in transcript.problems]
    if transcript.torn_bytes:
        lines.append(f"! an unfinished last line of {transcript.torn_bytes} bytes is not shown")
    return lines


def render_show(transcript: Transcript, *, color: bool = False) -> str:
    out = _heading(transcript) + _problems(transcript)
    out += [_show_block(block, color) for block in blocks(transcript)]
    footer = transcript.footer
    if footer is not None:
        out.append(f"\nended: {footer.reason} at {_when(footer.ended_at.seconds)}")
        redactions = footer.count("redactions")
        if redactions:
            out.append(f"{redactions} secrets were redacted")
    return "\n".join(out) + "\n"


_CSS = """
body { font: 15px/1.5 system-ui, sans-serif; max-width: 60em; margin: 2em auto; padding: 0 1em;
       color: #1d1d1f; background: #fff; }
header { border-bottom: 1px solid #ddd; margin-bottom: 1em; }
.block { margin: .6em 0; padding: .5em .8em; border-radius: 6px; background: #f6f6f8; }
.block h3 { margin: 0 0 .3em; font-size: .8em; font-weight: 600; color: #666; }
time { float: right; font-weight: normal; color: #999; }
.prompt { background: #e8f1ff; } .assistant { background: #fff; border: 1px solid #e4e4e8; }
.tool { background: #fff8e6; } .error, .problem { background: #ffecec; }
.queued { background: none; border: 1px dashed #bbb; color: #666; }
.reasoning { color: #555; } .turn { color: #888; font-size: .85em; text-align: center; }
pre, .block p { white-space: pre-wrap; word-wrap: break-word; margin: 0; }
pre { font: 13px/1.4 ui-monospace, monospace; }
pre.diff { margin-top: .4em; background: #fff; } .diff span { display: block; }
.diff .add { background: #e6ffec; color: #116329; }
.diff .del { background: #ffebe9; color: #82071e; }
.diff .hunk { color: #0550ae; } .diff .file { font-weight: 600; }
"""


def _time(block: Block) -> str:
    if not block.at.seconds:
        return ""
    stamp = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(block.at.seconds))
    shown = time.strftime("%H:%M:%S", time.localtime(block.at.seconds))
    return f'<time datetime="{stamp}">{shown}</time>'


def _diff_line(line: str) -> str:
    kind = ""
    if line.startswith(("+++", "---")):
        kind = "file"
    elif line.startswith("+"):
        kind = "add"
    elif line.startswith("-"):
        kind = "del"
    elif line.startswith("@@"):
        kind = "hunk"
    css = f' class="{kind}"' if kind else ""
    return f"<span{css}>{html.escape(line.rstrip(chr(10)))}</span>"


def _diff(diff: str) -> str:
    if not diff:
        return ""
    lines = "".join(_diff_line(line) for line in diff.splitlines(keepends=True))
    return f'<pre class="diff">{lines}</pre>'


def _anchor(block: Block) -> str:
    return f' id="seq-{block.sequence}"' if block.sequence else ""


def _html_turn(block: Block) -> str:
    title = html.escape(block.title)
    if block.role == "turn_start":
        marker = f' id="turn-{html.escape(block.turn, quote=True)}"' if block.turn else ""
        seq = f'<a id="seq-{block.sequence}"></a>' if block.sequence else ""
        return f'<div class="turn"{marker}>{seq}{title} {_time(block)}</div>'
    usage = _usage(block)
    usage_html = f' <span class="usage">{html.escape(usage)}</span>' if usage else ""
    return f'<div class="turn"{_anchor(block)}>{title}{usage_html} {_time(block)}</div>'


def _html_block(block: Block) -> str:
    if block.role in ("turn_start", "turn_end"):
        return _html_turn(block)
    label = html.escape(_LABELS.get(block.role, block.role))
    title = html.escape(block.title) if block.title and block.role != "prompt" else ""
    body = html.escape(block.text)
    inner = f"<pre>{body}</pre>" if block.role in ("tool", "error") else f"<p>{body}</p>"
    if block.role == "reasoning":
        inner = f"<details><summary>thinking</summary>{inner}</details>"
    heading = f"<h3>{label}{': ' + title if title else ''}{_time(block)}</h3>"
    extra = f' data-decided-by="{html.escape(block.decided_by)}"' if block.decided_by else ""
    return (
        f'<section class="block {block.role}"{_anchor(block)}{extra}>'
        f"{heading}{inner}{_diff(block.diff)}</section>"
    )


def _ended(transcript: Transcript) -> str:
    footer = transcript.footer
    if footer is None:
        return ""
    lines = [f"ended: {footer.reason} at {_when(footer.ended_at.seconds)}"]
    redactions = footer.count("redactions")
    lines.append(f"{redactions} secrets were redacted" if redactions else "no secrets redacted")
    body = "".join(f"<p>{html.escape(line)}</p>" for line in lines)
    return f'<footer data-redactions="{redactions}">{body}</footer>'


def render_html(transcript: Transcript) -> str:
    heading = "".join(f"<p>{html.escape(line)}</p>" for line in _heading(transcript)[1:])
    problems = "".join(
        f'<div class="block problem">{html.escape(line)}</div>' for line in _problems(transcript)
    )
    body = "\n".join(_html_block(block) for block in blocks(transcript))
    title = html.escape(f"corral transcript {transcript.transcript_id}")
    return (
        "<!DOCTYPE html>\n"
        f'<html lang="en"><head><meta charset="utf-8"><title>{title}</title>'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        f"<style>{_CSS}</style></head><body>"
        f"<header><h1>{title}</h1>{heading}</header>{problems}\n{body}\n"
        f"{_ended(transcript)}</body></html>\n"
    )
