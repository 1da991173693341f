"""What program a command really runs, seen through wrappers and other names.

`invocation(words)` skips variable assignments and wrapper commands
(`sudo -u root`, `env A=b`, `nice -n 5`, `timeout 5`, `xargs -I {}`,
`busybox`, ...) and returns the program's file name with its arguments and
the wrappers it went through, so the shell reader and the guards judge
`sudo /bin/rm -rf /` as `rm -rf /` (and still know `sudo` was there).
`program_of(words)` is the program and its arguments alone.

`is_shell` and `is_interpreter` know the programs under the names they
really go by: `bash5.2`, `python3.11`, `pypy3`, `nodejs`, `gawk`; a wrapper
like `busybox sh` is seen through before them.
"""

from __future__ import annotations

import os
import re

import attrs

__all__ = ["SHELLS", "Invocation", "invocation", "is_interpreter", "is_shell", "program_of"]

SHELLS = frozenset({"sh", "bash", "zsh", "dash", "ksh", "mksh", "ash", "fish", "csh", "tcsh"})

# `bash5`, `zsh-5.9`, `rbash`, `yash`, `posh`, `oksh`: a shell under another name.
_SHELL_NAME = re.compile(r"(?:r?ba|z|da|m?k|ok|pd?k|a|fi|t?c|ya|po|hu|el|xon|nu)?sh[-.\d]*|rc|es")
# The interpreters that run a program given inline, on stdin or as a file.
_INTERPRETER_NAME = re.compile(
    r"(?:python|pypy|jython|ipython|perl|ruby|jruby|irb|php|lua|luajit|tclsh|wish|pwsh"
    r"|powershell|node|nodejs|deno|bun|Rscript|R|julia|guile|racket|sbcl|clisp|ghci|runghc"
    r"|osascript|expect|groovy|jshell|scala|elixir|iex|erl|escript|swift|kotlin|dotnet-script)"
    r"[-.\dmw]*(?:-dbg)?"
)
AWKS = frozenset({"awk", "gawk", "mawk", "nawk", "busybox-awk"})

_WRAPPERS_WITH_ARGUMENT = {
    "sudo": frozenset("ugCDhpUrtT"),
    "doas": frozenset("uC"),
    "nice": frozenset("n"),
    "xargs": frozenset("IinLlPdsaE"),
    "stdbuf": frozenset("ioe"),
    "env": frozenset("uSC"),
    "ionice": frozenset("cnp"),
}
_WRAPPERS = frozenset(
    {*_WRAPPERS_WITH_ARGUMENT, "command", "builtin", "exec", "nohup", "time", "busybox", "toybox"}
)


@attrs.frozen
class Invocation:
    program: str  # the file name it runs, "" for none (an assignment, an empty line)
    arguments: tuple[str, ...]
    wrappers: tuple[str, ...] = ()  # sudo, xargs, env, ... in the order they appear
    assignments: tuple[str, ...] = ()  # NAME=value words before the program
    word: str = ""  # the program as written (a path, a variable...)


def is_shell(name: str) -> bool:
    return name in SHELLS or _SHELL_NAME.fullmatch(name) is not None


def is_interpreter(name: str) -> bool:
    return _INTERPRETER_NAME.fullmatch(name) is not None


def invocation(words: tuple[str, ...]) -> Invocation:
    """The program a command really runs, with what came before it.

    Skips variable assignments and wrappers (`sudo`, `env`, `nice`, `xargs`,
    `timeout 5`, `busybox`, ...), so `sudo -u root /bin/rm -rf /` is `rm`
    with `("-rf", "/")` and wrappers `("sudo",)`.
    """
    index = 0
    wrappers: list[str] = []
    assignments: list[str] = []
    while index < len(words):
        word = words[index]
        if "=" in word and not word.startswith("=") and word.split("=", 1)[0].isidentifier():
            assignments.append(word)
            index += 1
            continue
        name = os.path.basename(word)
        if name == "timeout":
            wrappers.append(name)
            index = _skip_options(words, index + 1, frozenset("sk")) + 1  # and the duration
            continue
        if name in _WRAPPERS:
            wrappers.append(name)
            index = _skip_options(words, index + 1, _WRAPPERS_WITH_ARGUMENT.get(name, frozenset()))
            continue
        return Invocation(name, words[index + 1 :], tuple(wrappers), tuple(assignments), word)
    return Invocation("", (), tuple(wrappers), tuple(assignments))


def program_of(words: tuple[str, ...]) -> tuple[str, tuple[str, ...]]:
    """The program a command really runs (basename) and its arguments; `("", ())` if none."""
    found = invocation(words)
    return found.program, found.arguments


def _skip_options(words: tuple[str, ...], index: int, with_argument: frozenset[str]) -> int:
    while index < len(words) and words[index].startswith("-") and words[index] != "-":
        option = words[index]
        index += 1
        if option == "--":
            break
        if len(option) == 2 and option[1] in with_argument:
            index += 1
    return index
