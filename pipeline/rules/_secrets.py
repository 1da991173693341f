"""Credential files, and the words of a command that reach them.

`SecretFiles(home)` knows the well-known credential files (`~/.ssh/id_*`,
`~/.aws/credentials`, `.env`, agents' own auth files, ...). `named(path)`
says whether a path is one of them (in any form: `..` and links seen
through). `reached(word, ...)` judges a word of a command line the way the
shell would use it:
- braces are expanded first (`.{env,x}` is `.env` and `.x`);
- a glob reaches a secret when it would match one (`~/.ssh/*`, `.e*`,
  `~/.aws/cred*`): it is tried on a representative of every credential
  file, without matching a leading dot by `*` (as bash does);
- a directory holding credentials (`~/.ssh`, `~/.aws`, the home directory
  itself) reaches them when the program reads folders whole: archivers,
  `cp -r`, `rsync`, `grep -r`, `rg`.
Listing programs (`ls`, `find`, `du`, ...) read names, not contents: for
them only a word naming a credential file exactly counts.

No I/O beyond `os.path.realpath` (in `path_facts`).
"""

from __future__ import annotations

import functools
import os

from wcmatch import glob

from ._paths import PathFacts, PathGlob, expand_home, is_inside, path_facts
from ._targets import expand_braces, extracts

__all__ = ["LISTING", "SecretFiles", "reads_folders"]

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
    "*.pem",  # private keys and certificates with their keys
)
_NOT_SECRET = frozenset({".env.example", ".env.sample", ".env.template", ".env.dist"})
# One file that each home-anchored glob above matches: what a command's glob is tried on.
_EXAMPLES = (
    "~/.ssh/id_rsa",
    "~/.ssh/id_ed25519",
    "~/.aws/credentials",
    "~/.netrc",
    "~/.git-credentials",
    "~/.pypirc",
    "~/.npmrc",
    "~/.docker/config.json",
    "~/.kube/config",
    "~/.config/gcloud/credentials.db",
    "~/.config/gh/hosts.yml",
    "~/.azure/msal_token_cache.json",
    "~/.gnupg/private-keys-v1.d/key.key",
    "~/.password-store/site.gpg",
    "~/.claude/.credentials.json",
    "~/.codex/auth.json",
)
_NAME_EXAMPLES = (".env", ".env.local", "id_rsa", "id_ed25519")
_GLOB_CHARS = frozenset("*?[")
_GLOB_FLAGS = glob.GLOBSTAR  # no DOTGLOB: `*` skips dot files, as the shell's does

LISTING = frozenset(
    {"ls", "find", "fd", "fdfind", "du", "tree", "stat", "test", "[", "[[", "realpath"}
    | {"readlink", "basename", "dirname", "mkdir", "cd", "pushd", "file"}
)
_FOLDER_READERS = frozenset({"tar", "zip", "7z", "7za", "rsync", "scp", "rg", "ag", "ack"})
_RECURSIVE_FLAG_READERS = frozenset({"cp", "grep", "egrep", "fgrep"})


def reads_folders(program: str, arguments: tuple[str, ...]) -> bool:
    """Whether the program reads a folder whole (`tar c`, `cp -r`, `grep -r`, `rg`)."""
    if program == "tar":
        return not extracts(arguments)
    options = [argument for argument in arguments if argument.startswith("-")]
    if program in _FOLDER_READERS:
        return True
    if program not in _RECURSIVE_FLAG_READERS:
        return False
    return any(
        option in ("--recursive", "--archive", "--dereference-recursive")
        or (not option.startswith("--") and set(option[1:]) & set("rRa"))
        for option in options
    )


@functools.lru_cache(maxsize=16)
def _secret_globs(home: str) -> tuple[PathGlob, ...]:
    """Compiled once per home: every session's guards share them (3 ms a session, else)."""
    return tuple(PathGlob.parse(pattern, home=home) for pattern in _SECRET_FILES)


class SecretFiles:
    """The credential files of one home, and the words that reach them."""

    def __init__(self, home: str) -> None:
        self.home = home
        self._globs = _secret_globs(home)
        self._examples = tuple(expand_home(example, home) for example in _EXAMPLES)

    def named(self, path: PathFacts) -> bool:
        for form, root, inside in path.forms():
            name = os.path.basename(form)
            if name in _NOT_SECRET or name.endswith(".pub"):
                continue
            if any(pattern.matches_form(form, root, inside) for pattern in self._globs):
                return True
        return False

    def reached(
        self, word: str, *, base: str, session_dir: str, folders: bool, listing: bool
    ) -> str | None:
        """The form of `word` that reaches a credential file, or None."""
        for alternative in expand_braces(word):
            if "$" in expand_home(alternative, self.home) or "`" in alternative:
                continue  # unknown, not known secret: the unknown-command guard judges it
            path = path_facts(alternative, base=base, session_dir=session_dir, home=self.home)
            if self.named(path):
                return alternative
            if listing:
                continue
            if _GLOB_CHARS & set(alternative) and self._glob_reaches(path.lexical, folders):
                return alternative
            if folders and self._holds_secrets(path):
                return alternative
        return None

    def _glob_reaches(self, pattern: str, folders: bool) -> bool:
        candidates = list(self._examples)
        if folders:
            candidates += [os.path.dirname(example) for example in self._examples]
        names: tuple[str, ...] = _NAME_EXAMPLES
        if not set(os.path.basename(pattern)) - set("*?"):
            names = tuple(n for n in names if n.startswith("."))  # a bare `*`: not a key hunt
        candidates += [os.path.join(os.path.dirname(pattern), name) for name in names]
        return any(glob.globmatch(c, pattern, flags=_GLOB_FLAGS) for c in candidates)

    def _holds_secrets(self, path: PathFacts) -> bool:
        """A folder that holds credential files: `~/.ssh`, `~/.aws`, `~`, `/`."""
        for form, _, _ in path.forms():
            if any(is_inside(example, form) for example in self._examples):
                return True
        return False
