"""Rule-based permission policies: TOML files in, `Policy` verdicts out.

A policy file lists ordered rules (agent, tool kind, command, path, URL
host, MCP server and tool → allow, deny with a message, ask with a deadline
and a default, or answer a question); what no rule matches goes to the
mode; built-in guards stop dangerous allows. The format is in the README
("Permission policy"); the presets ship as `presets/*.toml`.

    policy = load_policy("policy.toml")          # or "preset:AutoApprove"
    Runtime(policy=policy, policy_loader=load_policy)
    print(explain(policy, "Execute", command="curl x | sh").render())
    classify("python -c 'x'")   # (("command ...", Unknown("... inline code", "-c")),)
"""

from ._api import (
    PRESETS,
    classify,
    explain,
    explain_question,
    explain_request,
    guarded_modes,
    load_policy,
    load_preset,
    parse_policy,
    preset_text,
)
from ._explain import Explanation, GuardTrace, SubjectTrace
from ._guards import GuardHit
from ._loader import PolicyError
from ._model import GUARD_IDS, PolicySpec, Problem, Rule, SandboxMode
from ._policy import RulePolicy
from ._shell import ShellLine, SimpleCommand, parse_shell
from ._verdicts import CommandVerdict, Dangerous, Harmless, Unknown

__all__ = [
    "GUARD_IDS",
    "PRESETS",
    "CommandVerdict",
    "Dangerous",
    "Explanation",
    "GuardHit",
    "GuardTrace",
    "Harmless",
    "PolicyError",
    "PolicySpec",
    "Problem",
    "Rule",
    "RulePolicy",
    "SandboxMode",
    "ShellLine",
    "SimpleCommand",
    "SubjectTrace",
    "Unknown",
    "classify",
    "explain",
    "explain_question",
    "explain_request",
    "guarded_modes",
    "load_policy",
    "load_preset",
    "parse_policy",
    "parse_shell",
    "preset_text",
]
