"""Loading policies (files, presets) and asking one to explain itself.

`load_policy(path)` reads a TOML policy file, or `preset:<Name>` for a
shipped preset (`presets/<Name>.toml`), and returns a `RulePolicy`, or
raises `PolicyError` (an `InvalidConfiguration` `CorralError`) naming every
problem with its line. It is the `policy_loader` a `Runtime` takes.
`guarded_modes()` is the policy with no rules: the session's mode, with
the guards.

`classify(line)` says what the guards make of each command of a shell
line: `Harmless()`, `Dangerous(guard, word)` or `Unknown(reason, word)`.

`explain(policy, "Execute", command="...")` builds the request an agent
would send and returns the `Explanation` of what the policy would do with
it; `explain_request` does the same for a real request.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from importlib import resources

from ..commands import PermissionMode
from ..events import (
    Choice,
    CommandInput,
    Mcp,
    NoInput,
    PathInput,
    PermissionChoice,
    PermissionRequest,
    Question,
    QuestionRequest,
    Request,
    ToolInput,
    ToolKind,
    ToolStatus,
    ToolUpdate,
    UrlInput,
)
from ..policy import Policy, PolicyContext
from ._explain import Explanation
from ._guards import Guards
from ._loader import PolicyError, parse_spec
from ._match import request_facts
from ._model import PolicySpec, Problem
from ._policy import RulePolicy
from ._verdicts import CommandVerdict

__all__ = [
    "PRESETS",
    "classify",
    "explain",
    "explain_question",
    "explain_request",
    "guarded_modes",
    "load_policy",
    "load_preset",
    "parse_policy",
    "preset_text",
]

PRESETS = ("Ask", "AutoApprove", "AcceptEdits")
_PRESET_PREFIX = "preset:"


def _home(home: str | None) -> str:
    return home if home is not None else os.path.expanduser("~")


def parse_policy(text: str, *, source: str = "<policy>", home: str | None = None) -> RulePolicy:
    home = _home(home)
    return RulePolicy(spec=parse_spec(text, source=source, home=home), home=home)


def load_policy(path: str | os.PathLike[str], *, home: str | None = None) -> RulePolicy:
    """A policy file, or `preset:<Name>`; PolicyError says what is wrong, with lines."""
    source = os.fspath(path)
    if source.startswith(_PRESET_PREFIX):
        return load_preset(source.removeprefix(_PRESET_PREFIX), home=home)
    try:
        with open(source, encoding="utf-8") as file:
            text = file.read()
    except OSError as error:
        raise PolicyError(source, [Problem(None, f"cannot read: {error.strerror}")]) from None
    except UnicodeDecodeError:
        raise PolicyError(source, [Problem(None, "not UTF-8 text")]) from None
    return parse_policy(text, source=source, home=home)


def preset_text(name: str) -> str:
    if name not in PRESETS:
        problem = Problem(None, f"unknown preset {name!r}; presets: {', '.join(PRESETS)}")
        raise PolicyError(_PRESET_PREFIX + name, [problem])
    return (
        resources.files(__name__.rpartition(".")[0])
        .joinpath("presets", f"{name}.toml")
        .read_text("utf-8")
    )


def load_preset(name: str, *, home: str | None = None) -> RulePolicy:
    return parse_policy(preset_text(name), source=_PRESET_PREFIX + name, home=home)


def classify(
    line: str, *, session_dir: str = ".", home: str | None = None
) -> tuple[tuple[str, CommandVerdict], ...]:
    """Each command of a shell line with its verdict: harmless, dangerous or unknown."""
    home = _home(home)
    request = PermissionRequest(
        id="classify",
        tool=ToolUpdate(
            id="classify",
            kind=ToolKind.EXECUTE,
            title="classify",
            status=ToolStatus.PENDING,
            input=CommandInput(command=line),
        ),
        options=_ALL_CHOICES,
    )
    context = PolicyContext(
        agent_id="any", session_dir=os.path.abspath(session_dir), mode=PermissionMode.ASK
    )
    facts = request_facts(request, context, home)
    verdicts = Guards(home).classify(facts)
    return tuple(
        (subject.label, verdict) for subject, verdict in zip(facts.subjects, verdicts, strict=True)
    )


def guarded_modes(*, home: str | None = None) -> RulePolicy:
    """No rules: the session's mode decides, and the guards stop its allows."""
    home = _home(home)
    return RulePolicy(spec=PolicySpec(source="<modes>"), home=home)


