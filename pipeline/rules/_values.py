"""Reading typed values out of a TOML table, collecting problems with their lines.

`ValueReader` is the loader's base: each reader takes a table, the section
it sits in (for the line) and a key, returns the checked value or a neutral
default, and records a `Problem` when the value is wrong. It never raises,
so one pass over a file reports every problem.
"""

from __future__ import annotations

import difflib
import re
import shlex
from collections.abc import Callable, Sequence
from typing import Any, TypeVar

from ..events import ToolKind
from ._locate import Locator, Section
from ._model import NameGlob, Problem, TextMatcher
from ._paths import PathGlob, glob_regex

__all__ = ["QUESTION_KEYS", "ValueReader", "unknown"]

E = TypeVar("E", bound=Any)

QUESTION_KEYS = ("question", "choice", "text", "deadline")
_TOOLS = {kind.value.lower(): kind.value for kind in ToolKind} | {"mcp": "Mcp"}


class ValueReader:
    def __init__(self, locator: Locator, home: str) -> None:
        self.locator = locator
        self.home = home
        self.problems: list[Problem] = []
        self.warnings: list[Problem] = []

    def fail(self, section: Section, key: str | None, message: str) -> None:
        self.problems.append(Problem(self.locator.line(section, key), message))

    def unknown_keys(
        self,
        table: dict[str, Any],
        section: Section,
        allowed: Sequence[str],
        where: str,
        elsewhere: Sequence[str] = (),
    ) -> None:
        for key in table:
            if key in allowed:
                continue
            if key in elsewhere or key in QUESTION_KEYS:
                self.fail(section, key, f"`{key}` does not apply to {where}")
            else:
                self.fail(section, key, unknown(f"key in {where}", key, allowed))

    def text(self, table: dict[str, Any], section: Section, key: str) -> str | None:
        value = table.get(key)
        if value is None:
            return None
        if not isinstance(value, str):
            self.fail(section, key, f"`{key}` must be a string, not {_type(value)}")
            return None
        return value

    def flag(self, table: dict[str, Any], section: Section, key: str) -> bool:
        value = table.get(key, False)
        if not isinstance(value, bool):
            self.fail(section, key, f"`{key}` must be true or false, not {_type(value)}")
            return False
        return value

    def seconds(self, table: dict[str, Any], section: Section, key: str) -> float | None:
        value = table.get(key)
        if value is None:
            return None
        if isinstance(value, bool) or not isinstance(value, int | float) or value <= 0:
            self.fail(section, key, f"`{key}` must be a positive number of seconds")
            return None
        return float(value)

    def choice(
        self,
        table: dict[str, Any],
        section: Section,
        key: str,
        kind: type[E],
        fold_case: bool = False,
    ) -> E | None:
        value = table.get(key)
        if value is None:
            return None
        names = {member.value: member for member in kind}
        if fold_case:
            names |= {member.value.lower(): member for member in kind}
        wanted = value.lower() if fold_case and isinstance(value, str) else value
        if not isinstance(wanted, str) or (value not in names and wanted not in names):
            self.fail(section, key, unknown(f"`{key}`", value, [m.value for m in kind]))
            return None
        found: E = names[value] if value in names else names[wanted]
        return found

    def strings(self, table: dict[str, Any], section: Section, key: str) -> tuple[str, ...]:
        value = table.get(key)
        if value is None:
            return ()
        items = value if isinstance(value, list) else [value]
        if not items or not all(isinstance(item, str) and item for item in items):
            self.fail(section, key, f"`{key}` must be a non-empty string or list of strings")
            return ()
        return tuple(items)

    def names(
        self, table: dict[str, Any], section: Section, key: str, fold_case: bool = False
    ) -> tuple[NameGlob, ...]:
        return tuple(
            NameGlob.parse(name, fold_case=fold_case) for name in self.strings(table, section, key)
        )

    def tools(self, table: dict[str, Any], section: Section) -> list[str]:
        found = []
        for name in self.strings(table, section, "tool"):
            canonical = _TOOLS.get(name.lower())
            if canonical is None:
                self.fail(section, "tool", unknown("tool kind", name, list(_TOOLS.values())))
            else:
                found.append(canonical)
        return found

    def path_globs(self, table: dict[str, Any], section: Section, key: str) -> tuple[PathGlob, ...]:
        globs = []
        for source in self.strings(table, section, key):
            try:
                globs.append(PathGlob.parse(source, home=self.home))
            except ValueError as error:
                self.fail(section, key, str(error))
        return tuple(globs)

    def matchers(
        self, table: dict[str, Any], section: Section, key: str, words: bool = False
    ) -> tuple[TextMatcher, ...]:
        value = table.get(key)
        if value is None:
            return ()
        items = value if isinstance(value, list) else [value]
        found = []
        for item in items:
            matcher = self.matcher(item, section, key, words)
            if matcher is not None:
                found.append(matcher)
        return tuple(found)

    def matcher(self, item: object, section: Section, key: str, words: bool) -> TextMatcher | None:
        how, pattern = "prefix", item
        if isinstance(item, dict):
            if len(item) != 1 or next(iter(item)) not in ("prefix", "glob", "regex"):
                self.fail(section, key, f"`{key}` takes one of prefix, glob or regex")
                return None
            how, pattern = next(iter(item.items()))
        if not isinstance(pattern, str) or not pattern:
            self.fail(section, key, f"`{key}` must be a non-empty string or {{{how} = ...}}")
            return None
        if how == "prefix":
            return TextMatcher(how, pattern, words=tuple(_split_words(pattern)) if words else ())
        compile_: Callable[[str], re.Pattern[str]] = glob_regex if how == "glob" else re.compile
        try:
            return TextMatcher(how, pattern, regex=compile_(pattern))
        except re.error as error:
            self.fail(section, key, f"bad regex {pattern!r}: {error}")
            return None


def _split_words(pattern: str) -> list[str]:
    try:
        return shlex.split(pattern)
    except ValueError:
        return pattern.split()


def _type(value: object) -> str:
    return {dict: "a table", list: "a list", str: "a string", bool: "a boolean"}.get(
        type(value), "a number"
    )


def unknown(what: str, value: object, known: Sequence[str]) -> str:
    close = difflib.get_close_matches(str(value), list(known), n=1)
    hint = f" (did you mean {close[0]!r}?)" if close else f" (expected one of {', '.join(known)})"
    return f"unknown {what} {value!r}{hint}"
