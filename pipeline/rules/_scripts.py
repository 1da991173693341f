"""Scripts for sed and awk: do they run commands or open files of their own?

sed and awk are everyday text tools, and small languages too: `s/x/y/e`
and `e` run a command, `w file` writes one, `r file` reads one; awk's
`system()`, `print | "cmd"`, `"cmd" | getline` run commands and `print >
"file"` writes one. A script that might do any of it is not harmless.
The readers here are deliberately coarse: a false alarm asks the app, a
miss would allow a command.
"""

from __future__ import annotations

import re

__all__ = ["AWK_RUNS", "awk_runs_commands", "sed_runs"]

# awk: `system(...)`, a pipe to or from a command, output to a file, extensions.
AWK_RUNS = re.compile(r"\bsystem\s*\(|\|\s*(?:getline|&|\")|\"\s*\||\bprintf?\b[^;}]*>|@load")


def awk_runs_commands(arguments: tuple[str, ...]) -> bool:
    """An awk given its program inline that runs commands (`awk '{system($0)}'`)."""
    index = 0
    while index < len(arguments) and arguments[index].startswith("-"):
        if arguments[index] in ("-f", "--file"):
            return False  # a program file: judged elsewhere as unknown or not
        index += 2 if arguments[index] in ("-v", "-F", "--assign") else 1
    return index < len(arguments) and AWK_RUNS.search(arguments[index]) is not None


def sed_runs(script: str) -> bool:
    """Whether a sed script uses `e`, `w`, `W`, `r`, `R`, or an `s///e` or `s///w`."""
    index = 0
    while index < len(script):
        char = script[index]
        if char == "/" or char == "\\":
            start = index + 1 if char == "/" else index + 2
            delimiter = "/" if char == "/" else script[index + 1 : index + 2]
            index = _past_delimited(script, start, delimiter)
        elif char in "sy" and index + 1 < len(script):
            delimiter = script[index + 1]
            index = _past_delimited(script, index + 2, delimiter)
            index = _past_delimited(script, index, delimiter)
            flags = re.match(r"[A-Za-z0-9]*", script[index:])
            assert flags is not None
            if char == "s" and set(flags.group()) & set("ewW"):
                return True
            index += len(flags.group())
        elif char in "eEwWrR":
            return True
        elif char in "aic:btT":  # text or a label: to the end of the command
            ends = [p for p in (script.find("\n", index), script.find(";", index)) if p >= 0]
            index = min(ends) if ends else len(script)
        else:
            index += 1
    return False


def _past_delimited(script: str, index: int, delimiter: str) -> int:
    """The index after the next unescaped `delimiter` (or the end)."""
    while index < len(script):
        if script[index] == "\\":
            index += 2
        elif script[index] == delimiter:
            return index + 1
        else:
            index += 1
    return index
