"""Which commands corral can prove harmless, and what makes the others unknown.

In: one simple command of a parsed line, the directory it runs in (None
after a `cd` to somewhere only the shell knows) and the session directory.
Out: `Harmless()` or `Unknown(reason, word)`, the word of the line that
made it unknown. Dangerous commands are the guards' business
(`_guards.py`); this module answers the other question: may a mode allow
this command without anybody looking at it?

The rule: what is not proven harmless is unknown. A command is harmless
when its program is on the allow-list below (everyday read-only, build and
test programs) and its arguments have a known-safe shape:
- no variable or substitution where a file name goes (`cat $F`,
  `rm -rf "$(pwd)"/x`), nor as the program (`$EDITOR x`), nor `~user`;
- no option that runs other code (`git -c`, `rg --pre`, `sort
  --compress-program`, `tar --to-command`), no subcommand off the list
  (`git push`, `npm install`, `pip install`);
- interpreters only on a script file inside the session or a module on the
  list (`python -m pytest`): inline code (`python -c`, `perl -e`, `node
  -e`), a program on standard input (`| python3`, `sh <<EOF`, `bash -s`),
  `sh -c`, `eval` and `source` of a file outside the session are unknown;
- `sed` and `awk` only with scripts that do not run commands or open files
  of their own (`s/x/y/e`, `w file`, `system()`, `print | "cmd"`);
- no wrapper that changes who runs it or what it is given: `sudo`, `doas`,
  `xargs` (its arguments come from standard input), `env -S`;
- no assignment to a variable that changes what runs (`PATH=`,
  `LD_PRELOAD=`, `BASH_ENV=`, `PYTHONPATH=`, ...).
A project's own code (`make`, `npm test`, `pytest`, `./script.sh`, a script
file in the session) is the session's own: as trusted as its Makefile.

Nothing here does I/O: paths are judged as written, against the cwd.
"""

from __future__ import annotations

import os
import re

import attrs

from ._programs import AWKS, Invocation, invocation, is_interpreter, is_shell
from ._scripts import AWK_RUNS, sed_runs
from ._shapes import PYTHON_MODULES, RUNNERS, SHAPES, TEXT_PROGRAMS, Shape
from ._shell import PROCESS_SUBSTITUTIONS, SimpleCommand

__all__ = ["CommandVerdict", "Dangerous", "Harmless", "Unknown", "judge_command"]


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


# What corral makes of one command: the closed set the guards work from.
CommandVerdict = Harmless | Dangerous | Unknown


_SENSITIVE_NAMES = re.compile(
    r"PATH|IFS|ENV|BASH_ENV|BASH_FUNC_.*|SHELLOPTS|BASHOPTS|PS4|PROMPT_COMMAND|CDPATH|HOME"
    r"|LD_.*|DYLD_.*|GCONV_PATH|TMPDIR|EDITOR|VISUAL|PAGER|LESSOPEN|LESSCLOSE|MAKEFLAGS"
    r"|GIT_(?:SSH|SSH_COMMAND|EXTERNAL_DIFF|PAGER|EDITOR|ASKPASS|CONFIG.*|EXEC_PATH|DIR"
    r"|WORK_TREE|PROXY_COMMAND|SEQUENCE_EDITOR|TEMPLATE_DIR)"
    r"|PYTHON(?:PATH|STARTUP|HOME|USERBASE|PLATLIBDIR|EXECUTABLE)|PERL5?(?:LIB|OPT|DB)"
    r"|RUBY(?:OPT|LIB)|NODE_(?:OPTIONS|PATH)|NPM_CONFIG_.*|npm_config_.*"
    r"|CARGO_(?:BUILD_.*|TARGET_.*|HOME)|RUSTC.*|CC|CXX|LD|AR|SHELL|CONFIG_SHELL"
)
_STDIN_NAMES = ("-", "/dev/stdin", "/dev/fd/0", "/proc/self/fd/0")


def _opaque(word: str) -> bool:
    """A word whose value only the shell knows: a variable, a substitution, `~user`."""
    return "$" in word or "`" in word or (word.startswith("~") and not _home_word(word))


def _home_word(word: str) -> bool:
    return word == "~" or word.startswith("~/")


