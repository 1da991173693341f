"""What the README tells a reader holds: its policy example loads and decides as it says."""

from __future__ import annotations

import re
from pathlib import Path

from corral.pipeline.rules import explain, parse_policy

README = Path(__file__).resolve().parents[2] / "README.md"


def _section(title: str) -> str:
    text = README.read_text()
    start = text.index(f"## {title}\n")
    end = text.find("\n## ", start + 1)
    return text[start : end if end != -1 else len(text)]


def test_the_readme_gives_exactly_two_setup_commands() -> None:
    (block,) = re.findall(r"```sh\n(.*?)```", _section("Two commands"), re.S)
    commands = [line.split("#")[0].strip() for line in block.splitlines() if line.strip()]
    assert commands == ["make demo", "make test"]


def test_the_policy_example_loads_and_decides_as_the_readme_says() -> None:
    (toml,) = re.findall(r"```toml\n(.*?)```", _section("Permission policy"), re.S)
    policy = parse_policy(toml, source="README.md")
    compound = explain(policy, "Execute", command="npm test && pip install left-pad")
    assert compound.outcome == "deny_once" and compound.decided_by == "rule:no-installs"
    assert explain(policy, "Execute", command="make check").decided_by == "rule:tests"
