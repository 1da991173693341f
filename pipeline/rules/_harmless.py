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
  `eval` and `source` of a file outside the session are unknown. A shell's
  `-c STRING` is read by the shell reader like the line itself (`bash -lc
  'make'` is `make`), so only a string it cannot see is unknown (`sh -c
  "$X"`, `sh -c "$(curl ...)"`);
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

from ._programs import AWKS, Invocation, invocation, is_interpreter, is_shell
from ._scripts import judge_awk, judge_sed
from ._shapes import PYTHON_MODULES, PYTHON_TEST_MODULES, RUNNERS, SHAPES, TEXT_PROGRAMS, Shape
from ._shell import SimpleCommand
from ._verdicts import Harmless, Unknown, code_file, known_words, opaque, path_word

__all__ = ["judge_command"]


_SENSITIVE_NAMES = re.compile(
    r"PATH|IFS|ENV|BASH_ENV|BASH_FUNC_.*|SHELLOPTS|BASHOPTS|PS4|PROMPT_COMMAND|CDPATH|HOME"
    r"|LD_.*|DYLD_.*|GCONV_PATH|TMPDIR|EDITOR|VISUAL|PAGER|LESSOPEN|LESSCLOSE|MAKEFLAGS"
    r"|GIT_(?:SSH|SSH_COMMAND|EXTERNAL_DIFF|PAGER|EDITOR|ASKPASS|CONFIG.*|EXEC_PATH|DIR"
    r"|WORK_TREE|PROXY_COMMAND|SEQUENCE_EDITOR|TEMPLATE_DIR)"
    r"|PYTHON(?:PATH|STARTUP|HOME|USERBASE|PLATLIBDIR|EXECUTABLE)|PERL5?(?:LIB|OPT|DB)"
    r"|RUBY(?:OPT|LIB)|NODE_(?:OPTIONS|PATH)|NPM_CONFIG_.*|npm_config_.*"
    r"|CARGO_(?:BUILD_.*|TARGET_.*|HOME)|RUSTC.*|CC|CXX|LD|AR|SHELL|CONFIG_SHELL"
)


def judge_command(
    command: SimpleCommand, *, cwd: str | None, session_dir: str
) -> Harmless | Unknown:
    """Harmless, or why corral cannot tell (and the word that made it so)."""
    if command.words[:1] == ("command",) and command.words[1:2] in (("-v",), ("-V",)):
        return Harmless()  # `command -v docker`: where a program is, not running it
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
    if "env" in called.wrappers:
        for word in command.words[: len(command.words) - len(called.arguments)]:
            if word.startswith(("-S", "--split", "-C", "--chdir")):
                return Unknown("env -S or -C: a command or a directory corral cannot see", word)
    for assignment in called.assignments:
        name = assignment.split("=", 1)[0]
        if _SENSITIVE_NAMES.fullmatch(name):
            return Unknown(f"setting {name} changes what runs", assignment)
    if called.word and (opaque(called.word) or called.word == "$(...)"):
        return Unknown("the program is a variable or a substitution", called.word)
    return None


def _redirects(command: SimpleCommand, cwd: str | None, session_dir: str) -> Unknown | None:
    for redirect in command.redirects:
        if redirect.op in ("<<", "<<-", "<<<") or redirect.target.isdigit():
            continue  # here-documents are text; `2>&1` names a descriptor
        if redirect.target == "-":
            continue
        found = path_word(redirect.target, cwd)
        if found is not None:
            return found
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
    if "/" in called.word and not os.path.normpath(called.word).startswith(_SYSTEM_DIRS):
        # `./run.sh`, `.venv/bin/python`: the session's own; `/tmp/x/ls` is not `ls`.
        found = code_file(called.word, cwd, session_dir, "a program")
        if found is not None or not _known_kind(program):
            return found or known_words(arguments, cwd)
    if program in TEXT_PROGRAMS:
        return _text_program(program, arguments)
    if is_shell(program) or program in ("source", ".", "eval"):
        return _shell(program, arguments, cwd, session_dir)
    if is_interpreter(program):
        return _interpreter(program, arguments, cwd, session_dir, depth)
    if program in AWKS:
        return judge_awk(arguments, cwd, session_dir)
    if program == "sed":
        return judge_sed(arguments, cwd)
    if program in RUNNERS and depth < 2 and arguments[:1] == (RUNNERS[program],):
        inner = invocation(_without_options(arguments[1:]))
        if not inner.program:
            return Unknown(f"{program} {RUNNERS[program]} without a program", program)
        return _program(inner, cwd, session_dir, depth + 1)
    shape = SHAPES.get(program)
    if shape is None:
        return Unknown(f"{program} is not on the list of programs corral knows", program)
    return _shaped(program, shape, arguments, cwd, session_dir)


