"""The `corral` command as its users expect it, each convention through a real subprocess.

Exit statuses that mean something (0, 1, 2, 130), one line and no traceback
for a user's mistake, `--version`, `agents`, shipped mock scripts by name,
shell completion, colour only on a terminal and never with NO_COLOR, export
formats, the config file under flags, and a clear word on a platform corral
does not support. Every line `corral serve` writes here goes through
`ServeProcess`, which checks it against the schema.
"""

from __future__ import annotations

import asyncio
import contextlib
import io
import json
import os
import pty
import re
import shutil
import signal
import stat
import subprocess
import sys
import tarfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import orjson
import pytest
from corral.actors import cli
from corral.actors._cli_errors import one_line
from corral.actors._config import ServeDefaults, load_serve_defaults
from corral.sinks._color import use_color

from tests.support.disks import tmpfs
from tests.support.serve import ServeProcess

CORRAL = (sys.executable, "-m", "corral.actors.cli")


def corral(
    *argv: str, env: dict[str, str] | None = None, **options: object
) -> subprocess.CompletedProcess[str]:
    """`corral ARGV...` run to its end (bounded), its output as text."""
    full_env = {**os.environ, **(env or {})}
    return subprocess.run(  # type: ignore[call-overload, no-any-return]
        [*CORRAL, *argv], capture_output=True, text=True, env=full_env, timeout=60,
        stdin=subprocess.DEVNULL, **options,
    )  # fmt: skip


def assert_one_line_error(
    result: subprocess.CompletedProcess[str], status: int, *words: str
) -> None:
    assert result.returncode == status, result.stderr
    assert "Traceback" not in result.stderr
    lines = result.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("corral: "), result.stderr
    for word in words:
        assert word in lines[0], lines[0]


# ---- version, help, exit statuses ----------------------------------------------------------


def test_version_prints_the_distribution_version() -> None:
    result = corral("--version")
    assert result.returncode == 0
    assert result.stdout.strip() == f"corral {cli.version()}"


def test_help_lists_the_exit_statuses_the_environment_and_the_config_file() -> None:
    result = corral("--help")
    assert result.returncode == 0
    for text in ("0    ok", "1    a failure", "2    usage", "130  interrupted"):
        assert text in result.stdout
    for text in ("CORRAL_HOME", "NO_COLOR", "CORRAL_CLAUDE_BIN", "config.toml", "completion"):
        assert text in result.stdout
    serve_help = corral("serve", "--help").stdout
    assert "config.toml" in serve_help and "handshake_timeout" in serve_help


def test_a_usage_mistake_exits_2() -> None:
    result = corral("no-such-command")
    assert result.returncode == 2 and "invalid choice" in result.stderr


def test_importing_a_path_that_is_not_there_fails_in_one_line() -> None:
    result = corral("import", "/nonexistent")
    assert_one_line_error(result, 1, "/nonexistent", "No such file")


def test_ctrl_c_exits_130_without_a_traceback() -> None:
    # `serve` has its own test: a clean shutdown first (test_serve_process.py).
    async def interrupt() -> tuple[int, bytes]:
        demo = await asyncio.create_subprocess_exec(
            *CORRAL, "demo", "--no-metrics", "--no-transcripts", "--speed", "0.2",
            stdin=asyncio.subprocess.DEVNULL, stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
        )  # fmt: skip
        try:
            assert demo.stdout is not None
            async with asyncio.timeout(30):
                await demo.stdout.readline()  # the demo is running
                demo.send_signal(signal.SIGINT)
                _, stderr = await demo.communicate()
            return await demo.wait(), stderr
        finally:
            if demo.returncode is None:
                demo.kill()
                await demo.wait()

    status, stderr = asyncio.run(interrupt())
    assert status == 130, stderr
    assert b"Traceback" not in stderr and b"interrupted" in stderr


# ---- a user's mistake is one line -------------------------------------------------------


def test_a_corral_home_that_is_a_file_is_one_line_saying_so(tmp_path: Path) -> None:
    home = tmp_path / "home"
    home.write_text("not a folder")
    result = corral("transcripts", "list", env={"CORRAL_HOME": str(home)})
    assert_one_line_error(result, 1, str(home), "CORRAL_HOME")


def test_a_read_only_corral_home_is_one_line_saying_so(tmp_path: Path) -> None:
    home = tmp_path / "home"
    if os.geteuid() == 0:  # root writes into a chmod-ed folder: a read-only file system then
        if shutil.which("mount") is None:
            pytest.skip("running as root and no mount command: cannot make a read-only folder")
        context: Any = tmpfs(home, "ro", "size=64k")
    else:
        home.mkdir()
        home.chmod(stat.S_IRUSR | stat.S_IXUSR)
        context = contextlib.nullcontext(home)
    with context:
        result = corral("transcripts", "list", env={"CORRAL_HOME": str(home)})
    if os.geteuid() != 0:
        home.chmod(stat.S_IRWXU)
    assert_one_line_error(result, 1, str(home), "CORRAL_HOME")


