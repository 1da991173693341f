"""What program a command really runs, seen through wrappers.

`program_of(words)` skips variable assignments and wrapper commands
(`sudo -u root`, `env A=b`, `nice -n 5`, `timeout 5`, `xargs -I {}`, ...)
and returns the program's file name with its arguments, so the shell
reader and the guards judge `sudo /bin/rm -rf /` as `rm -rf /`.
"""

from __future__ import annotations

import os

__all__ = ["SHELLS", "program_of"]

SHELLS = frozenset({"sh", "bash", "zsh", "dash", "ksh", "mksh", "ash", "fish", "csh", "tcsh"})

_WRAPPERS_WITH_ARGUMENT = {
    "sudo": frozenset("ugCDhpUrtT"),
    "doas": frozenset("uC"),
    "nice": frozenset("n"),
    "xargs": frozenset("IinLlPdsaE"),
    "stdbuf": frozenset("ioe"),
    "env": frozenset("uSC"),
}
_WRAPPERS = frozenset({*_WRAPPERS_WITH_ARGUMENT, "command", "builtin", "exec", "nohup", "time"})


def program_of(words: tuple[str, ...]) -> tuple[str, tuple[str, ...]]:
    """The program a command really runs (basename) and its arguments.

    Skips variable assignments and wrappers (`sudo`, `env`, `nice`, `xargs`,
    `timeout 5`, ...), so `sudo -u root /bin/rm -rf /` is `rm` with
    `("-rf", "/")`. An empty command is `("", ())`.
    """
    index = 0
    while index < len(words):
        word = words[index]
        if "=" in word and not word.startswith("=") and word.split("=", 1)[0].isidentifier():
            index += 1
            continue
        name = os.path.basename(word)
        if name == "timeout":
            index = _skip_options(words, index + 1, frozenset("sk")) + 1  # and the duration
            continue
        if name in _WRAPPERS:
            index = _skip_options(words, index + 1, _WRAPPERS_WITH_ARGUMENT.get(name, frozenset()))
            continue
        return name, words[index + 1 :]
    return "", ()


def _skip_options(words: tuple[str, ...], index: int, with_argument: frozenset[str]) -> int:
    while index < len(words) and words[index].startswith("-") and words[index] != "-":
        option = words[index]
        index += 1
        if option == "--":
            break
        if len(option) == 2 and option[1] in with_argument:
            index += 1
    return index
