"""The words of a command that name files: what it reads, what it writes.

In: one `SimpleCommand`. Out: words, as written (relative, with `~`), that
the guards judge as paths. `path_words` is every word that may name a file
(operands, option values, `@file` of curl, redirections); `write_targets`
the ones the command writes (redirections, `rm`'s operands, `cp`'s last,
`sed -i`'s files, `curl -o`, `find -delete`'s starting points, `ln`'s both
ends: a link out of the session is a way out of it). `expand_braces` turns
`{/,x}` into `/` and `x`, bounded, so a brace cannot hide a target.
"""

from __future__ import annotations

import bracex

from ._programs import program_of
from ._shell import SimpleCommand

__all__ = [
    "deletes_found",
    "expand_braces",
    "extracts",
    "find_roots",
    "options_and_operands",
    "path_words",
    "tar_directory",
    "write_targets",
]

_WRITE_REDIRECTS = frozenset({">", ">>", ">|", "&>", "&>>", "<>", ">&"})
_WRITES_EVERY_ARGUMENT = frozenset(
    {"rm", "rmdir", "touch", "mkdir", "truncate", "shred", "unlink", "mv", "tee", "ln"}
)
_WRITES_AFTER_FIRST = frozenset({"chmod", "chown", "chgrp"})
_WRITES_LAST = frozenset({"cp", "install", "rsync", "scp"})
# Options whose value is a file the program writes.
_OUTPUT_OPTIONS = {
    "curl": ("-o", "--output", "--output-dir", "-c", "--cookie-jar", "--trace"),
    "wget": ("-O", "--output-document", "-P", "--directory-prefix", "-o", "--output-file"),
    "sort": ("-o", "--output"),
    "unzip": ("-d",),
    "cp": ("-t", "--target-directory"),
    "mv": ("-t", "--target-directory"),
    "gcc": ("-o",),
    "clang++": ("-o",),
    "pytest": ("--basetemp", "--junitxml", "--junit-xml", "--result-log"),
    "py.test": ("--basetemp", "--junitxml", "--junit-xml"),
    "cc": ("-o",),
    "clang": ("-o",),
    "g++": ("-o",),
    "rustc": ("-o", "--out-dir"),
    "git": ("--output",),
    "go": ("-o",),
    "javac": ("-d",),
    "tsc": ("--outDir", "--outFile"),
    "cargo": ("--target-dir", "--artifact-dir"),
    "cmake": ("-B",),
}
# Formatters and fixers rewrite the files they are given: always, or with a flag.
_REWRITERS: dict[str, tuple[str, ...]] = {
    "black": (),
    "isort": (),
    "rustfmt": (),
    "autopep8": ("-i", "--in-place"),
    "yapf": ("-i", "--in-place"),
    "gofmt": ("-w",),
    "clang-format": ("-i",),
    "prettier": ("-w", "--write"),
    "eslint": ("--fix",),
    "ruff": ("format", "--fix"),
}
_COMPRESSORS = frozenset({"gzip", "gunzip", "bzip2", "bunzip2", "xz", "unxz", "zstd", "unzstd"})
_FIND_WRITERS = frozenset({"rm", "rmdir", "shred", "unlink", "mv", "truncate", "chmod", "chown"})
_BRACE_LIMIT = 64  # words one brace may become; beyond, the word is judged as written


def expand_braces(word: str) -> list[str]:
    if "{" not in word or "}" not in word:
        return [word]
    try:
        return list(dict.fromkeys(bracex.expand(word, limit=_BRACE_LIMIT))) or [word]
    except (bracex.ExpansionLimitException, ValueError):
        return [word]


def options_and_operands(arguments: tuple[str, ...]) -> tuple[list[str], list[str]]:
    options: list[str] = []
    operands: list[str] = []
    for index, argument in enumerate(arguments):
        if argument == "--":
            operands += arguments[index + 1 :]
            break
        (options if argument.startswith("-") and argument != "-" else operands).append(argument)
    return options, operands


def path_words(command: SimpleCommand) -> list[str]:
    """Words of a command that may name files: operands, option values, redirections."""
    _, arguments = program_of(command.words)
    words = []
    for argument in arguments:
        value = argument
        if argument.startswith("-") and "=" in argument:
            value = argument.split("=", 1)[1]
        if "=@" in value or "=<" in value:  # curl -F key=@file
            value = value.split("=", 1)[1]
        value = value.removeprefix("@")  # curl -d @file
        if value and not value.startswith("-") and "://" not in value:
            words.append(value)
    words += [r.target for r in command.redirects if r.op not in ("<<", "<<-", "<<<")]
    return [word for word in words if not word.isdigit()]


def find_roots(arguments: tuple[str, ...]) -> list[str]:
    """The starting points of `find` (`.` when none is given), after `-L`, `-D opts`, `-O3`."""
    index = 0
    while index < len(arguments) and arguments[index] in ("-H", "-L", "-P", "-D"):
        index += 2 if arguments[index] == "-D" else 1
    while index < len(arguments) and arguments[index].startswith("-O"):
        index += 1
    roots = []
    for argument in arguments[index:]:
        if argument.startswith(("-", "(", "!")):
            break
        roots.append(argument)
    return roots or ["."]