def judge_command(
    command: SimpleCommand, *, cwd: str | None, session_dir: str
) -> Harmless | Unknown:
    """Harmless, or why corral cannot tell (and the word that made it so)."""
    called = invocation(command.words)
    found = _wrappers_and_assignments(called, command)
    if found is None:
        found = _redirects(command, cwd, session_dir)
    if found is None and called.program:
        found = _program(called, cwd, session_dir, depth=0)
    return found or Harmless()


def _wrappers_and_assignments(called: Invocation, command: SimpleCommand) -> Unknown | None:
    for wrapper in called.wrappers:
        if wrapper in ("sudo", "doas"):
            return Unknown(f"{wrapper} runs the command as another user", wrapper)
        if wrapper == "xargs":
            return Unknown("xargs adds arguments read from standard input", wrapper)
    if "env" in called.wrappers and any(w.startswith(("-S", "--split")) for w in command.words):
        return Unknown("env -S splits a string into a command", "-S")
    for assignment in called.assignments:
        name = assignment.split("=", 1)[0]
        if _SENSITIVE_NAMES.fullmatch(name):
            return Unknown(f"setting {name} changes what runs", assignment)
    if called.word and (_opaque(called.word) or called.word == "$(...)"):
        return Unknown("the program is a variable or a substitution", called.word)
    return None


def _redirects(command: SimpleCommand, cwd: str | None, session_dir: str) -> Unknown | None:
    for redirect in command.redirects:
        if redirect.op in ("<<", "<<-", "<<<") or redirect.target.isdigit():
            continue  # here-documents are text; `2>&1` names a descriptor
        if redirect.target == "-":
            continue
        found = _path_word(redirect.target, cwd)
        if found is not None:
            return found
    return None


def _path_word(word: str, cwd: str | None) -> Unknown | None:
    """A word that names a file: it must be known, and placed somewhere known."""
    if _opaque(word):
        return Unknown("a variable or substitution where a file name goes", word)
    if cwd is None and not (os.path.isabs(word) or _home_word(word)):
        return Unknown("a relative path after a cd to a directory only the shell knows", word)
    return None


_SYSTEM_DIRS = (
    "/bin/",
    "/usr/bin/",
    "/usr/local/bin/",
    "/sbin/",
    "/usr/sbin/",
    "/opt/homebrew/bin/",
)


def _program(called: Invocation, cwd: str | None, session_dir: str, depth: int) -> Unknown | None:
    program, arguments = called.program, called.arguments
    if "/" in called.word and not called.word.startswith(_SYSTEM_DIRS):
        # `./run.sh`, `.venv/bin/pytest`: the session's own; `/tmp/x/ls` is not `ls`.
        return _script(called.word, cwd, session_dir, "a program") or _operands(arguments, cwd)
    if program in TEXT_PROGRAMS:
        return _text_program(program, arguments)
    if is_shell(program) or program in ("source", ".", "eval"):
        return _shell(program, arguments, cwd, session_dir)
    if is_interpreter(program):
        return _interpreter(program, arguments, cwd, session_dir, depth)
    if program in AWKS:
        return _awk(arguments, cwd)
    if program == "sed":
        return _sed(arguments, cwd)
    if program in RUNNERS and depth < 2 and arguments[:1] == (RUNNERS[program],):
        inner = invocation(_without_options(arguments[1:]))
        if not inner.program:
            return Unknown(f"{program} {RUNNERS[program]} without a program", program)
        return _program(inner, cwd, session_dir, depth + 1)
    shape = SHAPES.get(program)
    if shape is None:
        return Unknown(f"{program} is not on the list of programs corral knows", program)
    return _shaped(program, shape, arguments, cwd)


def _text_program(program: str, arguments: tuple[str, ...]) -> Unknown | None:
    """echo, test, cd...: words are text; only assignments can change what runs."""
    if program in ("export", "declare", "typeset", "local", "readonly"):
        for argument in arguments:
            name = argument.split("=", 1)[0]
            if "=" in argument and _SENSITIVE_NAMES.fullmatch(name):
                return Unknown(f"setting {name} changes what runs", argument)
    return None


def _without_options(words: tuple[str, ...]) -> tuple[str, ...]:
    index = 0
    while index < len(words) and words[index].startswith("-"):
        index += 1
    return words[index:]


