"""Policy files (TOML) in, a checked `PolicySpec` out, or every problem with its line.

`parse_spec` reads the text with `tomllib`, then checks each key of each
table against the format (README, "Permission policy"): unknown keys (with
a suggestion), wrong types, unknown tool kinds, conditions that cannot
apply to the action or to the tools, bad regexes and globs, duplicate ids.
It collects every problem instead of stopping at the first, and raises one
`PolicyError` naming each with its line (`Locator`). Problems that do not
make the policy wrong (a rule no request can reach) are `warnings`.
"""

from __future__ import annotations

import re
import tomllib
from collections.abc import Sequence
from typing import Any

import attrs

from ..commands import PermissionMode
from ..errors import CorralError, ErrorKind
from ..events import ToolKind
from ._locate import Locator, Section
from ._model import (
    GUARD_IDS,
    Action,
    GuardAction,
    Location,
    PolicySpec,
    Problem,
    RequestKind,
    Rule,
    SandboxMode,
    TimeoutChoice,
)
from ._paths import PathGlob
from ._values import QUESTION_KEYS, ValueReader, unknown

__all__ = ["PolicyError", "Problem", "parse_spec"]

_TOP_KEYS = (
    *("version", "description", "mode", "deadline", "on_timeout", "guards", "rule"),
    "sandbox",
)
_COMMON_KEYS = ("id", "description", "request", "action", "agent")
_PERMISSION_KEYS = (
    *("tool", "command", "command_line", "path", "location", "host", "url"),
    *("mcp_server", "mcp_tool", "always", "message", "deadline", "on_timeout"),
    "override_guards",
)
_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.:-]*")
_FILE_TOOLS = frozenset(kind.value for kind in ToolKind) - {"Execute"} | {"Mcp"}


class PolicyError(CorralError):
    """A policy that cannot be used; `problems` lists each, with its line."""

    def __init__(self, source: str, problems: Sequence[Problem]) -> None:
        self.source = source
        self.problems = tuple(problems)
        super().__init__(
            ErrorKind.INVALID_CONFIGURATION,
            "invalid policy: " + "; ".join(p.render(source) for p in self.problems),
            file=source,
            problems=[{"line": p.line, "message": p.message} for p in self.problems],
        )


def parse_spec(text: str, *, source: str, home: str) -> PolicySpec:
    try:
        document = tomllib.loads(text)
    except tomllib.TOMLDecodeError as error:
        raise PolicyError(source, [_toml_problem(str(error), text)]) from None
    checker = _Checker(Locator(text), home)
    spec = checker.spec(document, source)
    if checker.problems:
        raise PolicyError(source, _by_line(checker.problems))
    return attrs.evolve(spec, warnings=tuple(_by_line(checker.warnings)))


def _by_line(problems: Sequence[Problem]) -> list[Problem]:
    """In file order (problems without a line first), as `policy check` prints them."""
    return sorted(problems, key=lambda problem: problem.line or 0)


_UNTERMINATED = 'unterminated string: close it on its line (or use """ for several lines)'


def _toml_problem(error: str, text: str) -> Problem:
    """tomllib's complaint, said in the policy's words where it is obscure."""
    found = re.search(r"\(at line (\d+), column \d+\)", error)
    line = int(found.group(1)) if found else None
    message = re.sub(r"\s*\(at (line \d+, column \d+|end of document)\)", "", error)
    if message == "Illegal character '\\n'":  # a newline inside a one-line string
        return Problem(line, _UNTERMINATED)
    if message in ("Unterminated string", 'Expected "\'"'):
        return Problem(_open_string_line(text), _UNTERMINATED)
    return Problem(line, f"not TOML: {message}")


def _open_string_line(text: str) -> int | None:
    """Where the string that runs to the end of the file starts (a best guess).

    A multi-line string still open at the end, else the last line (not a
    comment) with an odd number of quotes of one kind.
    """
    multi: tuple[str, int] | None = None  # the open delimiter, and its line
    odd: int | None = None
    for number, line in enumerate(text.split("\n"), start=1):
        if multi is not None:
            if line.count(multi[0]) % 2 == 1:
                multi = None
            continue
        opener = next((d for d in ('"""', "'''") if line.count(d) % 2 == 1), None)
        if opener is not None:
            multi = (opener, number)
            continue
        plain = line.replace("\\\\", "").replace('\\"', "")
        if not plain.lstrip().startswith("#") and (plain.count('"') % 2 or plain.count("'") % 2):
            odd = number
    return multi[1] if multi is not None else odd


