"""What rules look at in a request, and whether one rule matches.

`request_facts` turns a permission request into `Facts`: the agent, the
tool kind, the MCP server and tool, the command line (parsed), the URL and
its host, and the request's *subjects*. A subject is one thing the request
would act on: each simple command of an Execute line (with the directory
it runs in, following `cd`), or each path a file tool names (its input,
its diffs, its locations). A request with none has one empty subject.

Rules are matched per subject; `mismatch` returns None when a rule matches
a subject, else the reason it does not, for explanations. A condition the
rule leaves out matches anything; a condition the request cannot satisfy
(a `command` on a Read) does not match. Rules that allow are strict about
paths (every form of the path must match); rules that deny or ask are not
(one form is enough), so a symbolic link can widen a deny but never an
allow.
"""

from __future__ import annotations

import os
from urllib.parse import urlsplit

import attrs

from ..events import (
    CommandInput,
    Mcp,
    PathInput,
    PermissionRequest,
    Question,
    UrlInput,
)
from ..policy import PolicyContext
from ._model import Action, Location, NameGlob, Rule, TextMatcher
from ._paths import PathFacts, PathGlob, expand_home, path_facts
from ._programs import program_of
from ._shell import ShellLine, SimpleCommand, parse_shell

__all__ = ["Facts", "Subject", "mismatch", "question_mismatch", "request_facts"]


@attrs.frozen(kw_only=True)
class Subject:
    label: str
    command: SimpleCommand | None = None
    cwd: str | None = None  # where the command runs; None once a `cd` went somewhere unknown
    path: PathFacts | None = None
    origin: str = ""  # for paths: input, diff or location


@attrs.frozen(kw_only=True)
class Facts:
    agent: str
    tool: str  # a ToolKind value, or "Mcp"
    session_dir: str
    home: str
    subjects: tuple[Subject, ...]
    mcp: Mcp | None = None
    line: str | None = None
    shell: ShellLine | None = None
    url: str | None = None
    host: str | None = None


def request_facts(request: PermissionRequest, context: PolicyContext, home: str) -> Facts:
    tool = request.tool
    session_dir = os.path.abspath(context.session_dir or ".")
    kind = tool.kind
    url = tool.input.url if isinstance(tool.input, UrlInput) else None
    facts = Facts(
        agent=context.agent_id,
        tool="Mcp" if isinstance(kind, Mcp) else kind.value,
        session_dir=session_dir,
        home=home,
        subjects=(),
        mcp=kind if isinstance(kind, Mcp) else None,
        url=url,
        host=None if url is None else _host(url),
    )
    if isinstance(tool.input, CommandInput):
        shell = parse_shell(tool.input.command)
        base = session_dir
        if tool.input.cwd:
            base = os.path.normpath(os.path.join(session_dir, expand_home(tool.input.cwd, home)))
        return attrs.evolve(
            facts,
            line=tool.input.command,
            shell=shell,
            subjects=_command_subjects(shell, base, home),
        )
    named = [("input", tool.input.path)] if isinstance(tool.input, PathInput) else []
    named += [("diff", diff.path) for diff in tool.diffs]
    named += [("location", location) for location in tool.locations]
    seen: set[str] = set()
    subjects: list[Subject] = []
    for origin, given in named:
        if given and given not in seen:
            seen.add(given)
            path = path_facts(given, base=session_dir, session_dir=session_dir, home=home)
            subjects.append(Subject(label=f"path {given}", path=path, origin=origin))
    return attrs.evolve(facts, subjects=tuple(subjects) or (Subject(label="the request"),))


def _host(url: str) -> str | None:
    try:
        return urlsplit(url if "://" in url else "//" + url).hostname
    except ValueError:
        return None


def _command_subjects(shell: ShellLine, base: str, home: str) -> tuple[Subject, ...]:
    subjects = []
    cwd: str | None = base
    for command in shell.commands:
        subjects.append(Subject(label=f"command {command.text!r}", command=command, cwd=cwd))
        program, arguments = program_of(command.words)
        if program in ("cd", "pushd"):
            cwd = _changed_directory(cwd, arguments, home)
    return tuple(subjects) or (Subject(label="an empty command line", cwd=base),)