def _script(word: str, cwd: str | None, session_dir: str, what: str) -> Unknown | None:
    """A file of code is the session's own only if it lies inside the session."""
    found = _path_word(word, cwd)
    if found is not None:
        return found
    if word in _STDIN_NAMES:
        return Unknown(f"{what} read from standard input", word)
    if word in PROCESS_SUBSTITUTIONS:
        return Unknown(f"{what} made by a command substitution", word)
    if _home_word(word):
        return Unknown(f"{what} from the home directory", word)
    path = os.path.normpath(os.path.join(cwd or session_dir, word))
    root = os.path.normpath(session_dir)
    if path != root and not path.startswith(root.rstrip("/") + "/"):
        return Unknown(f"{what} from outside the session directory", word)
    return None


def _shell(
    program: str, arguments: tuple[str, ...], cwd: str | None, session_dir: str
) -> Unknown | None:
    if program == "eval":
        return Unknown("eval runs text as shell code", "eval")
    if program in ("source", "."):
        if not arguments:
            return Unknown(f"{program} without a file", program)
        return _script(arguments[0], cwd, session_dir, "a script sourced")
    for index, argument in enumerate(arguments):
        if argument == "--" or not argument.startswith(("-", "+")):
            operands = arguments[index + 1 :] if argument == "--" else arguments[index:]
            if not operands:
                break
            return _script(operands[0], cwd, session_dir, "a script") or _operands(
                operands[1:], cwd
            )
        if argument.startswith("--"):
            continue
        if "c" in argument[1:]:
            return Unknown(f"{program} -c runs a command string", argument)
        if "s" in argument[1:] or "i" in argument[1:]:
            return Unknown(f"{program} {argument} reads its script from standard input", argument)
    return Unknown(f"{program} reads its script from standard input", program)


_INLINE_PYTHON = re.compile(r"-[^-]*c.*|--command")
_INLINE_OTHER = re.compile(r"-[^-]*[eEpr].*|--eval|--print|--require|-Command|-EncodedCommand")
_PYTHON = re.compile(r"(?:python|pypy|jython|ipython)[-.\dmw]*(?:-dbg)?")
_WITH_VALUE = frozenset({"-W", "-X", "-I", "--import"})


def _interpreter(
    program: str, arguments: tuple[str, ...], cwd: str | None, session_dir: str, depth: int
) -> Unknown | None:
    python = _PYTHON.fullmatch(program) is not None
    inline = _INLINE_PYTHON if python else _INLINE_OTHER
    index = 0
    while index < len(arguments):
        argument = arguments[index]
        if argument in ("--version", "-V", "--help", "-h"):
            return None
        if argument == "--test" and program.startswith("node"):
            return _operands(arguments[index + 1 :], cwd)  # node's test runner, on files
        if argument == "--" or not argument.startswith("-") or argument == "-":
            break
        if python and argument == "-m" and index + 1 < len(arguments):
            return _python_module(arguments[index + 1], arguments[index + 2 :], cwd, session_dir)
        if inline.fullmatch(argument):
            return Unknown(f"{program} {argument} runs inline code", argument)
        index += 2 if argument in _WITH_VALUE else 1
    operands = arguments[index + (arguments[index : index + 1] == ("--",)) :]
    if not operands:
        return Unknown(f"{program} reads its program from standard input", program)
    return _script(operands[0], cwd, session_dir, "a program") or _operands(operands[1:], cwd)


def _python_module(
    module: str, arguments: tuple[str, ...], cwd: str | None, session_dir: str
) -> Unknown | None:
    if module == "pip":
        return _program(Invocation("pip", arguments), cwd, session_dir, depth=1)
    if module not in PYTHON_MODULES:
        return Unknown(f"python -m {module} runs a module corral does not know", module)
    return _operands(arguments, cwd)


def _operands(words: tuple[str, ...], cwd: str | None) -> Unknown | None:
    for word in words:
        value = word.split("=", 1)[1] if word.startswith("-") and "=" in word else word
        if not value.startswith("-"):
            found = _path_word(value, cwd)
            if found is not None:
                return found
    return None


