"""Where things are in a policy file's text, so errors can name a line.

`tomllib` gives values, not positions. This scanner reads the text once,
line by line, and remembers where each `[[rule]]` starts and where each key
of each section first appears (`command = ...`, `command.prefix = ...` and
`[rule.command]` all count as `command`). It skips the inside of
multi-line strings. It is a locator, not a parser: when it cannot tell,
callers fall back to the enclosing rule's line, or to no line.
"""

from __future__ import annotations

import re

__all__ = ["Locator", "Section"]

Section = tuple[str, int]  # ("top", 0), ("guards", 0), ("rule", index)

_RULE_HEADER = re.compile(r"\s*\[\[\s*rule\s*\]\]")
_RULE_SUBTABLE = re.compile(r"\s*\[\s*rule\s*\.\s*([A-Za-z0-9_-]+)")
_GUARDS_HEADER = re.compile(r"\s*\[\s*guards\s*\]")
_OTHER_HEADER = re.compile(r"\s*\[")
_KEY = re.compile(r"""\s*(?:"([^"]*)"|'([^']*)'|([A-Za-z0-9_-]+))\s*[.=]""")


class Locator:
    def __init__(self, text: str) -> None:
        self.rule_lines: list[int] = []
        self._keys: dict[Section, dict[str, int]] = {}
        self._guards_line: int | None = None
        section: Section = ("top", 0)
        open_string: str | None = None
        for number, line in enumerate(text.split("\n"), start=1):
            if open_string is not None:
                if line.count(open_string) % 2 == 1:
                    open_string = None
                continue
            section = self._read(line, number, section)
            for delimiter in ('"""', "'''"):
                if line.count(delimiter) % 2 == 1:
                    open_string = delimiter
                    break

    def _read(self, line: str, number: int, section: Section) -> Section:
        if _RULE_HEADER.match(line):
            self.rule_lines.append(number)
            return ("rule", len(self.rule_lines) - 1)
        subtable = _RULE_SUBTABLE.match(line)
        if subtable and section[0] == "rule":
            self._keys.setdefault(section, {}).setdefault(subtable.group(1), number)
            return section
        if _GUARDS_HEADER.match(line):
            self._guards_line = number
            return ("guards", 0)
        if _OTHER_HEADER.match(line):
            return ("other", 0)
        key = _KEY.match(line)
        if key:
            name = next(group for group in key.groups() if group is not None)
            self._keys.setdefault(section, {}).setdefault(name, number)
        return section

    def section_line(self, section: Section) -> int | None:
        kind, index = section
        if kind == "rule" and index < len(self.rule_lines):
            return self.rule_lines[index]
        if kind == "guards":
            return self._guards_line or self._keys.get(("top", 0), {}).get("guards")
        return None

    def line(self, section: Section, key: str | None = None) -> int | None:
        """The line of `key` in `section`, else of the section itself."""
        if key is not None:
            found = self._keys.get(section, {}).get(key)
            if found is not None:
                return found
        return self.section_line(section)