def _known_kind(program: str) -> bool:
    """A program judged by its name wherever it lies (`.venv/bin/python -c` is inline code)."""
    return (
        program in TEXT_PROGRAMS
        or program in SHAPES
        or program in RUNNERS
        or program in AWKS
        or program in ("sed", "source", ".", "eval")
        or is_shell(program)
        or is_interpreter(program)
    )


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


def _shell(
    program: str, arguments: tuple[str, ...], cwd: str | None, session_dir: str
) -> Unknown | None:
    if program == "eval":
        return Unknown("eval runs text as shell code", "eval")
    if program in ("source", "."):
        if not arguments:
            return Unknown(f"{program} without a file", program)
        return code_file(arguments[0], cwd, session_dir, "a script sourced")
    command_string = False
    index = -1
    while index + 1 < len(arguments):
        index += 1
        argument = arguments[index]
        if argument in ("-o", "+o", "-O", "+O"):  # `-o pipefail`: an option and its name
            index += 1
            continue
        if argument == "--" or not argument.startswith(("-", "+")):
            if command_string:
                return None  # `bash -lc 'make test'`: the reader read the string, see above
            operands = arguments[index + 1 :] if argument == "--" else arguments[index:]
            if not operands:
                break
            return code_file(operands[0], cwd, session_dir, "a script") or known_words(
                operands[1:], cwd
            )
        if argument.startswith("--"):
            if argument not in _SHELL_LONG_OPTIONS:
                return Unknown(f"{program} {argument} reads a file or input of its own", argument)
            continue
        if set(argument[1:]) - _SHELL_FLAGS:
            return Unknown(f"{program} {argument} reads its script from standard input", argument)
        command_string = command_string or "c" in argument
    return Unknown(f"{program} reads its script from standard input", program)


# `bash -lc STRING` is how Codex runs every command. The shell reader reads
# STRING (for `find -exec sh -c` too) and judges each of its commands, so the
# shell itself adds nothing unseen: a variable or a substitution as STRING is
# read as an unknown command. Flags that read a script from elsewhere
# (`-s`, `-i`, `--rcfile`) are not among these.
_SHELL_FLAGS = frozenset("celuxvfabhkmnptBCEHPT")
_SHELL_LONG_OPTIONS = frozenset({"--login", "--norc", "--noprofile", "--posix", "--noediting"})


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
        if argument in ("--version", "-V", "--help", "-h") or (argument == "-v" and not python):
            return None  # `node -v`, `perl -v`: the version, then exit
        if argument == "--test" and program.startswith("node"):
            return _code_files(arguments[index + 1 :], cwd, session_dir, "a test node runs")
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
    return code_file(operands[0], cwd, session_dir, "a program") or known_words(operands[1:], cwd)


def _python_module(
    module: str, arguments: tuple[str, ...], cwd: str | None, session_dir: str
) -> Unknown | None:
    if module == "pip":
        return _program(Invocation("pip", arguments), cwd, session_dir, depth=1)
    if module not in PYTHON_MODULES:
        return Unknown(f"python -m {module} runs a module corral does not know", module)
    if module in PYTHON_TEST_MODULES:
        return _code_files(arguments, cwd, session_dir, f"code python -m {module} runs")
    return known_words(arguments, cwd)


def _code_files(
    words: tuple[str, ...], cwd: str | None, session_dir: str, what: str
) -> Unknown | None:
    """Operands that are code to run (tests): each must lie inside the session."""
    for word in words:
        if not word.startswith("-"):
            found = code_file(word.partition("::")[0], cwd, session_dir, what)
            if found is not None:
                return found
    return known_words(words, cwd)


