"""The built-in guards: what corral never allows on its own.

A guard looks at a request's `Facts` and reports `GuardHit`s: which guard,
which subjects (commands or paths) triggered it, what it saw, and the
message the agent reads if the guard denies. The policy consults the hits
only when it is about to allow (by a rule or by the mode): a hit then turns
the allow into the guard's action (deny, or ask the app) unless the policy
turned that guard off, or every rule that allowed the subjects concerned
names the guard in `override_guards`.

The guards, in the order they are checked:
- `rm-root`: `rm` with a recursive flag on `/` or the home directory (also
  `/*`, `~/*`, `$HOME`, `..` that lands there, `--no-preserve-root`);
- `pipe-to-shell`: a download (`curl`, `wget`, ...) piped into a shell or
  interpreter reading its program from stdin, or substituted into one
  (`bash <(curl ...)`, `sh -c "$(wget ...)"`, `eval "$(curl ...)"`);
- `secret-read`: any access to well-known credential files (`~/.ssh/id_*`,
  `~/.aws/credentials`, `.env`, `~/.netrc`, agents' own auth files, ...),
  by a file tool or as a command's argument or redirection;
- `write-outside-session`: Edit/Delete/Move (or any diff) on a path outside
  the session directory, and commands that write outside it (redirections,
  `tee`, `rm`, `mv`, `cp`'s target, `touch`, `mkdir`, ..., after any `cd`);
- `unparsed-command`: a command line the shell reader could not follow.

They read commands, not minds: they catch the usual forms, and say so.
"""

from __future__ import annotations

import functools
import os

import attrs

from ._match import Facts, Subject
from ._paths import PathFacts, PathGlob, expand_home, path_facts, real_path
from ._programs import SHELLS, program_of
from ._shell import SimpleCommand

__all__ = ["GuardHit", "Guards"]

_DOWNLOADERS = frozenset({"curl", "wget", "fetch", "http", "https", "aria2c", "xh"})
_INTERPRETERS = frozenset({"python", "python3", "python2", "perl", "ruby", "node", "php", "pwsh"})
_SOURCING = frozenset({"eval", "source", "."})
_WRITE_KINDS = frozenset({"Edit", "Delete", "Move"})
_WRITE_REDIRECTS = frozenset({">", ">>", ">|", "&>", "&>>", "<>", ">&"})
_DEVICES = ("/dev/null", "/dev/stdout", "/dev/stderr", "/dev/tty", "/dev/fd/")
_WRITES_EVERY_ARGUMENT = frozenset(
    {"rm", "rmdir", "touch", "mkdir", "truncate", "shred", "unlink", "mv", "tee"}
)
_WRITES_AFTER_FIRST = frozenset({"chmod", "chown", "chgrp"})
_WRITES_LAST = frozenset({"cp", "ln", "install", "rsync", "scp"})

_SECRET_FILES = (
    "~/.ssh/id_*",
    "~/.aws/credentials",
    "~/.netrc",
    "~/.git-credentials",
    "~/.pypirc",
    "~/.npmrc",
    "~/.docker/config.json",
    "~/.kube/config",
    "~/.config/gcloud/**",
    "~/.config/gh/hosts.yml",
    "~/.azure/**",
    "~/.gnupg/**",
    "~/.password-store/**",
    "~/.claude/.credentials.json",
    "~/.codex/auth.json",
    ".env",
    ".env.*",
    "id_rsa",
    "id_dsa",
    "id_ecdsa",
    "id_ed25519",
)
_NOT_SECRET = frozenset({".env.example", ".env.sample", ".env.template", ".env.dist"})


@attrs.frozen(kw_only=True)
class GuardHit:
    guard: str
    subjects: tuple[int, ...]  # indices into Facts.subjects
    detail: str
    message: str


@functools.lru_cache(maxsize=16)
def _secret_globs(home: str) -> tuple[PathGlob, ...]:
    """Compiled once per home: every session's guards share them (3 ms a session, else)."""
    return tuple(PathGlob.parse(glob, home=home) for glob in _SECRET_FILES)


