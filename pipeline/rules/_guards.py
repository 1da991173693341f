"""The built-in guards: what corral never allows on its own.

A guard looks at a request's `Facts` and reports `GuardHit`s: which guard,
which subjects (commands or paths) triggered it, what it saw, the word of
the line that did it, and the message the agent reads if the guard denies.
The policy consults the hits only when it is about to allow (by a rule or
by the mode): a hit then turns the allow into the guard's action (deny, or
ask the app) unless the policy turned that guard off, or every rule that
allowed the subjects concerned names the guard in `override_guards`.

Every command of a line is classified into a closed set: dangerous (one
of the first four guards saw it), unknown (corral cannot prove it
harmless: `_harmless.py` says why, and which word), or harmless. The
guards, in the order they are checked:
- `rm-root`: `rm` with a recursive flag on `/` or the home directory (also
  `/*`, `~/*`, `$HOME`, `{/,x}`, `..` that lands there,
  `--no-preserve-root`), and `find` deleting from there (`-delete`,
  `-exec rm`);
- `pipe-to-shell`: a download (`curl`, `wget`, ...) run as code: piped into
  a shell or interpreter reading its program from stdin (whatever its name
  or flags: `busybox sh`, `bash --norc`, `python3.11`, `xargs sh -c`, `awk
  '{system($0)}'`), substituted into one (`bash <(curl ...)`, `sh -c "$(wget
  ...)"`, `bash <<< "$(curl ...)"`, a heredoc), or saved and then run
  (`curl -o x.sh ... && sh x.sh`);
- `secret-read`: any access to well-known credential files (`~/.ssh/id_*`,
  `~/.aws/credentials`, `.env`, `~/.netrc`, agents' own auth files, ...),
  by a file tool or as a command's argument (`curl -d @.env`), redirection,
  glob (`~/.ssh/*`) or folder read whole (`tar czf k.tgz ~/.ssh`);
- `write-outside-session`: Edit/Delete/Move (or any diff) on a path outside
  the session directory, and commands that write outside it (redirections,
  `tee`, `rm`, `mv`, `cp`'s target, `sed -i`, `curl -o`, `ln` either end,
  `touch`, `mkdir`, ..., after any `cd`);
- `unparsed-command`: a command line the shell reader could not follow;
- `unknown-command`: a command corral cannot prove harmless (a program off
  its list, inline code, a script on stdin, a variable where a file name
  goes, ...). It stops only what a mode would allow: a rule that allows a
  command by name knows it. Its default action is to ask the app.

They read commands, not minds: they catch the usual forms, and what they
cannot read they do not allow.
"""

from __future__ import annotations

import os

import attrs

from ._harmless import judge_command
from ._match import Facts, Subject
from ._paths import PathFacts, PathGlob, expand_home, path_facts, real_path
from ._programs import AWKS, invocation, is_interpreter, is_shell, program_of
from ._scripts import awk_runs_commands
from ._secrets import LISTING, SecretFiles, reads_folders
from ._shapes import PYTHON_MODULES
from ._shell import SimpleCommand
from ._targets import (
    deletes_found,
    expand_braces,
    find_roots,
    options_and_operands,
    path_words,
    tar_directory,
    write_targets,
)
from ._verdicts import STDIN_NAMES, CommandVerdict, Dangerous, Harmless, Unknown

__all__ = ["GuardHit", "Guards"]

_DOWNLOADERS = frozenset({"curl", "wget", "fetch", "http", "https", "aria2c", "xh", "lwp-request"})
_SOURCING = frozenset({"eval", "source", "."})
_WRITE_KINDS = frozenset({"Edit", "Delete", "Move"})
_DEVICES = ("/dev/null", "/dev/stdout", "/dev/stderr", "/dev/tty", "/dev/fd/")


@attrs.frozen(kw_only=True)
class GuardHit:
    guard: str
    subjects: tuple[int, ...]  # indices into Facts.subjects
    detail: str
    message: str
    word: str | None = None  # the word of the line that made the guard see it


