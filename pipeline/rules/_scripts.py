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

from ._verdicts import Unknown, code_file, known_words

__all__ = ["AWK_RUNS", "awk_runs_commands", "judge_awk", "judge_sed", "sed_runs"]

# awk: `system(...)`, a pipe to or from a command, output to a file, extensions.
AWK_RUNS = re.compile(
    r"\bsystem\s*\(|\||\bgetline\b[^;}]*<|\bprintf?\b[^;}]*>|@load|@include|/inet/"
)


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


def judge_awk(arguments: tuple[str, ...], cwd: str | None, session_dir: str) -> Unknown | None:
    """awk: a program (inline or `-f FILE` in the session) that runs nothing of its own."""
    for text in _awk_texts(arguments):
        if AWK_RUNS.search(text):  # wherever it is: `-e PROGRAM`, `--source=`, first operand
            return Unknown("the awk program runs commands or opens files", text)
    index = 0
    program_given = False
    while index < len(arguments) and arguments[index].startswith("-"):
        option, value = arguments[index], arguments[index + 1 : index + 2]
        if option.startswith(("-l", "--load", "-E", "--exec", "-i", "--include")):
            return Unknown("awk loads an extension or a file of its own", option)
        if option in ("-f", "--file") and value:
            program_given = True
            found = code_file(value[0], cwd, session_dir, "an awk program")
            if found is not None:
                return found
        program_given = program_given or option.startswith(("-e", "--source"))
        index += 2 if option in ("-v", "-F", "-f", "--file", "--assign", "-e", "--source") else 1
    rest = arguments[index:]
    if not program_given:
        if not rest:
            return Unknown("awk without a program", "awk")
        rest = rest[1:]
    return known_words(rest, cwd)


def _awk_texts(arguments: tuple[str, ...]) -> list[str]:
    """Every argument that may hold awk code: all but options and their values (`-F '|'`)."""
    texts = []
    skip = False
    for argument in arguments:
        if skip:
            skip = False
        elif argument in ("-F", "-v", "--assign", "-f", "--file"):
            skip = True
        elif argument.startswith("--source="):
            texts.append(argument.partition("=")[2])
        elif not argument.startswith("-"):
            texts.append(argument)
    return texts


def judge_sed(arguments: tuple[str, ...], cwd: str | None) -> Unknown | None:
    """sed: its scripts (`-e`, else the first operand) must not run commands or open files."""
    scripts: list[str] = []
    files: list[str] = []
    index = 0
    while index < len(arguments):
        argument = arguments[index]
        index += 1
        if argument.startswith("--expression="):
            scripts.append(argument.partition("=")[2])
        elif argument == "--expression" or _short_e(argument):
            attached = argument.partition("e")[2] if _short_e(argument) else ""
            if attached:
                scripts.append(attached)
            elif index < len(arguments):
                scripts.append(arguments[index])
                index += 1
        elif argument.startswith("--file") or _short_letter(argument, "f"):
            return Unknown("sed reads its script from a file", argument)
        elif not argument.startswith("-") or argument == "-":
            files.append(argument)
    if not scripts and files:
        scripts.append(files.pop(0))
    for script in scripts:
        if sed_runs(script):
            return Unknown("the sed script runs commands or opens files (e, w, r)", script)
    return known_words(tuple(files), cwd)


def _short_letter(argument: str, letter: str) -> bool:
    """`-nf`: the letter among short options, before any `-i` suffix or `-l` value."""
    if not argument.startswith("-") or argument.startswith("--"):
        return False
    for char in argument[1:]:
        if char == letter:
            return True
        if char in "il":
            return False
    return False


def _short_e(argument: str) -> bool:
    return _short_letter(argument, "e")
