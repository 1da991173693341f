"""`corral policy ...`: check a policy file, ask it what it would decide.

corral policy check FILE...            every problem with its line; exit 1 if any
corral policy explain FILE --tool Execute --command "git push"
                                       which rule (or guard, or mode) decides, and why;
                                       for a guard, the word of the line it saw
                                       (`python -c ...`: '-c', inline code)
corral policy preset NAME              print a shipped preset (to start a file from)

FILE may be `preset:<Name>`. `register_cli(subparsers)` adds the `policy`
command to the main parser; everything here is synchronous. `main` runs
the same commands standalone (`python -m corral.actors.policy_cli policy
check FILE`), for tests and until the command is wired in.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from typing import Any

from ..pipeline.commands import PermissionMode
from ..pipeline.events import PermissionChoice, ToolKind
from ..pipeline.rules import (
    PRESETS,
    Explanation,
    PolicyError,
    RulePolicy,
    explain,
    explain_question,
    load_policy,
    preset_text,
)

__all__ = ["main", "register_cli"]

_TOOLS = [kind.value for kind in ToolKind] + ["Mcp"]


def register_cli(subparsers: Any) -> None:
    """Add `policy check|explain|preset` to the `corral` command's subparsers."""
    policy = subparsers.add_parser(
        "policy",
        help="check a permission policy file, or explain what it would decide",
        description="Permission policy files (TOML): check them, explain their decisions.",
    )
    commands = policy.add_subparsers(dest="policy_command", required=True, metavar="ACTION")

    check = commands.add_parser("check", help="validate policy files; problems with line numbers")
    check.add_argument("files", nargs="+", metavar="FILE", help="a policy file or preset:<Name>")
    check.set_defaults(run=_check)

    explain_cmd = commands.add_parser(
        "explain",
        help="say which rule would decide a request, and why "
        "(for a guard: which word of the command line it saw)",
    )
    explain_cmd.add_argument("file", metavar="FILE", help="a policy file or preset:<Name>")
    _request_arguments(explain_cmd)
    explain_cmd.set_defaults(run=_explain)

    preset = commands.add_parser("preset", help="print a shipped preset policy")
    preset.add_argument("name", choices=PRESETS)
    preset.set_defaults(run=_preset)


def _request_arguments(parser: argparse.ArgumentParser) -> None:
    what = parser.add_argument_group("the request")
    what.add_argument("--tool", choices=_TOOLS, type=_tool_name, help="the tool kind")
    what.add_argument("--command", help="the command line (Execute)")
    what.add_argument(
        "--path", action="append", default=[], help="a path the tool touches (repeatable)"
    )
    what.add_argument("--url", help="the URL (Fetch)")
    what.add_argument("--mcp", metavar="SERVER/TOOL", help="the MCP server and tool")
    what.add_argument("--question", help="explain a question instead of a permission")
    what.add_argument(
        "--choice", action="append", default=[], help="a choice the question offers (repeatable)"
    )
    where = parser.add_argument_group("the session")
    where.add_argument("--agent", default="any", help="the agent id (default: any)")
    where.add_argument("--dir", default=".", help="the session directory (default: .)")
    where.add_argument(
        "--mode",
        choices=[mode.value for mode in PermissionMode],
        default=PermissionMode.ASK.value,
        help="the session's permission mode (default: Ask)",
    )
    where.add_argument(
        "--offers",
        metavar="CHOICES",
        help="comma-separated choices the agent offers (default: all four)",
    )
    parser.add_argument("--json", action="store_true", help="print the explanation as JSON")


def _tool_name(text: str) -> str:
    for name in _TOOLS:
        if name.lower() == text.lower():
            return name
    return text


def _load(source: str) -> RulePolicy | None:
    try:
        return load_policy(source)
    except PolicyError as error:
        for problem in error.problems:
            print(problem.render(error.source), file=sys.stderr)
        return None


def _check(args: argparse.Namespace) -> int:
    failed = False
    for source in args.files:
        policy = _load(source)
        if policy is None:
            failed = True
            continue
        spec = policy.spec
        for warning in spec.warnings:
            print(f"{warning.render(source)} (warning)", file=sys.stderr)
        mode = spec.mode.value if spec.mode is not None else "the session's"
        guards = ", ".join(f"{g}={a.value}" for g, a in spec.guards.items()) or "all deny"
        rules = f"{len(spec.rules)} rule" + ("" if len(spec.rules) == 1 else "s")
        print(f"{source}: ok: {rules}; unmatched: {mode} mode; guards: {guards}")
    return 1 if failed else 0


def _explain(args: argparse.Namespace) -> int:
    policy = _load(args.file)
    if policy is None:
        return 1
    try:
        explanation = _explanation(policy, args)
    except ValueError as error:
        print(f"corral policy explain: {error}", file=sys.stderr)
        return 2
    if args.json:
        print(json.dumps(explanation.to_wire(), indent=2))
    else:
        print(explanation.render())
    return 0


def _explanation(policy: RulePolicy, args: argparse.Namespace) -> Explanation:
    mode = PermissionMode(args.mode)
    if args.question is not None:
        return explain_question(
            policy,
            args.question,
            choices=args.choice,
            agent=args.agent,
            session_dir=args.dir,
            mode=mode,
        )
    if args.tool is None and args.mcp is None:
        raise ValueError("say which tool: --tool KIND (or --mcp SERVER/TOOL, or --question)")
    return explain(
        policy,
        args.tool or "Mcp",
        command=args.command,
        path=args.path,
        url=args.url,
        mcp=args.mcp,
        agent=args.agent,
        session_dir=args.dir,
        mode=mode,
        options=_offers(args.offers),
    )


def _offers(text: str | None) -> tuple[PermissionChoice, ...]:
    if text is None:
        return tuple(PermissionChoice)
    names = {choice.value.lower(): choice for choice in PermissionChoice}
    offers = []
    for name in text.split(","):
        choice = names.get(name.strip().lower())
        if choice is None:
            raise ValueError(f"unknown choice {name!r}; expected {', '.join(names.values())}")
        offers.append(choice)
    return tuple(offers)


def _preset(args: argparse.Namespace) -> int:
    sys.stdout.write(preset_text(args.name))
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="corral")
    register_cli(parser.add_subparsers(dest="command", required=True, metavar="COMMAND"))
    args = parser.parse_args(argv)
    result: int = args.run(args)
    return result


if __name__ == "__main__":
    sys.exit(main())
