"""Paths as the policy sees them, and the globs rules write about them.

A path an agent names is judged in two forms: `lexical` (made absolute
against its base directory, `~` and `$HOME` expanded, `..` folded, links
not followed) and `resolved` (every symbolic link followed, as the file
system will). An escape through `..` or through a link shows in the
resolved form. Rules that allow need every form to agree; rules that deny
or ask need only one (`PathFacts.forms`).

Globs: `*` and `?` stay within one path segment, `**` spans segments,
`[abc]` and `{a,b}` as in the shell. A glob starting with `/` or `~` is
absolute; one containing `/` is relative to the session directory (and
matches only inside it); one without `/` matches a file name at any depth
(like `.gitignore`).

The only I/O here is `os.path.realpath` (it reads links).
"""

from __future__ import annotations

import os
import re

import attrs

__all__ = [
    "PathFacts",
    "PathGlob",
    "expand_home",
    "glob_regex",
    "is_inside",
    "path_facts",
    "real_path",
]

_GLOB_CHARS = frozenset("*?[{")


def expand_home(path: str, home: str) -> str:
    for prefix in ("~", "$HOME", "${HOME}"):
        if path == prefix or path.startswith(prefix + "/"):
            return home + path[len(prefix) :]
    return path


def is_inside(path: str, root: str) -> bool:
    return path == root or path.startswith(root.rstrip("/") + "/")


@attrs.frozen(kw_only=True)
class PathFacts:
    given: str
    lexical: str
    resolved: str
    inside: tuple[bool, bool]  # (lexical, resolved) within the session directory
    roots: tuple[str, str]  # the session directory, lexical and resolved

    def forms(self) -> tuple[tuple[str, str, bool], ...]:
        """Each form as (path, its session root, whether it is inside)."""
        return (
            (self.lexical, self.roots[0], self.inside[0]),
            (self.resolved, self.roots[1], self.inside[1]),
        )


def path_facts(given: str, *, base: str, session_dir: str, home: str) -> PathFacts:
    lexical = os.path.normpath(os.path.join(base, expand_home(given, home)))
    resolved = real_path(lexical)
    roots = (os.path.normpath(session_dir), real_path(session_dir))
    return PathFacts(
        given=given,
        lexical=lexical,
        resolved=resolved,
        inside=(is_inside(lexical, roots[0]), is_inside(resolved, roots[1])),
        roots=roots,
    )


@attrs.frozen(kw_only=True)
class PathGlob:
    source: str
    anchor: str  # absolute, relative, name
    regexes: tuple[re.Pattern[str], ...]  # any of them may match

    @classmethod
    def parse(cls, source: str, *, home: str) -> PathGlob:
        """Compile a glob; ValueError says what is wrong with it."""
        if not source:
            raise ValueError("an empty path glob")
        pattern = expand_home(source, home)
        if pattern.startswith("/"):
            variants = {pattern, _resolve_literal_prefix(pattern)}
            return cls(
                source=source,
                anchor="absolute",
                regexes=tuple(_compile(v) for v in sorted(variants)),
            )
        pattern = pattern.removeprefix("./")
        anchor = "relative" if "/" in pattern.rstrip("/") else "name"
        return cls(source=source, anchor=anchor, regexes=(_compile(pattern.rstrip("/")),))

    def matches(self, facts: PathFacts, *, every_form: bool) -> bool:
        results = [self.matches_form(path, root, inside) for path, root, inside in facts.forms()]
        return all(results) if every_form else any(results)

    def matches_form(self, path: str, root: str, inside: bool) -> bool:
        if self.anchor == "absolute":
            subject = path
        elif self.anchor == "relative":
            if not inside or path == root:
                return False
            subject = os.path.relpath(path, root)
        else:
            subject = os.path.basename(path)
        return any(regex.fullmatch(subject) for regex in self.regexes)


def real_path(path: str) -> str:
    try:
        return os.path.realpath(path)
    except (ValueError, OSError):
        return path  # a NUL byte, a link loop: no file system path; judge it as written


def _resolve_literal_prefix(pattern: str) -> str:
    """`/tmp/**` on a system where /tmp is a link: also match where it leads."""
    parts = pattern.split("/")
    literal = 0
    while literal < len(parts) and not _GLOB_CHARS & set(parts[literal]):
        literal += 1
    prefix = "/".join(parts[:literal]) or "/"
    rest = "/".join(parts[literal:])
    resolved = real_path(prefix)
    if not rest:
        return resolved
    return resolved.rstrip("/") + "/" + rest


def _compile(glob: str) -> re.Pattern[str]:
    out: list[str] = []
    index = 0
    while index < len(glob):
        char = glob[index]
        if glob.startswith("**/", index):
            out.append("(?:.*/)?")
            index += 3
        elif glob.startswith("**", index):
            out.append(".*")
            index += 2
        elif char == "*":
            out.append("[^/]*")
            index += 1
        elif char == "?":
            out.append("[^/]")
            index += 1
        elif char == "[" and "]" in glob[index + 2 :]:
            end = glob.index("]", index + 2)
            body = glob[index + 1 : end]
            negate = body[:1] in ("!", "^")
            body = body[1:] if negate else body
            out.append("[" + ("^" if negate else "") + body.replace("\\", "\\\\") + "]")
            index = end + 1
        elif char == "{" and "}" in glob[index:]:
            end = glob.index("}", index)
            choices = glob[index + 1 : end].split(",")
            out.append("(?:" + "|".join(re.escape(c) for c in choices) + ")")
            index = end + 1
        else:
            out.append(re.escape(char))
            index += 1
    try:
        return re.compile("".join(out), re.DOTALL)
    except re.error as error:
        raise ValueError(f"bad glob {glob!r}: {error}") from None


def glob_regex(glob: str) -> re.Pattern[str]:
    """A glob over plain text (agent ids, hosts, MCP names): `*` matches anything."""
    return re.compile(
        "".join(".*" if c == "*" else "." if c == "?" else re.escape(c) for c in glob), re.DOTALL
    )