class Guards:
    """The guard checks, with the secret-file globs compiled for one home."""

    def __init__(self, home: str, *, writable: tuple[PathGlob, ...] = ()) -> None:
        self.home = home
        self.writable = writable
        self._secrets = SecretFiles(home)

    def hits(self, facts: Facts) -> tuple[GuardHit, ...]:
        found: list[GuardHit] = []
        found += self._rm_root(facts)
        found += self._pipe_to_shell(facts)
        found += self._secret_read(facts)
        found += self._write_outside(facts)
        if facts.shell is not None and not facts.shell.parsed:
            found.append(
                GuardHit(
                    guard="unparsed-command",
                    subjects=tuple(range(len(facts.subjects))),
                    detail="the command line could not be parsed",
                    message="corral's policy could not read this command line; "
                    "write it in plain shell syntax",
                )
            )
        elif facts.shell is not None:
            dangerous = {index for hit in found for index in hit.subjects}
            found += self._unknown(facts, dangerous)
        return tuple(found)

    def classify(self, facts: Facts) -> tuple[CommandVerdict, ...]:
        """Each subject's verdict: dangerous (the first guard that saw it), unknown, harmless."""
        verdicts: list[CommandVerdict] = [Harmless()] * len(facts.subjects)
        for hit in self.hits(facts):
            for index in hit.subjects:
                if isinstance(verdicts[index], Dangerous):
                    continue
                word = hit.word or hit.detail
                if hit.guard in ("unknown-command", "unparsed-command"):
                    if isinstance(verdicts[index], Harmless):
                        verdicts[index] = Unknown(hit.detail, word)
                else:
                    verdicts[index] = Dangerous(hit.guard, word)
        return tuple(verdicts)

    # ---- rm-root ---------------------------------------------------------------

    def _rm_root(self, facts: Facts) -> list[GuardHit]:
        found = []
        for index, subject in enumerate(facts.subjects):
            command = subject.command
            if command is None:
                continue
            program, arguments = program_of(command.words)
            options, targets = options_and_operands(arguments)
            if program == "find" and deletes_found(arguments):
                options, targets = ["-r"], find_roots(arguments)
            elif program != "rm":
                continue
            recursive = any(
                option == "--recursive"
                or (not option.startswith("--") and set(option) & {"r", "R"})
                for option in options
            )
            dangerous = [
                target
                for target in targets
                if any(self._root_or_home(t, subject.cwd) for t in expand_braces(target))
            ]
            if "--no-preserve-root" in options or (recursive and dangerous):
                found.append(
                    GuardHit(
                        guard="rm-root",
                        subjects=(index,),
                        detail=command.text,
                        message="corral's policy blocks deleting / or the home directory "
                        f"({command.text})",
                        word=dangerous[0] if dangerous else "--no-preserve-root",
                    )
                )
        return found

    def _root_or_home(self, target: str, cwd: str | None) -> bool:
        expanded = expand_home(target, self.home)
        if "$" in expanded or (cwd is None and not os.path.isabs(expanded)):
            return False  # unknown: the unknown-command guard judges unknown places
        if set(os.path.basename(expanded)) & set("*?["):
            expanded = os.path.dirname(expanded) or "."
        lexical = os.path.normpath(os.path.join(cwd or "/", expanded))
        roots = {"/", os.path.normpath(self.home), real_path(self.home)}
        return lexical in roots or real_path(lexical) in roots

    # ---- pipe-to-shell -----------------------------------------------------------

    def _pipe_to_shell(self, facts: Facts) -> list[GuardHit]:
        if facts.shell is None:
            return []
        position = {id(subject.command): index for index, subject in enumerate(facts.subjects)}
        found = []
        for pipeline in facts.shell.pipelines:
            downloads = [i for i, stage in enumerate(pipeline) if _downloads(stage)]
            runs = [i for i, stage in enumerate(pipeline) if _runs_stdin(stage)]
            if downloads and any(run > downloads[0] for run in runs):
                commands = [c for stage in pipeline for c in (*stage.inner, stage)]
                found.append(self._pipe_hit(position, commands, " | ".join(_text(pipeline))))
        commands = [s.command for s in facts.subjects if s.command is not None]
        downloaders = [c for c in commands if _downloads(c)]
        saved = {name for c in downloaders for name in _saved_as(c)}
        for command in commands:
            if not _runs_code(command):
                continue
            inner = any(_downloads(c) for c in command.inner)
            heredoc = downloaders and any(r.op in ("<<", "<<-", "<<<") for r in command.redirects)
            runs_saved = saved & {os.path.basename(w) for w in _code_files(command)}
            if inner or heredoc or runs_saved:
                involved = [command, *command.inner, *(downloaders if not inner else [])]
                found.append(self._pipe_hit(position, involved, command.text))
        return found

    @staticmethod
    def _pipe_hit(position: dict[int, int], commands: list[SimpleCommand], text: str) -> GuardHit:
        indices = sorted({position[id(c)] for c in commands if id(c) in position})
        return GuardHit(
            guard="pipe-to-shell",
            subjects=tuple(indices),
            detail=text,
            message="corral's policy blocks running a download in a shell "
            f"({text}); download it, read it, then run it",
            word=text,
        )

    # ---- secret-read -------------------------------------------------------------

    def _secret_read(self, facts: Facts) -> list[GuardHit]:
        found = []
        for index, subject in enumerate(facts.subjects):
            seen = self._secret_of(facts, subject)
            if seen is not None:
                found.append(
                    GuardHit(
                        guard="secret-read",
                        subjects=(index,),
                        detail=seen,
                        message=f"corral's policy blocks access to credential files ({seen})",
                        word=seen,
                    )
                )
        return found

    def _secret_of(self, facts: Facts, subject: Subject) -> str | None:
        if subject.path is not None and self._secrets.named(subject.path):
            return subject.path.given
        if subject.command is None:
            return None
        program, arguments = program_of(subject.command.words)
        folders = reads_folders(program, arguments)
        base = subject.cwd or facts.session_dir
        directory = tar_directory(arguments) if program == "tar" else None
        if directory is not None:  # `tar czf k.tgz -C ~ .ssh`: names are read from there
            base = os.path.join(base, expand_home(directory, self.home))
        for word in path_words(subject.command):
            seen = self._secrets.reached(
                word,
                base=base,
                session_dir=facts.session_dir,
                folders=folders,
                listing=program in LISTING,
            )
            if seen is not None:
                return seen
        return None

    # ---- write-outside-session -------------------------------------------------------

    def _write_outside(self, facts: Facts) -> list[GuardHit]:
        found = []
        for index, subject in enumerate(facts.subjects):
            outside = self._outside_writes(facts, subject)
            if outside:
                found.append(
                    GuardHit(
                        guard="write-outside-session",
                        subjects=(index,),
                        detail=outside,
                        message="corral's policy blocks writing outside the session "
                        f"directory {facts.session_dir} ({outside})",
                        word=outside.split(" ", 1)[0],
                    )
                )
        return found

    def _outside_writes(self, facts: Facts, subject: Subject) -> str | None:
        if subject.path is not None:
            writes = facts.tool in _WRITE_KINDS or subject.origin == "diff"
            return subject.path.given if writes and self._outside(subject.path) else None
        if subject.command is None:
            return None
        for target in write_targets(subject.command):
            for expanded in (expand_home(t, self.home) for t in expand_braces(target)):
                if expanded.startswith(_DEVICES) or "$" in expanded or "`" in expanded:
                    continue  # a device, or unknown: the unknown-command guard judges it
                if subject.cwd is None and not os.path.isabs(expanded):
                    return f"{target} after a cd to an unknown directory"
                path = path_facts(
                    expanded,
                    base=subject.cwd or facts.session_dir,
                    session_dir=facts.session_dir,
                    home=self.home,
                )
                if self._outside(path):
                    return target
        return None

    def _outside(self, path: PathFacts) -> bool:
        """Outside the session directory and every `writable` place (in any form)."""
        if all(path.inside):
            return False
        return not any(glob.matches(path, every_form=True) for glob in self.writable)

    # ---- unknown-command ---------------------------------------------------------------

    def _unknown(self, facts: Facts, dangerous: set[int]) -> list[GuardHit]:
        found = []
        for index, subject in enumerate(facts.subjects):
            if subject.command is None or index in dangerous:
                continue
            verdict = judge_command(subject.command, cwd=subject.cwd, session_dir=facts.session_dir)
            if isinstance(verdict, Unknown):
                text = subject.command.text
                found.append(
                    GuardHit(
                        guard="unknown-command",
                        subjects=(index,),
                        detail=f"{text}: {verdict.reason}",
                        message="corral's policy cannot tell that this command is harmless "
                        f"({verdict.word!r} in {text!r}: {verdict.reason})",
                        word=verdict.word,
                    )
                )
        return found


