"""What corral makes of one command, and the word checks every judge shares.

The verdicts are a closed set: `Harmless()`, `Dangerous(guard, word)` (a
guard saw it: rm-root, pipe-to-shell, ...) or `Unknown(reason, word)`
(corral cannot prove it harmless), each naming the word of the line that
decided it. The helpers judge single words: `path_word` (a file name must
be known, and placed somewhere known), `known_words` (every such word
of a list), `code_file` (a file of code is the session's own only inside the
session directory). Pure functions: no I/O.
"""

from __future__ import annotations

import os

import attrs

from ._shell import PROCESS_SUBSTITUTIONS

__all__ = [
    "STDIN_NAMES",
    "CommandVerdict",
    "Dangerous",
    "Harmless",
    "Unknown",
    "code_file",
    "home_word",
    "inside",
    "known_words",
    "opaque",
    "path_word",
]

STDIN_NAMES = ("-", "/dev/stdin", "/dev/fd/0", "/proc/self/fd/0")


@attrs.frozen
class Harmless:
    pass


@attrs.frozen
class Unknown:
    reason: str  # why corral cannot tell what it does
    word: str  # the word of the line that made it unknown


@attrs.frozen
class Dangerous:
    guard: str  # the guard that saw it: rm-root, pipe-to-shell, ...
    word: str  # the word of the line it saw


CommandVerdict = Harmless | Dangerous | Unknown


def opaque(word: str) -> bool:
    """A word whose value only the shell knows: a variable, a substitution, `~user`."""
    return "$" in word or "`" in word or (word.startswith("~") and not home_word(word))


def home_word(word: str) -> bool:
    return word == "~" or word.startswith("~/")


def inside(path: str, session_dir: str) -> bool:
    root = os.path.normpath(session_dir)
    return path == root or path.startswith(root.rstrip("/") + "/")


def path_word(word: str, cwd: str | None) -> Unknown | None:
    """A word that names a file: it must be known, and placed somewhere known."""
    if opaque(word):
        return Unknown("a variable or substitution where a file name goes", word)
    if cwd is None and not (os.path.isabs(word) or home_word(word)):
        return Unknown("a relative path after a cd to a directory only the shell knows", word)
    return None


def known_words(words: tuple[str, ...], cwd: str | None) -> Unknown | None:
    """The first word of `words` (or option value) that is not a known file name."""
    for word in words:
        value = word.split("=", 1)[1] if word.startswith("-") and "=" in word else word
        if not value.startswith("-"):
            found = path_word(value, cwd)
            if found is not None:
                return found
    return None


def code_file(word: str, cwd: str | None, session_dir: str, what: str) -> Unknown | None:
    """A file of code (a script, a makefile, a test) is the session's own only inside it."""
    found = path_word(word, cwd)
    if found is not None:
        return found
    if word in STDIN_NAMES:
        return Unknown(f"{what} read from standard input", word)
    if word in PROCESS_SUBSTITUTIONS:
        return Unknown(f"{what} made by a command substitution", word)
    if home_word(word):
        return Unknown(f"{what} from the home directory", word)
    if not inside(os.path.normpath(os.path.join(cwd or session_dir, word)), session_dir):
        return Unknown(f"{what} from outside the session directory", word)
    return None
