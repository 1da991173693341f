"""A transcript as Markdown (`corral transcripts export --format markdown`).

Like `show` and the HTML page, it renders the blocks of `_view`, never raw
events, and is a pure function. The layout is plain: a title and a line of
facts, a `##` heading per turn, the prompt and the answer as text, every
tool's command and output (and the diff of what it edits) in fenced code
blocks. Agent text is agent text: a fence is made longer than any run of
backticks inside, so nothing an agent prints can close it early.
"""

from __future__ import annotations

import re
import time

from ._reader import Transcript
from ._view import Block, blocks, summary

__all__ = ["render_markdown"]

_LABELS = {
    "prompt": "You",
    "assistant": "Agent",
    "reasoning": "Thinking",
    "user": "User",
    "tool": "Tool",
    "request": "Asks",
    "decision": "Decided",
    "diagnostic": "Note",
    "error": "Error",
    "plan": "Plan",
    "info": "Title",
    "repair": "Repair",
    "queued": "Queued",
}
_CODE_ROLES = {"tool", "diagnostic", "error", "repair"}  # machine text, shown verbatim


def _fenced(text: str, language: str = "") -> str:
    longest = max((len(run) for run in re.findall(r"`+", text)), default=0)
    fence = "`" * max(3, longest + 1)
    return f"{fence}{language}\n{text.rstrip(chr(10))}\n{fence}"


def _when(seconds: float | None) -> str:
    if not seconds:
        return "-"
    return time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime(seconds))


def _block(block: Block) -> str:
    if block.role == "turn_start":
        return f"## {block.title or 'Turn'}"
    if block.role == "turn_end":
        return f"*{block.title}*" if block.title else ""
    label = _LABELS.get(block.role, block.role.capitalize())
    head = f"**{label}:** {block.title}" if block.title and block.role != "prompt" else ""
    head = head or f"**{label}:**"
    parts = [head]
    if block.text:
        code = block.role in _CODE_ROLES
        parts.append(_fenced(block.text) if code else block.text.rstrip("\n"))
    if block.diff:
        parts.append(_fenced(block.diff, "diff"))
    return "\n\n".join(parts)


def render_markdown(transcript: Transcript) -> str:
    row = summary(transcript, live=False)
    out = [
        f"# {row.title or 'Transcript ' + row.transcript_id}",
        f"`{row.transcript_id}` · agent **{row.agent}** · session `{row.session}` · "
        f"started {_when(row.started)} · {row.turns} turns · status {row.status}",
    ]
    out += [f"> **problem:** {problem}" for problem in transcript.problems]
    out += [text for text in (_block(block) for block in blocks(transcript)) if text]
    footer = transcript.footer
    if footer is not None:
        out.append(f"---\n\nended: {footer.reason} at {_when(footer.ended_at.seconds)}")
    return "\n\n".join(out) + "\n"