def _text(pipeline: tuple[SimpleCommand, ...]) -> list[str]:
    return [
        stage.text or "( " + "; ".join(c.text for c in stage.inner) + " )" for stage in pipeline
    ]


def _downloads(command: SimpleCommand) -> bool:
    program, _ = program_of(command.words)
    return program in _DOWNLOADERS or any(_downloads(inner) for inner in command.inner)


def _saved_as(command: SimpleCommand) -> list[str]:
    """The file names a download is saved under (`-o x`, `> x`, `-O`: the URL's name)."""
    program, arguments = program_of(command.words)
    names = [os.path.basename(target) for target in write_targets(command)]
    remote_name = program == "wget" or any(a in ("-O", "--remote-name") for a in arguments)
    if program in _DOWNLOADERS and remote_name:
        urls = [a for a in arguments if "://" in a]
        names += [os.path.basename(url.split("?", 1)[0].rstrip("/")) for url in urls]
    return names


def _runs_code(command: SimpleCommand) -> bool:
    """A shell, an interpreter, `source`/`eval`, or a program run by its path."""
    called = invocation(command.words)
    program = called.program
    if is_shell(program) or program in _SOURCING or program in AWKS:
        return True
    if is_interpreter(program):
        module = called.arguments[1:2] if called.arguments[:1] == ("-m",) else ()
        return not (module and module[0] in PYTHON_MODULES)
    return "/" in called.word


def _code_files(command: SimpleCommand) -> list[str]:
    """The files a runner runs: its program path, its script operand."""
    called = invocation(command.words)
    _, operands = options_and_operands(called.arguments)
    return [called.word, *operands[:1]]


def _runs_stdin(command: SimpleCommand) -> bool:
    """A shell or interpreter that reads its program from standard input."""
    called = invocation(command.words)
    program = called.program
    options, operands = options_and_operands(called.arguments)
    if "xargs" in called.wrappers and (is_shell(program) or is_interpreter(program)):
        return True  # its arguments are what came down the pipe
    if is_shell(program):
        return not any(o.startswith("-") and not o.startswith("--") and "c" in o for o in options)
    if is_interpreter(program):
        runs_other = any(option in ("-m", "-c", "-e", "-E") for option in options)
        return not runs_other and (not operands or operands[0] in STDIN_NAMES)
    if program in AWKS:
        return awk_runs_commands(called.arguments)
    return program in ("source", ".") and operands[:1] in ([], *([s] for s in STDIN_NAMES))
