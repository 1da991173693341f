"""Rollback on Claude Code: rewind the files, then fork the session at the turn.

Claude Code's stream-json wire cannot forget turns in a running process.
What it can do (checked on the CLI, 2.1.332):

- files: the control request `rewind_files {user_message_id}` restores the
  files the session changed since that user message (`canRewind`,
  `filesChanged`), when file checkpointing is on: the driver starts the CLI
  with `CLAUDE_CODE_ENABLE_SDK_FILE_CHECKPOINTING=1` (the Agent SDK's
  `enableFileCheckpointing`), else it answers "File rewinding is not
  enabled.";
- conversation: a new process started with `--resume <session>
  --fork-session --session-id <new> --resume-session-at <entry>` holds the
  transcript up to and including that chain entry, and nothing after it.

So `rollback turns=N` picks the first dropped turn's prompt (the uuid corral
minted for it, which the CLI keeps as the user entry's uuid) and the last
chain entry of the turn before it; with `ConversationAndFiles` the files are
rewound to that prompt first (a refusal refuses the rollback, nothing
changed); then the driver replaces the process with the fork. The app's
session goes on: same session, its sequence continuing, a new resume token.

What flows in: the uuids of the top-level `user` and `assistant` frames
(the conversation's chain entries) and the end of each turn. What flows
out: a `ForkPoint` per accepted rollback. Only turns that ended in this
driver can be dropped (a resumed session's earlier turns are not on the
wire); dropping every turn of a session that began here starts a fresh one.
A turn that never reached the chain (cancelled before it started) is not a
turn of the conversation and is not counted.
"""

from __future__ import annotations

import attrs

__all__ = ["ForkPoint", "History"]

_MEMORY = 1024  # turns remembered for rollback


@attrs.frozen
class ForkPoint:
    prompt: str  # the first dropped turn's user message (files rewind to it)
    at: str | None  # the chain entry the fork keeps last; None: a fresh session
    turns: int


@attrs.define
class History:
    """The turns of this session as chain entries: what a fork may cut."""

    fresh: bool  # the session began in this driver: nothing came before its turns
    turns: list[tuple[str, str]] = attrs.Factory(list)  # (prompt uuid, its last entry)
    last_entry: str | None = None

    def entry(self, uuid: str) -> None:
        self.last_entry = uuid

    def turn_ended(self, prompt: str) -> None:
        previous = self.turns[-1][1] if self.turns else None
        if self.last_entry is None or self.last_entry == previous:
            return  # nothing of it reached the conversation
        self.turns.append((prompt, self.last_entry))
        if len(self.turns) > _MEMORY:
            del self.turns[0]
            self.fresh = False

    def plan(self, turns: int) -> ForkPoint | str:
        """Where to fork to drop the last `turns` turns, or why it cannot."""
        known = len(self.turns)
        if turns < 1 or turns > known:
            return (
                f"Claude Code can roll back 1 to {known} turns here "
                "(the turns this session ran since it was opened)"
            )
        if turns == known and not self.fresh:
            return "Claude Code cannot roll back past the turns this session ran since it opened"
        at = self.turns[-turns - 1][1] if turns < known else None
        return ForkPoint(prompt=self.turns[-turns][0], at=at, turns=turns)

    def forked(self, point: ForkPoint) -> None:
        del self.turns[-point.turns :]
        self.last_entry = point.at