def deletes_found(arguments: tuple[str, ...]) -> bool:
    """`find -delete`, or `find -exec rm ...`: what it finds, it deletes or changes."""
    for index, argument in enumerate(arguments):
        if argument == "-delete":
            return True
        if argument in ("-exec", "-execdir", "-ok", "-okdir") and index + 1 < len(arguments):
            program, _ = program_of(arguments[index + 1 :])
            if program in _FIND_WRITERS:
                return True
    return False


def write_targets(command: SimpleCommand) -> list[str]:
    targets = [
        r.target
        for r in command.redirects
        if r.op in _WRITE_REDIRECTS and not (r.target.isdigit() or r.target == "-")
    ]
    program, arguments = program_of(command.words)
    if arguments[:1] == ("-m",) and len(arguments) > 1:  # `python -m pytest`: pytest's writes
        program, arguments = arguments[1], arguments[2:]
    targets += _writes(program, arguments)
    targets += _option_values(arguments, _OUTPUT_OPTIONS.get(program, ()))
    return [target for target in targets if target != "{}"]  # find's `{}`: judged by its roots


def _writes(program: str, arguments: tuple[str, ...]) -> list[str]:
    """The operands a program writes (or creates, or deletes)."""
    options, operands = options_and_operands(arguments)
    if program in _WRITES_EVERY_ARGUMENT or program == "venv":
        return operands
    if program in _WRITES_AFTER_FIRST:
        return operands[1:]
    if program in _WRITES_LAST:
        return operands[-1:]
    if program in ("uniq", "xxd"):
        return operands[1:2]  # `uniq IN OUT`
    if program == "zip" or (program == "git" and operands[:1] == ["init"]):
        return operands[:1] if program == "zip" else operands[1:]
    if program in _COMPRESSORS and not {"-c", "--stdout", "-t", "--test", "-l"} & set(options):
        return operands  # `gzip f` replaces f by f.gz
    if program == "dd":
        return [a[3:] for a in arguments if a.startswith("of=")]
    if program == "sed" and any(_in_place(option) for option in options):
        scripted = any(o in ("-e", "--expression", "-f", "--file") for o in options)
        return operands if scripted else operands[1:]
    if program == "find" and deletes_found(arguments):
        return find_roots(arguments)
    if program in _REWRITERS and _rewrites(_REWRITERS[program], arguments):
        return [operand for operand in operands if operand not in ("check", "format")]
    if program == "tar" and extracts(arguments):
        return _option_values(arguments, ("-C", "--directory")) or ["."]
    if program == "tar":
        return _tar_archive(arguments)
    return []


def _tar_archive(arguments: tuple[str, ...]) -> list[str]:
    """The archive tar writes: `-f FILE`, or the word after an old-style `czf`."""
    first = arguments[0] if arguments else ""
    if first and not first.startswith("-") and "f" in first:
        return list(arguments[1:2])
    return _option_values(arguments, ("-f", "--file"))


def _rewrites(flags: tuple[str, ...], arguments: tuple[str, ...]) -> bool:
    if {"--check", "--diff"} & set(arguments):
        return False
    return not flags or bool(set(flags) & set(arguments))


def _in_place(option: str) -> bool:
    """`-i`, `-i.bak`, `-Ei`, `--in-place=.bak`."""
    if option.startswith("--"):
        return option.startswith("--in-place")
    return "i" in option[1:]


def _option_values(arguments: tuple[str, ...], names: tuple[str, ...]) -> list[str]:
    """The values of the options `names` (`-o x`, `--output=x`, `-ox`, `-sSLo x`)."""
    letters = {name[1] for name in names if len(name) == 2}
    values = []
    for index, argument in enumerate(arguments):
        following = arguments[index + 1] if index + 1 < len(arguments) else None
        name, has_value, value = argument.partition("=")
        if argument.startswith("--"):
            if argument in names and following is not None:
                values.append(following)
            elif has_value and name in names:
                values.append(value)
            continue
        if not argument.startswith("-"):
            continue
        for position, letter in enumerate(argument[1:], start=2):
            if letter in letters:
                rest = argument[position:]
                if rest:
                    values.append(rest)
                elif following is not None:
                    values.append(following)
                break
    return values


def tar_directory(arguments: tuple[str, ...]) -> str | None:
    """tar's `-C DIR`: where the names it is given are read or written."""
    found = _option_values(arguments, ("-C", "--directory"))
    return found[-1] if found else None


def extracts(arguments: tuple[str, ...]) -> bool:
    """tar's mode: `-x`, `xzf`, `--extract`, `--get`."""
    first = arguments[0] if arguments else ""
    if not first.startswith("-") and "x" in first:
        return True
    return any(
        a in ("--extract", "--get") or (a.startswith("-") and not a.startswith("--") and "x" in a)
        for a in arguments
    )