# ---- explanations -------------------------------------------------------------------

_ALL_CHOICES = tuple(PermissionChoice)


def explain_request(policy: Policy, request: Request, context: PolicyContext) -> Explanation:
    if isinstance(policy, RulePolicy):
        return policy.explain_request(request, context)
    return Explanation(
        request=f"{type(request).__name__} {request.id}",
        verdict=policy.decide(request, context),
        notes=(f"{type(policy).__name__} is not a rule policy: no trace",),
    )


def explain(
    policy: Policy,
    tool: ToolKind | Mcp | str,
    *,
    command: str | None = None,
    path: str | Sequence[str] | None = None,
    url: str | None = None,
    mcp: Mcp | str | None = None,
    agent: str = "any",
    session_dir: str = ".",
    mode: PermissionMode = PermissionMode.ASK,
    options: Sequence[PermissionChoice] = _ALL_CHOICES,
) -> Explanation:
    """What `policy` would do with this permission request, and why.

    `tool` is a tool kind (`"Execute"`, `ToolKind.EDIT`, ...) or `"Mcp"`
    with `mcp="server/tool"`; `path` may list several paths (the first is
    the tool's input, the others its locations).
    """
    kind = _tool_kind(tool, mcp)
    paths = [path] if isinstance(path, str) else list(path or [])
    tool_input: ToolInput = NoInput()
    if command is not None:
        tool_input = CommandInput(command=command)
    elif url is not None:
        tool_input = UrlInput(url)
    elif paths:
        tool_input = PathInput(paths.pop(0))
    request = PermissionRequest(
        id="explain",
        tool=ToolUpdate(
            id="explain",
            kind=kind,
            title=str(tool),
            status=ToolStatus.PENDING,
            input=tool_input,
            locations=tuple(paths),
        ),
        options=tuple(options),
    )
    context = PolicyContext(agent_id=agent, session_dir=os.path.abspath(session_dir), mode=mode)
    return explain_request(policy, request, context)


def explain_question(
    policy: Policy,
    text: str,
    *,
    choices: Sequence[str] = (),
    multi_select: bool = False,
    agent: str = "any",
    session_dir: str = ".",
    mode: PermissionMode = PermissionMode.ASK,
) -> Explanation:
    """What `policy` would answer to one question (choices are ids and labels)."""
    question = Question(
        id="q1",
        text=text,
        choices=tuple(Choice(id=choice, label=choice) for choice in choices),
        multi_select=multi_select,
        allows_free_text=not choices,
    )
    request = QuestionRequest(id="explain", questions=(question,))
    context = PolicyContext(agent_id=agent, session_dir=os.path.abspath(session_dir), mode=mode)
    return explain_request(policy, request, context)


def _tool_kind(tool: ToolKind | Mcp | str, mcp: Mcp | str | None) -> ToolKind | Mcp:
    if isinstance(mcp, Mcp):
        return mcp
    if mcp is not None:
        server, _, name = mcp.partition("/")
        return Mcp(server=server, tool=name)
    if isinstance(tool, ToolKind | Mcp):
        return tool
    kinds = {kind.value.lower(): kind for kind in ToolKind}
    found = kinds.get(tool.lower())
    if found is None:
        known = ", ".join(kind.value for kind in ToolKind)
        raise ValueError(f"unknown tool kind {tool!r}; expected one of {known} or Mcp")
    return found