def test_a_bad_policy_file_is_one_line_naming_it(tmp_path: Path) -> None:
    policy = tmp_path / "policy.toml"
    policy.write_text("rules = [\n")
    result = corral("serve", "--policy", str(policy))
    assert_one_line_error(result, 1, str(policy), "corral policy check")


def test_a_bad_metrics_address_is_a_usage_error_in_one_line() -> None:
    result = corral("serve", "--metrics", "nowhere:port")
    assert_one_line_error(result, 2, "--metrics", "HOST:PORT")


def test_an_unknown_mock_script_names_the_shipped_ones() -> None:
    result = corral("serve", "--mock", "no-such-script")
    assert_one_line_error(result, 2, "no-such-script", "tester")


def test_a_bug_still_shows_its_traceback() -> None:
    assert one_line(RuntimeError("a bug")) is None
    assert one_line(KeyError("x")) is None
    assert one_line(OSError("no path: a bug, not a user's file")) is None
    group = ExceptionGroup("g", [FileNotFoundError(2, "No such file", "/x"), ValueError()])
    assert one_line(group) is None


# ---- the archive: a real session, then the commands on it -------------------------------


@pytest.fixture(scope="module")
def archive(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Path, str]]:
    """An archive holding one session of the shipped `tester` script, and its id."""
    root = tmp_path_factory.mktemp("archive")

    async def one_session() -> None:
        serve = await ServeProcess.start("--mock", "tester", "--transcripts", str(root))
        try:
            info = await serve.ok({"cmd": "open", "agent": "mock", "dir": str(root)})
            await serve.ok({"cmd": "prompt", "session": info["id"], "text": "install deps"})
            await serve.wait_event(info["id"], "RequestOpened")
            answer = {"Permission": "AllowOnce"}
            await serve.ok(
                {"cmd": "answer", "session": info["id"], "request": "pip1", "answer": answer}
            )
            await serve.wait_event(info["id"], "TurnEnded")
            assert await serve.finish() == 0, serve.stderr
        finally:
            await serve.kill()

    asyncio.run(one_session())
    listed = corral("transcripts", "list", "--json", "--transcripts", str(root))
    (row,) = [json.loads(line) for line in listed.stdout.splitlines()]
    yield root, row["transcript_id"]


def test_serve_mock_takes_a_shipped_script_by_name(archive: tuple[Path, str]) -> None:
    root, transcript_id = archive
    shown = corral("transcripts", "show", transcript_id, "--transcripts", str(root))
    assert shown.returncode == 0
    assert "Dependencies installed." in shown.stdout  # the words of scripts/tester.json


def test_export_into_a_missing_folder_is_one_line(
    archive: tuple[Path, str], tmp_path: Path
) -> None:
    root, transcript_id = archive
    target = tmp_path / "missing" / "out.html"
    result = corral(
        "transcripts", "export", transcript_id, "-o", str(target), "--transcripts", str(root)
    )
    assert_one_line_error(result, 1, str(target))


def test_export_picks_its_format_from_the_file_name(
    archive: tuple[Path, str], tmp_path: Path
) -> None:
    root, transcript_id = archive
    for name, starts in (("t.html", "<!doctype html>"), ("t.md", "# "), ("t.jsonl", "{")):
        target = tmp_path / name
        result = corral(
            "transcripts", "export", transcript_id, "-o", str(target), "--transcripts", str(root)
        )
        assert result.returncode == 0, result.stderr
        assert target.read_text().lower().startswith(starts.lower()), name
    records = [orjson.loads(line) for line in (tmp_path / "t.jsonl").read_bytes().splitlines()]
    assert len(records) > 3  # the transcript as stored: header, records, footer


def test_export_format_flag_wins_and_html_still_works(archive: tuple[Path, str]) -> None:
    root, transcript_id = archive
    markdown = corral(
        "transcripts", "export", transcript_id, "--format", "markdown", "--transcripts", str(root)
    )
    assert markdown.returncode == 0
    assert "## " in markdown.stdout  # a heading per turn
    assert (
        "```\npip install -r requirements-dev.txt" in markdown.stdout
    )  # the tool's command, fenced
    assert "Successfully installed pytest-9.0" in markdown.stdout
    page = corral("transcripts", "export", transcript_id, "--html", "--transcripts", str(root))
    assert page.returncode == 0 and page.stdout.lower().startswith("<!doctype html>")


