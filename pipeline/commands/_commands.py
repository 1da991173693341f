"""The commands an app sends, one frozen class per `cmd`, and their union.

Plain values with no behaviour: reading them from the wire and writing them
back is `_codec`'s job. A command that acts on a session names it by id.
"""

from __future__ import annotations

import enum

import attrs

from ..events import Answer, ConfigValue
from ._options import AgentRef, SessionOptions

__all__ = [
    "AnswerCmd",
    "CancelCmd",
    "CloseCmd",
    "Command",
    "CompactCmd",
    "ConfigureCmd",
    "DequeueCmd",
    "DiscoverCmd",
    "GenerateCmd",
    "InfoCmd",
    "OpenCmd",
    "PlanUsageCmd",
    "ProbeCmd",
    "PromptCmd",
    "RollbackCmd",
    "RollbackScope",
]


class RollbackScope(enum.StrEnum):
    CONVERSATION = "Conversation"
    CONVERSATION_AND_FILES = "ConversationAndFiles"


@attrs.frozen
class DiscoverCmd:
    pass


@attrs.frozen
class ProbeCmd:
    agent: AgentRef


@attrs.frozen
class PlanUsageCmd:
    agent: AgentRef


@attrs.frozen
class OpenCmd:
    options: SessionOptions


@attrs.frozen(kw_only=True)
class GenerateCmd:
    options: SessionOptions
    prompt: str


@attrs.frozen(kw_only=True)
class PromptCmd:
    session: str
    text: str
    attachments: tuple[str, ...] = ()


@attrs.frozen(kw_only=True)
class DequeueCmd:
    session: str
    prompt: str


@attrs.frozen(kw_only=True)
class AnswerCmd:
    session: str
    request: str
    answer: Answer


@attrs.frozen(kw_only=True)
class ConfigureCmd:
    session: str
    option: str
    value: ConfigValue


@attrs.frozen(kw_only=True)
class RollbackCmd:
    session: str
    turns: int
    scope: RollbackScope


@attrs.frozen
class CompactCmd:
    session: str


@attrs.frozen(kw_only=True)
class CancelCmd:
    session: str
    clear_queue: bool = False


@attrs.frozen
class InfoCmd:
    session: str


@attrs.frozen
class CloseCmd:
    session: str


Command = (
    DiscoverCmd
    | ProbeCmd
    | PlanUsageCmd
    | OpenCmd
    | GenerateCmd
    | PromptCmd
    | DequeueCmd
    | AnswerCmd
    | ConfigureCmd
    | RollbackCmd
    | CompactCmd
    | CancelCmd
    | InfoCmd
    | CloseCmd
)
