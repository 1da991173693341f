"""Paths as the policy sees them, and the globs rules write about them.

A path an agent names is judged in two forms: `lexical` (made absolute
against its base directory, `~` and `$HOME` expanded, `..` folded, links
not followed) and `resolved` (every symbolic link followed, as the file
system will). An escape through `..` or through a link shows in the
resolved form. Rules that allow need every form to agree; rules that deny
or ask need only one (`PathFacts.forms`).

Globs: `*` and `?` stay within one path segment, `**` spans segments,
`[abc]` and `{a,b}` as in the shell, with wildcards inside braces too
(`{*.env,*.pem}`, each alternative anchored on its own); bracex expands
the braces and wcmatch compiles the rest, well-kept matchers rather than
ours. `*` also matches a leading dot: a deny of `*.pem` covers `.x.pem`.
A glob starting with `/` or `~` is absolute; one containing `/` is
relative to the session directory (and matches only inside it); one
without `/` matches a file name at any depth (like `.gitignore`).

The only I/O here is `os.path.realpath` (it reads links).
"""

from __future__ import annotations

import os
import re

import attrs
import bracex
from wcmatch import glob

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
_BRACE_LIMIT = 1000  # alternatives one glob may expand to: `{1..99}{1..99}` is a typo


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
    # Each alternative after brace expansion, with its anchor: `{*.pem,src/**}`
    # holds a name glob and a relative one. Any of them may match.
    parts: tuple[tuple[str, re.Pattern[str]], ...]

    @property
    def anchor(self) -> str:
        """absolute, relative or name; "mixed" when braces hold several kinds."""
        anchors = {anchor for anchor, _ in self.parts}
        return anchors.pop() if len(anchors) == 1 else "mixed"

    @classmethod
    def parse(cls, source: str, *, home: str) -> PathGlob:
        """Compile a glob; ValueError says what is wrong with it."""
        if not source:
            raise ValueError("an empty path glob")
        try:
            alternatives = bracex.expand(source, limit=_BRACE_LIMIT)
        except (bracex.ExpansionLimitException, ValueError) as error:
            raise ValueError(f"bad glob {source!r}: {error}") from None
        parts: list[tuple[str, re.Pattern[str]]] = []
        for alternative in dict.fromkeys(alternatives):
            pattern = expand_home(alternative, home)
            if pattern.startswith("/"):
                variants = {pattern, _resolve_literal_prefix(pattern)}
                parts += [("absolute", regex) for v in sorted(variants) for regex in _compile(v)]
                continue
            pattern = pattern.removeprefix("./").rstrip("/")
            anchor = "relative" if "/" in pattern else "name"
            parts += [(anchor, regex) for regex in _compile(pattern)]
        return cls(source=source, parts=tuple(parts))

    def matches(self, facts: PathFacts, *, every_form: bool) -> bool:
        results = [self.matches_form(path, root, inside) for path, root, inside in facts.forms()]
        return all(results) if every_form else any(results)

    def matches_form(self, path: str, root: str, inside: bool) -> bool:
        for anchor, regex in self.parts:
            if anchor == "absolute":
                subject = path
            elif anchor == "relative":
                if not inside or path == root:
                    continue
                subject = os.path.relpath(path, root)
            else:
                subject = os.path.basename(path)
            if regex.fullmatch(subject):
                return True
        return False


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


_GLOB_FLAGS = glob.GLOBSTAR | glob.DOTGLOB  # braces are expanded before


def _compile(pattern: str) -> tuple[re.Pattern[str], ...]:
    """The regexes of one glob without braces (wcmatch: `*`, `**`, `[!x]`)."""
    try:
        included, _ = glob.translate(pattern, flags=_GLOB_FLAGS)
        return tuple(re.compile(regex) for regex in included)
    except (re.error, ValueError) as error:
        raise ValueError(f"bad glob {pattern!r}: {error}") from None


def glob_regex(glob: str) -> re.Pattern[str]:
    """A glob over plain text (agent ids, hosts, MCP names): `*` matches anything."""
    return re.compile(
        "".join(".*" if c == "*" else "." if c == "?" else re.escape(c) for c in glob), re.DOTALL
    )