def _on_a_terminal(*argv: str, env: dict[str, str]) -> str:
    """What `corral ARGV...` writes to stdout when stdout is a terminal (a pty)."""
    leader, follower = pty.openpty()
    try:
        process = subprocess.Popen(
            [*CORRAL, *argv], stdout=follower, stderr=subprocess.PIPE, stdin=subprocess.DEVNULL,
            env={**os.environ, **env},
        )  # fmt: skip
        os.close(follower)
        chunks = []
        while True:
            try:
                chunk = os.read(leader, 65536)
            except OSError:  # EIO: the child closed the terminal
                break
            if not chunk:
                break
            chunks.append(chunk)
        assert process.wait(timeout=60) == 0
    finally:
        os.close(leader)
    return b"".join(chunks).decode()


@pytest.mark.slow  # four runs of the command
def test_colour_only_on_a_terminal_and_never_with_no_color(archive: tuple[Path, str]) -> None:
    root, transcript_id = archive
    show = ("transcripts", "show", transcript_id, "--transcripts", str(root))
    env = {k: v for k, v in os.environ.items() if k != "NO_COLOR"}
    assert "\x1b[" in _on_a_terminal(*show, env=env)
    assert "\x1b[" not in _on_a_terminal(*show, env={**env, "NO_COLOR": "1"})
    assert "\x1b[" not in corral(*show).stdout  # a pipe
    assert "\x1b[" not in corral(*show, "--color", env={"NO_COLOR": "1"}).stdout


class _Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_use_color_is_the_one_rule() -> None:
    assert use_color(_Terminal(), environ={}) is True
    assert use_color(_Terminal(), environ={"NO_COLOR": "1"}) is False
    assert use_color(_Terminal(), True, environ={"NO_COLOR": "1"}) is False
    assert use_color(_Terminal(), False, environ={}) is False
    assert use_color(io.StringIO(), environ={}) is False
    assert use_color(io.StringIO(), True, environ={}) is True


# ---- agents, completion -----------------------------------------------------------------


def _fake_claude(folder: Path) -> Path:
    executable = folder / "claude"
    executable.write_text("#!/bin/sh\necho '9.8.7 (Claude Code)'\n")
    executable.chmod(0o755)
    return executable


def test_agents_lists_the_catalog_installed_or_not(tmp_path: Path) -> None:
    claude = _fake_claude(tmp_path)
    (tmp_path / "empty").mkdir()
    # Nothing else to find: an empty PATH folder, no login shell to ask, an empty HOME.
    env = {
        "CORRAL_CLAUDE_BIN": str(claude), "HOME": str(tmp_path),
        "PATH": str(tmp_path / "empty"), "SHELL": "",
    }  # fmt: skip
    table = corral("agents", env=env)
    assert table.returncode == 0, table.stderr
    rows = {line.split()[0]: line for line in table.stdout.splitlines()}
    assert rows["AGENT"].split()[:3] == ["AGENT", "NAME", "VERSION"]
    assert "9.8.7" in rows["claude"] and str(claude) in rows["claude"]
    assert "missing" in rows["codex"] and "npm install" in rows["codex"]

    listing = corral("agents", "--json", env=env)
    agents = {agent["id"]: agent for agent in json.loads(listing.stdout)["agents"]}
    assert agents["claude"]["installed"] is True
    assert agents["claude"]["version"] == "9.8.7"
    assert agents["claude"]["path"] == str(claude)
    assert agents["claude"]["found"] == "EnvOverride"
    assert agents["codex"]["installed"] is False and agents["codex"]["install_hint"]


@pytest.mark.parametrize(("shell", "marker"), [("bash", "complete "), ("zsh", "#compdef corral")])
def test_completion_prints_the_shell_script(shell: str, marker: str) -> None:
    result = corral("completion", shell)
    assert result.returncode == 0 and marker in result.stdout


def test_completion_completes_the_commands(tmp_path: Path) -> None:
    answer = tmp_path / "completions"
    env = {
        "_ARGCOMPLETE": "1", "_ARGCOMPLETE_SHELL": "bash", "COMP_LINE": "corral ag",
        "COMP_POINT": "9", "_ARGCOMPLETE_STDOUT_FILENAME": str(answer), "_ARGCOMPLETE_IFS": " ",
    }  # fmt: skip
    result = corral(env=env)
    assert result.returncode == 0, result.stderr
    assert answer.read_text().split() == ["agents"]


# ---- the config file ------------------------------------------------------------------------


async def _one_closed_session(*args: str, env: dict[str, str], workdir: Path) -> None:
    serve = await ServeProcess.start("--mock", "tester", *args, env=env)
    try:
        info = await serve.ok({"cmd": "open", "agent": "mock", "dir": str(workdir)})
        await serve.ok({"cmd": "close", "session": info["id"]})
        assert await serve.finish() == 0, serve.stderr
    finally:
        await serve.kill()