def _changed_directory(cwd: str | None, arguments: tuple[str, ...], home: str) -> str | None:
    targets = [argument for argument in arguments if not argument.startswith("-")]
    target = expand_home(targets[0], home) if targets else home
    if "$" in target or "`" in target:
        return None  # somewhere only the shell knows
    if os.path.isabs(target):
        return os.path.normpath(target)
    return None if cwd is None else os.path.normpath(os.path.join(cwd, target))


def _names(globs: tuple[NameGlob, ...] | tuple[PathGlob, ...]) -> str:
    return " or ".join(repr(glob.source) for glob in globs)


def _matchers(matchers: tuple[TextMatcher, ...]) -> str:
    return " or ".join(matcher.describe() for matcher in matchers)


def mismatch(rule: Rule, facts: Facts, subject: Subject) -> str | None:
    """None if `rule` matches this subject of the request, else why not."""
    strict = rule.action is Action.ALLOW
    checks = (
        _identity_mismatch(rule, facts),
        _command_mismatch(rule, facts, subject),
        _path_mismatch(rule, subject, strict),
        _url_mismatch(rule, facts),
    )
    return next((reason for reason in checks if reason is not None), None)


def _identity_mismatch(rule: Rule, facts: Facts) -> str | None:
    if rule.agents and not any(glob.matches(facts.agent) for glob in rule.agents):
        return f"agent {facts.agent!r} is not {_names(rule.agents)}"
    if rule.tools and facts.tool not in rule.tools:
        return f"tool {facts.tool} is not {' or '.join(sorted(rule.tools))}"
    if rule.mcp_servers and not (
        facts.mcp and any(glob.matches(facts.mcp.server) for glob in rule.mcp_servers)
    ):
        return f"MCP server is not {_names(rule.mcp_servers)}"
    if rule.mcp_tools and not (
        facts.mcp and any(glob.matches(facts.mcp.tool) for glob in rule.mcp_tools)
    ):
        return f"MCP tool is not {_names(rule.mcp_tools)}"
    return None


def _command_mismatch(rule: Rule, facts: Facts, subject: Subject) -> str | None:
    if rule.command_lines:
        line = (facts.line or "").strip()
        if not any(matcher.matches_text(line) for matcher in rule.command_lines):
            return f"command line does not match {_matchers(rule.command_lines)}"
    if rule.commands:
        command = subject.command
        if command is None:
            return "there is no command"
        if not any(matcher.matches_command(command) for matcher in rule.commands):
            return f"{command.text!r} does not match {_matchers(rule.commands)}"
    return None


def _path_mismatch(rule: Rule, subject: Subject, strict: bool) -> str | None:
    if not (rule.paths or rule.location):
        return None
    path = subject.path
    if path is None:
        return "there is no path"
    if rule.paths and not any(glob.matches(path, every_form=strict) for glob in rule.paths):
        return f"{path.resolved} does not match {_names(rule.paths)}"
    if rule.location is not None:
        wanted = rule.location is Location.INSIDE
        agree = [inside == wanted for inside in path.inside]
        if not (all(agree) if strict else any(agree)):
            return f"{path.resolved} is not {rule.location.value} the session directory"
    return None


def _url_mismatch(rule: Rule, facts: Facts) -> str | None:
    if rule.hosts and not (
        facts.host and any(glob.matches(facts.host.lower()) for glob in rule.hosts)
    ):
        return f"host {facts.host!r} is not {_names(rule.hosts)}"
    if rule.urls and not (facts.url and any(m.matches_text(facts.url) for m in rule.urls)):
        return f"URL {facts.url!r} does not match {_matchers(rule.urls)}"
    return None


def question_mismatch(rule: Rule, agent: str, question: Question) -> str | None:
    if rule.agents and not any(glob.matches(agent) for glob in rule.agents):
        return f"agent {agent!r} is not {_names(rule.agents)}"
    if rule.questions:
        texts = [question.text] + ([question.header] if question.header else [])
        if not any(m.matches_text(text) for m in rule.questions for text in texts):
            return f"question {question.text!r} does not match {_matchers(rule.questions)}"
    return None
