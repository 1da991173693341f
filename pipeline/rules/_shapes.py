"""The allow-list: programs corral knows, and the shapes of their arguments.

Data for `_harmless.py`. A `Shape` says which options take text (a commit
message, a pattern: a variable there is harmless), which options make the
program run other code or reach outside the session (then the command is
unknown), how many leading operands are text rather than files (`grep
PATTERN`, `jq FILTER`, `sed SCRIPT`), and for programs with subcommands
(`git`, `npm`, `cargo`) the subcommands that are everyday reading,
building and testing. What is not here is unknown: adding a program is a
claim that every argument shape it accepts is harmless inside the session.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

import attrs

__all__ = ["PYTHON_MODULES", "PYTHON_TEST_MODULES", "RUNNERS", "SHAPES", "TEXT_PROGRAMS", "Shape"]


@attrs.frozen(kw_only=True)
class Shape:
    text_options: frozenset[str] = frozenset()  # their value is text, not a file
    bad_options: frozenset[str] = frozenset()  # run other code, or write where we cannot see
    global_bad: frozenset[str] = frozenset()  # bad before the subcommand (`git -c`, `git -C`)
    text_operands: int = 0  # leading operands that are text (a pattern, a filter, a script)
    pattern_options: frozenset[str] = frozenset()  # given, the pattern is no operand (grep -e)
    subcommands: frozenset[str] | None = None  # the first operand must be one of them
    code_options: frozenset[str] = frozenset()  # their value is code: in the session only
    runs_operands: bool = False  # operands are code it runs (tests): in the session only
    numbers: bool = False  # `head -20`: a dash and digits is a count, not an option

    def bad(self, argument: str, *, before_subcommand: bool) -> str | None:
        """The bad option in `argument` (`--pre=x`, `-B/x`, `-sd` with `-d` bad), or None."""
        name = argument.partition("=")[0]
        if name in self.bad_options or (before_subcommand and name in self.global_bad):
            return name
        if argument.startswith("--") or len(argument) < 3:
            return None
        for letter in argument[1:]:  # a bundle, or a short option with its value attached
            if f"-{letter}" in self.bad_options:
                return f"-{letter}"
            if not letter.isalpha():
                break
        return None

    def signed_numbers(self, argument: str) -> bool:
        return self.numbers and argument[1:].isdigit()


def _words(text: str) -> frozenset[str]:
    return frozenset(text.split())


def _shape(**fields: object) -> Shape:
    converted = {
        name: _words(value) if isinstance(value, str) and name != "text_operands" else value
        for name, value in fields.items()
    }
    return Shape(**converted)  # type: ignore[arg-type]


# Words are text, never files: nothing to check but assignments (export PATH=...).
TEXT_PROGRAMS = _words(
    "echo printf true false : test [ [[ ]] pwd whoami id date uname hostname which type"
    " basename dirname seq expr sleep nproc cd pushd popd export unset set wait exit return"
    " shift local declare typeset readonly read tput clear getconf locale arch logname groups"
    " ulimit umask shopt let"
)

# `uv run pytest`: the runner, then the command it runs (judged in turn).
RUNNERS: Mapping[str, str] = {
    "uv": "run",
    "poetry": "run",
    "pipenv": "run",
    "pdm": "run",
    "hatch": "run",
    "rye": "run",
    "bundle": "exec",
}

# `python -m MODULE`: modules that test, lint, format or read (and pip, judged as pip).
PYTHON_MODULES = _words(
    "pytest unittest json.tool mypy ruff black isort flake8 pylint pyflakes pycodestyle"
    " compileall py_compile doctest coverage tox nox venv tabnanny pyright"
)
# Of those, the ones whose operands are code they run: in the session only.
PYTHON_TEST_MODULES = _words("pytest unittest doctest coverage tox nox")

_READ_FILES = _words(
    "cat head tail less more wc nl tac od xxd hexdump file stat du df ls tree diff cmp comm"
    " md5sum sha1sum sha224sum sha256sum sha384sum sha512sum b2sum cksum strings readlink"
    " realpath column fold fmt paste join expand unexpand rev base64 base32 cut tr uniq"
    " touch mkdir rm rmdir cp mv ln chmod tee truncate gzip gunzip zcat bzip2 bunzip2 bzcat"
    " xz unxz xzcat zstd unzstd lsof ps printenv fd fdfind diff3 nm objdump readelf size"
)
_CHECKERS = _words(
    "mypy ruff black isort flake8 pylint pyright pyflakes tsc gofmt rustfmt clang-format"
    " shellcheck hadolint yamllint markdownlint"
)
_TEST_RUNNERS = _words("pytest py.test tox nox jest vitest mocha rspec phpunit")
_COMPILERS = _words("gcc g++ cc clang clang++ rustc javac")

_COUNTS = _shape(numbers=True, text_options="-n -c --lines --bytes")
_GREP = _shape(
    text_operands=1,
    pattern_options="-e -f --regexp --file",
    text_options="-e --regexp -A -B -C -m --max-count --label --include --exclude"
    " --exclude-dir -g --glob -t --type -T --type-not --iglob -E -F -P",
    bad_options="--pre --pre-glob --search-zip -z",
    numbers=True,
)
_GIT_SUBCOMMANDS = _words(
    "status diff log show branch rev-parse ls-files ls-tree blame grep describe tag shortlog"
    " reflog stash add commit checkout switch restore init mv rm reset merge-base cat-file"
    " show-ref diff-tree diff-index whatchanged rev-list name-rev count-objects version"
    " help check-ignore notes config remote worktree fetch"
)
_PACKAGE_SCRIPTS = _words("test t run run-script ls list outdated --version -v why explain")


def _build(subcommands: Iterable[str], **fields: object) -> Shape:
    return _shape(subcommands=frozenset(subcommands), **fields)


SHAPES: Mapping[str, Shape] = {
    **dict.fromkeys(_READ_FILES, Shape()),
    **dict.fromkeys(_CHECKERS, Shape()),
    **dict.fromkeys(
        _TEST_RUNNERS,
        _shape(
            runs_operands=True,
            text_options="-k -m -p --deselect -t --testNamePattern -g --grep -e",
            code_options="-c --config --rootdir --confcutdir -r --require --setupFiles",
        ),
    ),
    **dict.fromkeys(
        _COMPILERS,
        _shape(
            text_options="-D -U -std -W -O", bad_options="-B -wrapper --sysroot -specs -fplugin"
        ),
    ),
    "eslint": _shape(code_options="-c --config --rulesdir --plugin --resolve-plugins-relative-to"),
    "prettier": _shape(code_options="--config --plugin"),
    "cmake": _shape(code_options="-P -C", text_options="-D -G -U"),
    "ctest": _shape(code_options="-S -SP --script"),
    "ninja": _shape(code_options="-f", bad_options="-C"),
    "meson": Shape(),
    "mvn": _shape(code_options="-f --file -s --settings", text_options="-D -P -pl"),
    "gradle": _shape(
        code_options="-b --build-file -I --init-script -c --settings-file", text_options="-P -D"
    ),
    "head": _COUNTS,
    "tail": _COUNTS,
    "sort": _shape(text_options="-k -t --key --field-separator", bad_options="--compress-program"),
    "grep": _GREP,
    "egrep": _GREP,
    "fgrep": _GREP,
    "rg": _GREP,
    "ag": _GREP,
    "ack": _GREP,
    "jq": _shape(text_operands=1, text_options="--arg --argjson -r"),
    "find": _shape(
        text_options="-name -iname -path -ipath -regex -iregex -type -maxdepth -mindepth"
        " -size -mtime -mmin -atime -ctime -user -group -perm -newer -printf -wholename",
        bad_options="-fprint -fprint0 -fprintf -fls",
    ),
    "tar": _shape(
        bad_options="--to-command -I --use-compress-program --checkpoint-action --info-script"
        " -F --new-volume-script --rsh-command -P --absolute-names --transform"
    ),
    "zip": _shape(bad_options="-TT --unzip-command -T"),
    "unzip": _shape(),
    "make": _shape(
        bad_options="--eval -E -C --directory -I --include-dir",
        code_options="-f --file --makefile",
        text_options="-j --jobs -l",
    ),
    "git": _build(
        _GIT_SUBCOMMANDS,
        text_options="-m --message --author --format --pretty --grep -S -G --since --until"
        " --after --before -n --max-count --date -L --committer -U",
        global_bad="-c -C --git-dir --work-tree --exec-path --namespace --config-env",
        bad_options="--exec -O --open-files-in-pager --output --upload-pack --receive-pack"
        " --ext-diff",
    ),
    "npm": _build(_PACKAGE_SCRIPTS, bad_options="--prefix -C --script-shell"),
    "pnpm": _build(_PACKAGE_SCRIPTS, bad_options="--prefix -C --dir"),
    "yarn": _build(_PACKAGE_SCRIPTS | _words("build lint"), bad_options="--cwd"),
    "cargo": _build(
        _words("test build check clippy fmt run doc tree metadata bench nextest --version"),
        bad_options="--config -Z --manifest-path",
    ),
    "go": _build(
        _words("test build vet fmt run list env version doc mod"),
        bad_options="-exec -toolexec -overlay -C -vettool -w -modfile",
    ),
    "pip": _build(_words("list show freeze check --version")),
    "pip3": _build(_words("list show freeze check --version")),
    "curl": _shape(
        text_options="-H --header -A --user-agent -X --request -w --write-out -m --max-time",
        bad_options="-d --data --data-binary --data-raw --data-ascii --data-urlencode -F"
        " --form --form-string -T --upload-file -K --config -u --user --json -e --referer"
        " -b --cookie -c --cookie-jar --proxy -x --unix-socket --engine --netrc-file",
    ),
    "wget": _shape(
        text_options="-U --user-agent --header -t --tries -T --timeout",
        bad_options="--post-data --post-file --body-data --body-file -i --input-file -e"
        " --execute --config --load-cookies --save-cookies --use-askpass",
    ),
}