class Guards:
    """The guard checks, with the secret-file globs compiled for one home."""

    def __init__(self, home: str, *, writable: tuple[PathGlob, ...] = ()) -> None:
        self.home = home
        self.writable = writable
        self._secrets = _secret_globs(home)

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
        return tuple(found)

    # ---- rm-root ---------------------------------------------------------------

    def _rm_root(self, facts: Facts) -> list[GuardHit]:
        found = []
        for index, subject in enumerate(facts.subjects):
            command = subject.command
            if command is None:
                continue
            program, arguments = program_of(command.words)
            if program != "rm":
                continue
            options, targets = _options_and_operands(arguments)
            recursive = any(
                option == "--recursive"
                or (not option.startswith("--") and set(option) & {"r", "R"})
                for option in options
            )
            dangerous = [t for t in targets if self._root_or_home(t, subject.cwd)]
            if "--no-preserve-root" in options or (recursive and dangerous):
                found.append(
                    GuardHit(
                        guard="rm-root",
                        subjects=(index,),
                        detail=command.text,
                        message="corral's policy blocks deleting / or the home directory "
                        f"({command.text})",
                    )
                )
        return found

    def _root_or_home(self, target: str, cwd: str | None) -> bool:
        expanded = expand_home(target, self.home)
        if "$" in expanded or (cwd is None and not os.path.isabs(expanded)):
            return False  # unknown: the write guard judges unknown places
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
        for subject in facts.subjects:
            command = subject.command
            if command is None:
                continue
            program, _ = program_of(command.words)
            runs_text = program in SHELLS | _INTERPRETERS | _SOURCING
            if runs_text and any(_downloads(inner) for inner in command.inner):
                found.append(self._pipe_hit(position, [command, *command.inner], command.text))
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
        )

    # ---- secret-read -------------------------------------------------------------

    def _secret_read(self, facts: Facts) -> list[GuardHit]:
        found = []
        for index, subject in enumerate(facts.subjects):
            paths = [subject.path] if subject.path is not None else []
            if subject.command is not None:
                paths += [
                    path_facts(
                        word,
                        base=subject.cwd or facts.session_dir,
                        session_dir=facts.session_dir,
                        home=self.home,
                    )
                    for word in _path_words(subject.command)
                ]
            for path in paths:
                if self._is_secret(path):
                    found.append(
                        GuardHit(
                            guard="secret-read",
                            subjects=(index,),
                            detail=path.given,
                            message="corral's policy blocks access to credential files "
                            f"({path.given})",
                        )
                    )
                    break
        return found

    def _is_secret(self, path: PathFacts) -> bool:
        for form, root, inside in path.forms():
            name = os.path.basename(form)
            if name in _NOT_SECRET or name.endswith(".pub"):
                continue
            if any(glob.matches_form(form, root, inside) for glob in self._secrets):
                return True
        return False

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
                    )
                )
        return found

    def _outside_writes(self, facts: Facts, subject: Subject) -> str | None:
        if subject.path is not None:
            writes = facts.tool in _WRITE_KINDS or subject.origin == "diff"
            return subject.path.given if writes and self._outside(subject.path) else None
        if subject.command is None:
            return None
        for target in _write_targets(subject.command):
            expanded = expand_home(target, self.home)
            if expanded.startswith(_DEVICES) or "$" in expanded:
                continue
            if subject.cwd is None and not os.path.isabs(expanded):
                return f"{target} after a cd to an unknown directory"
            path = path_facts(
                target,
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


def _text(pipeline: tuple[SimpleCommand, ...]) -> list[str]:
    return [
        stage.text or "( " + "; ".join(c.text for c in stage.inner) + " )" for stage in pipeline
    ]


def _downloads(command: SimpleCommand) -> bool:
    program, _ = program_of(command.words)
    return program in _DOWNLOADERS or any(_downloads(inner) for inner in command.inner)


def _runs_stdin(command: SimpleCommand) -> bool:
    """A shell or interpreter that reads its program from standard input."""
    program, arguments = program_of(command.words)
    options, operands = _options_and_operands(arguments)
    if program in SHELLS:
        return not any(option.startswith("-") and "c" in option[1:] for option in options)
    if program in _INTERPRETERS:
        runs_other = any(option in ("-m", "-c", "-e", "-E") for option in options)
        return not runs_other and (not operands or operands[0] == "-")
    return program in ("source", ".") and operands[:1] in ([], ["/dev/stdin"], ["-"])


def _options_and_operands(arguments: tuple[str, ...]) -> tuple[list[str], list[str]]:
    options: list[str] = []
    operands: list[str] = []
    for index, argument in enumerate(arguments):
        if argument == "--":
            operands += arguments[index + 1 :]
            break
        (options if argument.startswith("-") and argument != "-" else operands).append(argument)
    return options, operands


def _path_words(command: SimpleCommand) -> list[str]:
    """Words of a command that may name files: operands, option values, redirections."""
    _, arguments = program_of(command.words)
    words = []
    for argument in arguments:
        value = (
            argument.split("=", 1)[1] if argument.startswith("-") and "=" in argument else argument
        )
        if value and not value.startswith("-") and "://" not in value:
            words.append(value)
    words += [r.target for r in command.redirects if r.op not in ("<<", "<<-", "<<<")]
    return [word for word in words if not word.isdigit()]


def _write_targets(command: SimpleCommand) -> list[str]:
    targets = [
        r.target
        for r in command.redirects
        if r.op in _WRITE_REDIRECTS and not (r.target.isdigit() or r.target == "-")
    ]
    program, arguments = program_of(command.words)
    _, operands = _options_and_operands(arguments)
    if program in _WRITES_EVERY_ARGUMENT:
        targets += operands
    elif program in _WRITES_AFTER_FIRST:
        targets += operands[1:]
    elif program in _WRITES_LAST:
        targets += operands[-1:]
    elif program == "dd":
        targets += [a[3:] for a in arguments if a.startswith("of=")]
    return targets