def test_the_config_file_sets_serve_s_defaults_and_a_flag_overrides_it(tmp_path: Path) -> None:
    home = tmp_path / "home"
    home.mkdir()
    from_file, from_flag = tmp_path / "from-file", tmp_path / "from-flag"
    (home / "config.toml").write_text(f'[serve]\ntranscripts = "{from_file}"\nfsync = "never"\n')
    env = {"CORRAL_HOME": str(home)}
    asyncio.run(_one_closed_session(env=env, workdir=tmp_path))
    assert list(from_file.rglob("*.jsonl")) and not (home / "transcripts").exists()
    asyncio.run(_one_closed_session("--transcripts", str(from_flag), env=env, workdir=tmp_path))
    assert list(from_flag.rglob("*.jsonl"))


@pytest.mark.slow  # three runs of the command
def test_a_bad_config_file_is_one_line_naming_the_file_and_the_key(tmp_path: Path) -> None:
    home = tmp_path / "home"
    home.mkdir()
    config = home / "config.toml"
    config.write_text('[serve]\nfsync = "sometimes"\n')
    result = corral("serve", env={"CORRAL_HOME": str(home)})
    assert_one_line_error(result, 2, str(config), "serve.fsync")
    config.write_text("[serve]\nhandshake_timout = 3\n")
    result = corral("serve", env={"CORRAL_HOME": str(home)})
    assert_one_line_error(result, 2, str(config), "handshake_timout")
    assert corral("--help", env={"CORRAL_HOME": str(home)}).returncode == 0


# ---- platforms ----------------------------------------------------------------------------


# Windows, as far as a Linux process can pretend: no POSIX-only modules, sys.platform win32
# (os.name stays: pathlib would refuse to work). The standard library loads as it does here.
PRETEND_WINDOWS = """
import asyncio, pathlib, subprocess, sys
for name in ("fcntl", "termios", "resource", "pty", "grp", "pwd"):
    sys.modules[name] = None
sys.platform = "win32"
from corral.actors.cli import main
sys.exit(main(sys.argv[1:]))
"""


def test_on_windows_help_works_and_serve_says_it_needs_posix() -> None:
    def on_windows(*argv: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-c", PRETEND_WINDOWS, *argv], capture_output=True, text=True,
            timeout=60, stdin=subprocess.DEVNULL,
        )  # fmt: skip

    helped = on_windows("--help")
    assert helped.returncode == 0, helped.stderr
    assert "exit status" in helped.stdout
    assert_one_line_error(on_windows("serve"), 1, "`serve` needs a POSIX system", "win32")


# ---- the README and the package ---------------------------------------------------------

REPO = Path(__file__).resolve().parents[2]


def test_the_readme_config_example_is_a_valid_config_file(tmp_path: Path) -> None:
    text = (REPO / "README.md").read_text()
    section = text[text.index("## The command line\n") :]
    section = section[: section.index("\n## ", 1)]
    (example,) = re.findall(r"```toml\n(.*?)```", section, re.S)
    (tmp_path / "config.toml").write_text(example)
    defaults = load_serve_defaults({"CORRAL_HOME": str(tmp_path)})
    assert defaults == ServeDefaults(
        transcripts="~/corral/transcripts",
        fsync="always",
        metrics="127.0.0.1:9464",
        policy="preset:Ask",
        handshake_timeout=60.0,
    )


@pytest.mark.slow  # builds the sdist (a minute on a busy machine)
def test_the_sdist_carries_license_tests_fixtures_and_dashboards_and_builds_clean(
    tmp_path: Path,
) -> None:
    built = subprocess.run(
        [sys.executable, "-m", "build", "--sdist", "--outdir", str(tmp_path), str(REPO)],
        capture_output=True, text=True, timeout=600, stdin=subprocess.DEVNULL,
    )  # fmt: skip
    assert built.returncode == 0, built.stderr[-2000:]
    output = built.stdout + built.stderr
    assert "!!" not in output and "WARNING" not in output, output[-4000:]
    (sdist,) = tmp_path.glob("corral-*.tar.gz")
    with tarfile.open(sdist) as archive:
        names = {name.split("/", 1)[1] for name in archive.getnames() if "/" in name}
    assert {
        "LICENSE",
        "MANIFEST.in",
        "tests/conftest.py",
        "dashboards/corral-overview.json",
    } <= names
    assert any(name.startswith("tests/fixtures/") for name in names)
    assert "sources/mock/scripts/tester.json" in names
    assert (REPO / "LICENSE").read_text().startswith("MIT License")
