"""The rule model: what a policy file says, as frozen values.

A `PolicySpec` is an ordered tuple of `Rule`s, the mode that decides what
no rule matches (None: the session's mode), the guard settings, and the
default deadline for requests forwarded to the app. A `Rule` is a set of
conditions (every one given must hold; an absent one matches anything)
and an action. Values here are already checked by the loader: a Rule that
exists is a valid rule.
"""

from __future__ import annotations

import enum
import re
from collections.abc import Mapping

import attrs

from ..commands import PermissionMode
from ._paths import PathGlob, glob_regex
from ._shell import SimpleCommand

__all__ = [
    "GUARD_IDS",
    "Action",
    "GuardAction",
    "Location",
    "NameGlob",
    "PolicySpec",
    "Problem",
    "RequestKind",
    "Rule",
    "SandboxMode",
    "TextMatcher",
    "TimeoutChoice",
]


class Action(enum.StrEnum):
    ALLOW = "allow"
    DENY = "deny"
    ASK = "ask"
    ANSWER = "answer"  # questions only


class RequestKind(enum.StrEnum):
    PERMISSION = "permission"
    QUESTION = "question"


class Location(enum.StrEnum):
    INSIDE = "inside"
    OUTSIDE = "outside"


class GuardAction(enum.StrEnum):
    DENY = "deny"
    ASK = "ask"
    OFF = "off"


class SandboxMode(enum.StrEnum):
    """The policy's `sandbox` key: corral's OS sandbox for the commands it runs."""

    OFF = "off"
    ON = "on"  # required: a session cannot open without a working sandbox
    AUTO = "auto"  # on where bubblewrap works (the default)


class TimeoutChoice(enum.StrEnum):
    ALLOW = "allow"
    ALLOW_ALWAYS = "allow_always"
    DENY = "deny"
    DENY_ALWAYS = "deny_always"

    @property
    def allows(self) -> bool:
        return self in (TimeoutChoice.ALLOW, TimeoutChoice.ALLOW_ALWAYS)


# The built-in guards, in the order they are checked.
GUARD_IDS = (
    "rm-root",
    "pipe-to-shell",
    "secret-read",
    "write-outside-session",
    "unparsed-command",
    "unknown-command",
)
# What a guard does when the policy does not say: deny, except for what is
# only unknown, which the app is asked about (denied if nobody answers in time).
_DEFAULT_GUARD_ACTIONS = {"unknown-command": GuardAction.ASK}


@attrs.frozen
class Problem:
    """Something wrong (or suspicious) in a policy file, at a line if known."""

    line: int | None
    message: str

    def render(self, source: str) -> str:
        return f"{source}:{self.line}: {self.message}" if self.line else f"{source}: {self.message}"


@attrs.frozen
class NameGlob:
    """A glob over a name (agent id, host, MCP server or tool): `*` matches anything."""

    source: str
    regex: re.Pattern[str] = attrs.field(eq=False)

    @classmethod
    def parse(cls, source: str, *, fold_case: bool = False) -> NameGlob:
        text = source.lower() if fold_case else source
        return cls(source, glob_regex(text))

    def matches(self, name: str) -> bool:
        return self.regex.fullmatch(name) is not None


@attrs.frozen
class TextMatcher:
    """A prefix, glob or regex over a command or a text.

    On a command, a prefix compares whole words (`git status` matches
    `git status -s`, not `git statusx`); a glob must match the whole command
    text (words joined by one space, `*` matches anything); a regex is
    searched (anchor it with `^` and `$`). A command prefix (`words` set)
    matched against a whole command line ends at a word too: the text after
    it is empty or starts with whitespace. Other prefixes (URLs, question
    texts) compare characters.
    """

    how: str  # prefix, glob, regex
    pattern: str
    regex: re.Pattern[str] | None = attrs.field(eq=False, default=None)
    words: tuple[str, ...] = ()

    def describe(self) -> str:
        return f"{self.how} {self.pattern!r}"

    def matches_command(self, command: SimpleCommand) -> bool:
        if self.how == "prefix":
            return command.words[: len(self.words)] == self.words
        return self.matches_text(command.text)

    def matches_text(self, text: str) -> bool:
        if self.how == "prefix":
            if not text.startswith(self.pattern):
                return False
            rest = text[len(self.pattern) :]
            return not self.words or not rest or rest[0].isspace() or self.pattern[-1].isspace()
        assert self.regex is not None
        if self.how == "glob":
            return self.regex.fullmatch(text) is not None
        return self.regex.search(text) is not None


@attrs.frozen(kw_only=True)
class Rule:
    id: str
    line: int  # where the rule starts in its file (0: not from a file)
    action: Action
    request: RequestKind = RequestKind.PERMISSION
    description: str | None = None
    agents: tuple[NameGlob, ...] = ()
    tools: frozenset[str] = frozenset()  # ToolKind values and "Mcp"
    commands: tuple[TextMatcher, ...] = ()  # each command of the line
    command_lines: tuple[TextMatcher, ...] = ()  # the whole line as written
    paths: tuple[PathGlob, ...] = ()
    location: Location | None = None
    hosts: tuple[NameGlob, ...] = ()
    urls: tuple[TextMatcher, ...] = ()
    mcp_servers: tuple[NameGlob, ...] = ()
    mcp_tools: tuple[NameGlob, ...] = ()
    questions: tuple[TextMatcher, ...] = ()
    always: bool = False
    message: str | None = None
    deadline: float | None = None
    on_timeout: TimeoutChoice | None = None
    choices: tuple[str, ...] = ()  # question answers: ids or labels, or "first"
    text: str | None = None  # question answer: free text
    override_guards: frozenset[str] = frozenset()

    @property
    def matches_everything(self) -> bool:
        """No condition at all: every later rule of its kind is unreachable."""
        conditions = (
            self.agents,
            self.tools,
            self.commands,
            self.command_lines,
            self.paths,
            self.location,
            self.hosts,
            self.urls,
            self.mcp_servers,
            self.mcp_tools,
            self.questions,
        )
        return not any(conditions) and self.action is not Action.ANSWER


@attrs.frozen(kw_only=True)
class PolicySpec:
    source: str  # the file (or preset) it came from
    rules: tuple[Rule, ...] = ()
    mode: PermissionMode | None = None  # None: the session's mode
    guards: Mapping[str, GuardAction] = attrs.field(factory=dict)
    writable: tuple[PathGlob, ...] = ()  # where write-outside-session lets writes pass
    deadline: float | None = None  # for every forwarded request without its own
    on_timeout: TimeoutChoice | None = None
    description: str | None = None
    sandbox: SandboxMode = SandboxMode.AUTO
    warnings: tuple[Problem, ...] = ()  # a rule that can never match, ...

    def guard_action(self, guard: str) -> GuardAction:
        return self.guards.get(guard, _DEFAULT_GUARD_ACTIONS.get(guard, GuardAction.DENY))
