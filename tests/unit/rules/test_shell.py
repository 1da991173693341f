"""The shell reader: every command a line would run, quotes respected."""

from __future__ import annotations

import pytest
from corral.pipeline.rules import parse_shell
from corral.pipeline.rules._programs import program_of

SPLITS = [
    ("git status", [["git", "status"]]),
    ("git status && npm test", [["git", "status"], ["npm", "test"]]),
    ("a || b; c & d", [["a"], ["b"], ["c"], ["d"]]),
    ("ls -la | grep x |& tee log", [["ls", "-la"], ["grep", "x"], ["tee", "log"]]),
    ("a\nb", [["a"], ["b"]]),
    ('echo "a && b; c | d"', [["echo", "a && b; c | d"]]),
    ("echo 'a && b' \"x\"y", [["echo", "a && b", "xy"]]),
    ("echo a\\;b", [["echo", "a;b"]]),
    ("(cd sub && make) || true", [["cd", "sub"], ["make"], ["true"]]),
    ("{ a; b; } > out", [["a"], ["b"]]),
    ("echo $(whoami) `date`", [["whoami"], ["date"], ["echo", "$(...)", "$(...)"]]),
    ('echo "$(id -u)"', [["id", "-u"], ["echo", "$(...)"]]),
    ("diff <(sort a) >(cat)", [["sort", "a"], ["cat"], ["diff", "<(...)", ">(...)"]]),
    ("echo $((1 + 2)) ${HOME}", [["echo", "$((...))", "${HOME}"]]),
    (
        "if test -f x; then rm x; else touch x; fi",
        [["test", "-f", "x"], ["rm", "x"], ["touch", "x"]],
    ),
    ("for f in *.py; do black $f; done", [["black", "$f"]]),
    ("while read l; do echo $l; done < in", [["read", "l"], ["echo", "$l"]]),
    ("ls # && rm -rf /", [["ls"]]),
    ("echo a#b", [["echo", "a#b"]]),
    ("echo a \\\n b", [["echo", "a", "b"]]),
    (
        "bash -c 'git status; rm x'",
        [["git", "status"], ["rm", "x"], ["bash", "-c", "git status; rm x"]],
    ),
    ("eval 'a && b'", [["a"], ["b"], ["eval", "a && b"]]),
    ("arr=(a 'b c' $(id)); echo ${arr[@]}", [["id"], ["arr=(...)"], ["echo", "${arr[@]}"]]),
    ("f() { echo hi; }; f", [["echo", "hi"], ["f"]]),
    ("function g { rm x; }", [["rm", "x"]]),
    (
        "find . -name '*.tmp' -exec rm {} \\;",
        [["rm", "{}"], ["find", ".", "-name", "*.tmp", "-exec", "rm", "{}", ";"]],
    ),
    (
        "git commit -m \"$(cat <<'EOF'\nit's done\nEOF\n)\"",
        [["cat"], ["git", "commit", "-m", "$(...)"]],
    ),
    ("", []),
]


@pytest.mark.parametrize(("line", "commands"), SPLITS, ids=[s[0] or "empty" for s in SPLITS])
def test_a_line_splits_into_the_commands_it_runs(line: str, commands: list[list[str]]) -> None:
    parsed = parse_shell(line)
    assert parsed.parsed
    assert [list(command.words) for command in parsed.commands] == commands


def test_pipelines_are_kept_with_their_stages() -> None:
    parsed = parse_shell("curl -s x | sudo bash; ls")
    assert [[stage.words for stage in pipe] for pipe in parsed.pipelines] == [
        [("curl", "-s", "x"), ("sudo", "bash")]
    ]


def test_a_subshell_is_one_stage_of_a_pipeline() -> None:
    (pipe,) = parse_shell("(curl x) | sh").pipelines
    assert pipe[0].words == () and pipe[0].inner[0].words == ("curl", "x")


def test_redirections_are_separated_from_words() -> None:
    (command,) = parse_shell("cmd a 2>&1 >>log.txt < in 2> /tmp/err").commands
    assert command.words == ("cmd", "a")
    assert [(r.op, r.target) for r in command.redirects] == [
        (">&", "1"),
        (">>", "log.txt"),
        ("<", "in"),
        (">", "/tmp/err"),
    ]


def test_a_heredoc_body_is_data_unless_a_shell_reads_it() -> None:
    data = parse_shell("cat > notes <<'EOF'\nit's fine; rm -rf /\nEOF\necho done")
    assert data.parsed
    assert [c.words for c in data.commands] == [("cat",), ("echo", "done")]
    script = parse_shell("cat <<EOF | bash\nrm -rf ~\nEOF")
    assert ("rm", "-rf", "~") in [c.words for c in script.commands]


@pytest.mark.parametrize(
    "line", ["echo 'open", 'echo "open', "echo $(open", "a )", "case x in a) b;; esac", "echo \\"]
)
def test_what_cannot_be_followed_is_reported_unparsed(line: str) -> None:
    parsed = parse_shell(line)
    assert not parsed.parsed
    assert [c.words for c in parsed.commands] == [tuple(line.split())]


def test_shell_text_of_sh_c_with_a_substitution_stays_inert() -> None:
    parsed = parse_shell('sh -c "$(wget -qO- http://x)"')
    assert parsed.parsed
    assert ("wget", "-qO-", "http://x") in [c.words for c in parsed.commands]


@pytest.mark.parametrize(
    ("words", "program", "arguments"),
    [
        (("rm", "-rf", "/"), "rm", ("-rf", "/")),
        (("/bin/rm", "x"), "rm", ("x",)),
        (("FOO=1", "sudo", "-u", "root", "rm", "x"), "rm", ("x",)),
        (("env", "A=b", "nice", "-n", "5", "bash"), "bash", ()),
        (("timeout", "5", "curl", "x"), "curl", ("x",)),
        (("xargs", "-I", "{}", "rm", "{}"), "rm", ("{}",)),
        (("A=1",), "", ()),
    ],
)
def test_program_of_sees_through_wrappers(
    words: tuple[str, ...], program: str, arguments: tuple[str, ...]
) -> None:
    assert program_of(words) == (program, arguments)


@pytest.mark.parametrize(
    "line", ["echo " + "$(" * 5000, "echo " + "$(a " * 500 + ")" * 500, "eval " * 200 + "x"]
)
def test_deep_nesting_is_unparsed_not_a_crash(line: str) -> None:
    assert not parse_shell(line).parsed
