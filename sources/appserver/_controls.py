"""The app-server's checkpoints and models, as corral's resume token and `model` option.

Checkpoints. Every `turn/completed` may carry a `checkpoint` (its `key`,
`status`, `resumeAttempt`...). A turn that stopped at a `wait_user` or
`failed` checkpoint, not yet acknowledged as terminal, can be taken up
again with `turn/resume {threadId, turnId, checkpointKey}`: that is the
protocol's resume of a run, beside `thread/resume` (which only reopens the
thread). corral's resume token says which: a plain thread id while no
checkpoint waits, `<thread>#<turn>#<key>` (turn and key percent-encoded,
so neither holds a `#`) after a resumable checkpoint. Opening with such a
token reopens the thread and makes the first prompt resume the checkpoint
(`turn/resume` takes no input: the prompt's text is only the user's word
to go on, and a Diagnostic says so). Inside a live session a checkpoint
only moves the token: a new prompt there is a new turn.

Models. A server whose `initialize` capabilities say `modelList` answers
`model/list {agentKey}` with the models the agent can run; they become the
live `model` option (a Select of the listed ids, their display names as
labels). The wire has no call that switches a thread's model, so corral
keeps the choice and sends it with every later `turn/start` as
`metadata.model` (the schema's open metadata object); `configure model`
at open is applied the same way from the first turn.

Pure functions, no I/O: the driver makes the calls.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any
from urllib.parse import quote, unquote

import attrs

from ...pipeline.driver import Emitted
from ...pipeline.events import ConfigChoice, ConfigOption, Diagnostic, DiagnosticLevel

__all__ = [
    "MODEL",
    "RESUMABLE",
    "Checkpoint",
    "checkpoint_of",
    "model_option",
    "parse_token",
    "resuming",
    "token",
]

RESUMABLE = frozenset({"wait_user", "failed"})  # checkpoint statuses `turn/resume` takes up
MODEL = "model"


@attrs.frozen
class Checkpoint:
    """A stopped turn's resumable checkpoint."""

    turn_id: str
    key: str


def checkpoint_of(completed: Mapping[str, Any]) -> Checkpoint | None:
    """The resumable checkpoint of a `turn/completed`'s params, if it has one."""
    point = completed.get("checkpoint")
    turn = completed.get("turnId")
    if not isinstance(point, Mapping) or not isinstance(turn, str) or not turn:
        return None
    key = point.get("key")
    if point.get("status") not in RESUMABLE or point.get("terminalAcknowledged") is True:
        return None
    return Checkpoint(turn, key) if isinstance(key, str) and key else None


def token(thread: str, checkpoint: Checkpoint | None) -> str:
    """The session's resume token: the thread, and the checkpoint that waits, if any."""
    if checkpoint is None:
        return thread
    return f"{thread}#{quote(checkpoint.turn_id, safe='')}#{quote(checkpoint.key, safe='')}"


def parse_token(resume: str) -> tuple[str, Checkpoint | None]:
    """A resume token back into its thread id and checkpoint (see `token`)."""
    parts = resume.rsplit("#", 2)
    if len(parts) == 3 and all(parts):
        thread, turn, key = parts
        return thread, Checkpoint(unquote(turn), unquote(key))
    return resume, None


def model_option(listed: object, current: str | None = None) -> ConfigOption | None:
    """The live `model` option from a `model/list` result; None when it lists none."""
    models = listed.get("models") if isinstance(listed, Mapping) else None
    choices: list[ConfigChoice] = []
    for model in models if isinstance(models, list) else ():
        ident = model.get("id") if isinstance(model, Mapping) else None
        if not isinstance(ident, str) or not ident:
            continue
        label = model.get("displayName")
        provider = model.get("provider")
        choices.append(
            ConfigChoice(
                value=ident,
                label=label if isinstance(label, str) and label else ident,
                description=provider if isinstance(provider, str) and provider else None,
            )
        )
    if not choices:
        return None
    return ConfigOption(id=MODEL, name="Model", live=True, choices=tuple(choices), current=current)


def resuming(checkpoint: Checkpoint, text: str) -> Emitted:
    """The Info note of a prompt that resumes a checkpoint (its text is not sent)."""
    message = f"resuming checkpoint {checkpoint.key} of turn {checkpoint.turn_id}"
    if text.strip():
        message += "; turn/resume takes no input, so the prompt's text is not sent"
    return Emitted(kind=Diagnostic(level=DiagnosticLevel.INFO, message=message))