def _awk(arguments: tuple[str, ...], cwd: str | None) -> Unknown | None:
    index = 0
    program_given = False
    while index < len(arguments) and arguments[index].startswith("-"):
        option = arguments[index]
        if option in ("-f", "--file"):
            program_given = True
        if option in ("-l", "--load", "-E", "--exec") or option.startswith(("-l", "--load")):
            return Unknown("awk loads an extension or a program file of its own", option)
        index += 2 if option in ("-v", "-F", "-f", "--file", "--assign") else 1
    operands = arguments[index:]
    if not program_given:
        if not operands:
            return Unknown("awk without a program", "awk")
        script, operands = operands[0], operands[1:]
        if AWK_RUNS.search(script):
            return Unknown("the awk program runs commands or writes files", script)
    return _operands(operands, cwd)


_ASKS_FOR_HELP = frozenset({"--version", "-V", "--help", "-h"})


def _shaped(
    program: str, shape: Shape, arguments: tuple[str, ...], cwd: str | None
) -> Unknown | None:
    """A program on the list: its options and operands must have a known-safe shape."""
    operands: list[str] = []
    pattern_given = False
    index = 0
    while index < len(arguments):
        argument = arguments[index]
        index += 1
        if argument == "--":
            operands += arguments[index:]
            break
        if not argument.startswith("-") or argument == "-" or shape.signed_numbers(argument):
            operands.append(argument)
            continue
        name, has_value, value = argument.partition("=")
        if shape.bad(name):
            return Unknown(f"{program} {name} runs other code or reaches outside", argument)
        pattern_given = pattern_given or name in shape.pattern_options
        if name in shape.text_options:
            index += 0 if has_value else 1
        elif has_value and _opaque(value):
            return Unknown("a variable or substitution where a file name goes", argument)
    if shape.subcommands is not None:
        if not operands and _ASKS_FOR_HELP & set(arguments):
            return None
        subcommand = operands[0] if operands else ""
        if subcommand not in shape.subcommands:
            why = f"{program} {subcommand}" if subcommand else f"{program} without a subcommand"
            return Unknown(f"{why} is not one corral knows to be harmless", subcommand or program)
        found = _subcommand(program, subcommand, tuple(operands[1:]), arguments)
        if found is not None:
            return found
        operands = operands[1:]
    if program in ("curl", "wget"):
        local = next((w for w in operands if w.lower().startswith("file:")), None)
        if local is not None:
            return Unknown(f"{program} reading a local file", local)
    return _operands(tuple(operands[0 if pattern_given else shape.text_operands :]), cwd)


_GIT_READ_CONFIG = frozenset({"--get", "--get-all", "--get-regexp", "--list", "-l"})
_GIT_READ_ONLY = {"remote": frozenset({"show", "get-url"}), "worktree": frozenset({"list"})}


def _subcommand(
    program: str, subcommand: str, operands: tuple[str, ...], arguments: tuple[str, ...]
) -> Unknown | None:
    """What `git config` and `git remote` may do: read."""
    if program != "git":
        return None
    if subcommand == "config" and not _GIT_READ_CONFIG & set(arguments):
        return Unknown("git config that is not a read", "config")
    allowed = _GIT_READ_ONLY.get(subcommand)
    if allowed is not None and operands and operands[0] not in allowed:
        return Unknown(
            f"git {subcommand} {operands[0]} changes the repository's setup", operands[0]
        )
    return None


def _sed(arguments: tuple[str, ...], cwd: str | None) -> Unknown | None:
    """sed: its scripts (`-e`, else the first operand) must not run commands or open files."""
    scripts: list[str] = []
    operands: list[str] = []
    index = 0
    while index < len(arguments):
        argument = arguments[index]
        index += 1
        if argument in ("-e", "--expression") and index < len(arguments):
            scripts.append(arguments[index])
            index += 1
        elif argument.startswith("--expression="):
            scripts.append(argument.partition("=")[2])
        elif argument in ("-f", "--file") or argument.startswith("--file="):
            return Unknown("sed reads its script from a file", argument)
        elif argument.startswith("-") and argument != "-":
            continue
        else:
            operands.append(argument)
    if not scripts and operands:
        scripts.append(operands.pop(0))
    for script in scripts:
        if sed_runs(script):
            return Unknown("the sed script runs commands or opens files (e, w, r)", script)
    return _operands(tuple(operands), cwd)