class _Checker(ValueReader):
    def __init__(self, locator: Locator, home: str) -> None:
        super().__init__(locator, home)
        self.rule_ids: list[tuple[str, int]] = []  # every rule id that reads, and its line

    # ---- the document ------------------------------------------------------------

    def spec(self, document: dict[str, Any], source: str) -> PolicySpec:
        top: Section = ("top", 0)
        self.unknown_keys(document, top, _TOP_KEYS, "the policy")
        version = document.get("version", 1)
        if version != 1:
            self.fail(top, "version", f"version {version!r} is not supported; expected 1")
        raw_rules = document.get("rule", [])
        if not isinstance(raw_rules, list):
            self.fail(top, "rule", "`rule` must be an array of tables: write [[rule]]")
            raw_rules = []
        rules = [self.rule(raw, index) for index, raw in enumerate(raw_rules)]
        checked = tuple(rule for rule in rules if rule is not None)
        self.check_ids(self.rule_ids)
        self.check_reachable(checked)
        guards, writable = self.guards(document.get("guards", {}))
        return PolicySpec(
            source=source,
            rules=checked,
            mode=self.choice(document, top, "mode", PermissionMode, fold_case=True),
            guards=guards,
            writable=writable,
            deadline=self.seconds(document, top, "deadline"),
            on_timeout=self.choice(document, top, "on_timeout", TimeoutChoice),
            description=self.text(document, top, "description"),
            sandbox=self.choice(document, top, "sandbox", SandboxMode) or SandboxMode.AUTO,
        )

    def guards(self, raw: object) -> tuple[dict[str, GuardAction], tuple[PathGlob, ...]]:
        """The guards' actions, and the places `write-outside-session` lets pass."""
        section: Section = ("guards", 0)
        if not isinstance(raw, dict):
            self.fail(("top", 0), "guards", "`guards` must be a table: [guards]")
            return {}, ()
        self.unknown_keys(raw, section, (*GUARD_IDS, "writable"), "[guards]")
        found = {}
        for guard in GUARD_IDS:
            action = self.choice(raw, section, guard, GuardAction)
            if action is not None:
                found[guard] = action
        writable = self.path_globs(raw, section, "writable")
        for glob in writable:
            if glob.anchor != "absolute":
                self.fail(section, "writable", f"writable {glob.source!r}: start it with / or ~")
        return found, writable

    def check_ids(self, rule_ids: list[tuple[str, int]]) -> None:
        first: dict[str, int] = {}
        for rule_id, line in rule_ids:
            if rule_id in first:
                message = f"rule id {rule_id!r} is used twice (first at line {first[rule_id]})"
                self.problems.append(Problem(line, message))
            first.setdefault(rule_id, line)

    def check_reachable(self, rules: tuple[Rule, ...]) -> None:
        catch_all: dict[RequestKind, Rule] = {}
        for rule in rules:
            earlier = catch_all.get(rule.request)
            if earlier is not None:
                message = (
                    f"rule {rule.id!r} can never match: rule {earlier.id!r} "
                    f"(line {earlier.line}) matches every {rule.request.value} request before it"
                )
                self.warnings.append(Problem(rule.line, message))
            elif rule.matches_everything:
                catch_all[rule.request] = rule

    # ---- one rule ------------------------------------------------------------------

    def rule(self, raw: object, index: int) -> Rule | None:
        section: Section = ("rule", index)
        if not isinstance(raw, dict):
            self.fail(section, None, f"rule {index + 1} must be a table")
            return None
        request = self.choice(raw, section, "request", RequestKind) or RequestKind.PERMISSION
        allowed = _COMMON_KEYS + (
            QUESTION_KEYS if request is RequestKind.QUESTION else _PERMISSION_KEYS
        )
        self.unknown_keys(raw, section, allowed, f"a {request.value} rule", _PERMISSION_KEYS)
        rule_id = self.text(raw, section, "id")
        if rule_id is None:
            self.fail(section, None, f"rule {index + 1} has no `id`")
        elif not _ID.fullmatch(rule_id):
            self.fail(section, "id", f"rule id {rule_id!r}: use letters, digits, _ . : -")
        line = self.locator.line(section) or 0
        if rule_id is not None:
            self.rule_ids.append((rule_id, line))
        action = self.choice(raw, section, "action", Action)
        if action is None and "action" not in raw:
            self.fail(section, None, f"rule {rule_id or index + 1} has no `action`")
        fields = self.rule_fields(raw, section, request)
        if rule_id is None or action is None:
            return None
        # Checked even when a field was wrong (it reads as absent), so one run
        # names every problem; a policy with problems is never used.
        rule = Rule(
            id=rule_id,
            line=line,
            action=action,
            request=request,
            **fields,
        )
        self.check_rule(rule, raw, section)
        return rule

    def rule_fields(
        self, raw: dict[str, Any], section: Section, request: RequestKind
    ) -> dict[str, Any]:
        fields: dict[str, Any] = {
            "description": self.text(raw, section, "description"),
            "agents": self.names(raw, section, "agent"),
            "deadline": self.seconds(raw, section, "deadline"),
        }
        if request is RequestKind.QUESTION:
            fields["questions"] = self.matchers(raw, section, "question")
            fields["choices"] = self.strings(raw, section, "choice")
            fields["text"] = self.text(raw, section, "text")
            return fields
        tools = frozenset(self.tools(raw, section))
        if "mcp_server" in raw or "mcp_tool" in raw:
            tools = tools or frozenset({"Mcp"})
        if "command" in raw or "command_line" in raw:
            tools = tools or frozenset({"Execute"})
        fields.update(
            tools=tools,
            commands=self.matchers(raw, section, "command", words=True),
            command_lines=self.matchers(raw, section, "command_line", words=True),
            paths=self.path_globs(raw, section, "path"),
            location=self.choice(raw, section, "location", Location),
            hosts=self.names(raw, section, "host", fold_case=True),
            urls=self.matchers(raw, section, "url"),
            mcp_servers=self.names(raw, section, "mcp_server"),
            mcp_tools=self.names(raw, section, "mcp_tool"),
            always=self.flag(raw, section, "always"),
            message=self.text(raw, section, "message"),
            on_timeout=self.choice(raw, section, "on_timeout", TimeoutChoice),
            override_guards=frozenset(self.strings(raw, section, "override_guards")),
        )
        return fields

    def check_rule(self, rule: Rule, raw: dict[str, Any], section: Section) -> None:
        """Conditions and options that make no sense together."""
        if rule.action is Action.ALLOW and any(m.how == "prefix" for m in rule.command_lines):
            line = self.locator.line(section, "command_line")
            self.warnings.append(Problem(line, _CHAINED.format(rule=rule.id)))
        for guard in sorted(rule.override_guards - set(GUARD_IDS)):
            self.fail(section, "override_guards", unknown("guard", guard, GUARD_IDS))
        if (rule.mcp_servers or rule.mcp_tools) and rule.tools != {"Mcp"}:
            self.fail(section, "tool", "mcp_server and mcp_tool apply only to tool = Mcp")
        if (rule.commands or rule.command_lines) and rule.tools != {"Execute"}:
            self.fail(section, "tool", "command and command_line apply only to tool = Execute")
        if (rule.paths or rule.location) and rule.tools and not rule.tools & _FILE_TOOLS:
            self.fail(section, "path" if rule.paths else "location", _PATH_ON_EXECUTE)
        timeout_unread = "on_timeout" in raw and rule.on_timeout is None  # already a problem
        needs = {
            "always": rule.action in (Action.ALLOW, Action.DENY),
            "message": rule.action is Action.DENY or rule.on_timeout is not None or timeout_unread,
            "deadline": rule.action is Action.ASK,
            "on_timeout": rule.action is Action.ASK,
            "override_guards": rule.action is Action.ALLOW
            or timeout_unread
            or (rule.on_timeout is not None and rule.on_timeout.allows),
            "choice": rule.action is Action.ANSWER,
            "text": rule.action is Action.ANSWER,
        }
        for key, fits in needs.items():
            if key in raw and not fits:
                self.fail(section, key, f"`{key}` does not apply to action {rule.action.value!r}")
        if rule.action is Action.ANSWER and rule.request is RequestKind.PERMISSION:
            self.fail(section, "action", 'action "answer" is for request = "question" rules')
        if rule.action is Action.ANSWER and not (rule.choices or rule.text is not None):
            self.fail(section, "action", 'action "answer" needs `choice` or `text`')
        if rule.request is RequestKind.QUESTION and rule.action in (Action.ALLOW, Action.DENY):
            self.fail(section, "action", 'a question rule\'s action is "answer" or "ask"')


_CHAINED = (
    "rule {rule!r} allows by a command_line prefix, which also matches chained commands "
    "(`git status && rm -rf build`); match each command with `command` instead"
)
_PATH_ON_EXECUTE = "path and location do not apply to Execute (match its command instead)"