_ASKS_FOR_HELP = frozenset({"--version", "-V", "--help", "-h"})


def _shaped(
    program: str, shape: Shape, arguments: tuple[str, ...], cwd: str | None, session_dir: str
) -> Unknown | None:
    """A program on the list: its options and operands must have a known-safe shape."""
    read = _read_options(program, shape, arguments, cwd, session_dir)
    if isinstance(read, Unknown):
        return read
    operands, pattern_given = read
    subcommand = ""
    if shape.subcommands is not None:
        if not operands and _ASKS_FOR_HELP & set(arguments):
            return None
        subcommand = operands[0] if operands else ""
        if subcommand not in shape.subcommands:
            why = f"{program} {subcommand}" if subcommand else f"{program} without a subcommand"
            return Unknown(f"{why} is not one corral knows to be harmless", subcommand or program)
        operands = operands[1:]
    found = _particular(program, subcommand, tuple(operands), arguments)
    if found is not None:
        return found
    files = tuple(operands[0 if pattern_given else shape.text_operands :])
    if shape.runs_operands:
        return _code_files(files, cwd, session_dir, f"code {program} runs")
    return known_words(files, cwd)


def _read_options(
    program: str, shape: Shape, arguments: tuple[str, ...], cwd: str | None, session_dir: str
) -> tuple[list[str], bool] | Unknown:
    """The operands, and whether an option gave the pattern; or what made it unknown."""
    operands: list[str] = []
    pattern_given = False
    index = 0
    while index < len(arguments):
        argument = arguments[index]
        index += 1
        if argument == "--":
            return [*operands, *arguments[index:]], pattern_given
        if not argument.startswith("-") or argument == "-" or shape.signed_numbers(argument):
            operands.append(argument)
            continue
        name, has_value, value = argument.partition("=")
        bad = shape.bad(argument, before_subcommand=not operands)
        if bad is not None:
            return Unknown(f"{program} {bad} runs other code or reaches outside", argument)
        pattern_given = pattern_given or name in shape.pattern_options
        if name in shape.code_options:
            code = value if has_value else (arguments[index] if index < len(arguments) else "")
            index += 0 if has_value else 1
            found = code_file(code, cwd, session_dir, f"{program} {name}'s file")
            if found is not None:
                return found
        elif name in shape.text_options:
            index += 0 if has_value else 1
        elif has_value and opaque(value):
            return Unknown("a variable or substitution where a file name goes", argument)
    return operands, pattern_given


_GIT_READ_CONFIG = frozenset({"--get", "--get-all", "--get-regexp", "--list", "-l"})
_GIT_READ_ONLY = {"remote": frozenset({"show", "get-url"}), "worktree": frozenset({"list"})}


_MAKE_VARIABLES = frozenset({"V", "VERBOSE", "DEBUG", "CI", "Q"})


def _particular(
    program: str, subcommand: str, operands: tuple[str, ...], arguments: tuple[str, ...]
) -> Unknown | None:
    """Shapes a table cannot say: git's read-only subcommands, make's variables, ..."""
    if program == "git":
        return _git(subcommand, operands, arguments)
    if program == "make":
        for operand in operands:
            name = operand.partition("=")[0]
            if "=" in operand and name not in _MAKE_VARIABLES:
                return Unknown(f"make {name}= can change the commands make runs", operand)
    if program == "go":
        fetched = next((operand for operand in operands if "@" in operand), None)
        if fetched is not None:
            return Unknown("go runs a module fetched from the network", fetched)
    if program in ("curl", "wget"):
        local = next((w for w in operands if w.lower().startswith("file:")), None)
        if local is not None:
            return Unknown(f"{program} reading a local file", local)
    return None


def _git(subcommand: str, operands: tuple[str, ...], arguments: tuple[str, ...]) -> Unknown | None:
    """What `git config` and `git remote` may do: read."""
    if subcommand == "config" and not _GIT_READ_CONFIG & set(arguments):
        return Unknown("git config that is not a read", "config")
    allowed = _GIT_READ_ONLY.get(subcommand)
    if allowed is not None and operands and operands[0] not in allowed:
        return Unknown(
            f"git {subcommand} {operands[0]} changes the repository's setup", operands[0]
        )
    return None
