"""What the README tells a reader holds: its policy example loads and decides as it says;
its Python example runs (against the mock agent) and passes `mypy --strict` against
corral installed from its wheel, as a user's script would."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import sysconfig
import venv
import zipfile
from pathlib import Path

import pytest
from corral.pipeline.rules import explain, parse_policy

README = Path(__file__).resolve().parents[2] / "README.md"


def _section(title: str) -> str:
    text = README.read_text()
    start = text.index(f"## {title}\n")
    end = text.find("\n## ", start + 1)
    return text[start : end if end != -1 else len(text)]


def test_the_readme_gives_exactly_two_setup_commands() -> None:
    (block,) = re.findall(r"```sh\n(.*?)```", _section("Two commands"), re.S)
    commands = [line.split("#")[0].strip() for line in block.splitlines() if line.strip()]
    assert commands == ["make demo", "make test"]


def test_the_policy_example_loads_and_decides_as_the_readme_says() -> None:
    (toml,) = re.findall(r"```toml\n(.*?)```", _section("Permission policy"), re.S)
    policy = parse_policy(toml, source="README.md")
    compound = explain(policy, "Execute", command="npm test && pip install left-pad")
    assert compound.outcome == "deny_once" and compound.decided_by == "rule:no-installs"
    assert explain(policy, "Execute", command="make check").decided_by == "rule:tests"


def _python_example() -> str:
    (block,) = re.findall(r"```python\n(.*?)```", _section("The Python API"), re.S)
    return block


# One turn that asks permission, then answers once allowed.
MOCK_TURN = [
    {
        "Emit": {
            "RequestOpened": {
                "Permission": {
                    "id": "edit1",
                    "tool": {
                        "id": "edit1",
                        "kind": "Edit",
                        "title": "Edit a.py",
                        "status": "Pending",
                        "input": {"Path": "a.py"},
                        "diffs": [],
                        "locations": ["a.py"],
                    },
                    "options": ["AllowOnce", "DenyOnce"],
                }
            }
        }
    },
    "AwaitAnswer",
    {"Emit": {"TextDelta": {"message_id": "m1", "text": "fixed it"}}},
    {"Emit": {"MessageEnded": {"message_id": "m1"}}},
    {"End": {"Completed": {"source": "Protocol"}}},
]


def _against_the_mock(example: str, script: Path) -> str:
    """The example as written, but offered the mock agent instead of the real Claude."""
    assert example.count("Runtime()") == 1 and '"claude"' in example
    mocked = example.replace("Runtime()", f"Runtime(mock=load_script({str(script)!r}))")
    return "from corral import load_script\n" + mocked.replace('"claude"', '"mock"')


def test_the_python_example_needs_no_deep_import() -> None:
    example = _python_example()
    assert "from corral import" in example
    assert not re.search(r"\b(from|import) corral\.", example)


def test_the_python_example_runs_against_the_mock_agent(tmp_path: Path) -> None:
    script = tmp_path / "script.json"
    script.write_text(json.dumps({"turns": [MOCK_TURN]}))
    env = {**os.environ, "CORRAL_HOME": str(tmp_path / "home")}
    ran = subprocess.run(
        [sys.executable, "-c", _against_the_mock(_python_example(), script)],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert ran.returncode == 0, ran.stderr
    assert "fixed it" in ran.stdout  # printed only after the permission was answered
    assert "[turn ended:" in ran.stdout


def _wheel_venv(tmp_path: Path) -> Path:
    """A virtualenv holding corral as its wheel installs it; its dependencies from ours."""
    pip_wheel = [sys.executable, "-m", "pip", "wheel", "--quiet", "--no-deps"]
    built = subprocess.run(
        [*pip_wheel, "-w", str(tmp_path), str(README.parent)],
        capture_output=True,
        text=True,
        timeout=300,
    )
    if built.returncode != 0 and not os.environ.get("CI"):
        pytest.skip(f"cannot build the wheel here: {built.stderr[-500:]}")
    assert built.returncode == 0, built.stderr
    (wheel,) = tmp_path.glob("corral-*.whl")
    names = zipfile.ZipFile(wheel).namelist()
    assert "corral/__init__.py" in names and "corral/py.typed" in names
    assert not [name for name in names if name.startswith("corral/actors/front-door")]
    home = tmp_path / "venv"
    venv.create(home, with_pip=False)
    purelib = "import sysconfig; print(sysconfig.get_paths()['purelib'])"
    ran = subprocess.run(
        [home / "bin" / "python", "-c", purelib],
        capture_output=True,
        text=True,
        check=True,
    )
    site = Path(ran.stdout.strip())
    zipfile.ZipFile(wheel).extractall(site)
    (site / "dependencies.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    return home / "bin" / "python"


@pytest.mark.slow
def test_the_python_example_passes_mypy_strict_against_the_installed_wheel(
    tmp_path: Path,
) -> None:
    python = _wheel_venv(tmp_path)
    where = subprocess.run(
        [python, "-c", "import corral; print(corral.__file__)"],
        capture_output=True,
        text=True,
        check=True,
    )
    assert where.stdout.startswith(str(tmp_path / "venv"))  # the wheel's, not our sources
    example = _python_example()
    (tmp_path / "example.py").write_text(example)
    misspelt = example.replace('dir=".")', 'dir=".", enviro=(("A", "b"),))', 1)
    assert misspelt != example
    (tmp_path / "misspelt.py").write_text(misspelt)
    mypy = [sys.executable, "-m", "mypy", "--strict", "--no-incremental"]
    mypy += ["--python-executable", str(python)]
    checked = subprocess.run(
        [*mypy, "example.py"], cwd=tmp_path, capture_output=True, text=True, timeout=300
    )
    assert checked.returncode == 0, checked.stdout + checked.stderr
    # The open options are typed keywords: a misspelt one is an error, not a runtime surprise.
    wrong = subprocess.run(
        [*mypy, "misspelt.py"], cwd=tmp_path, capture_output=True, text=True, timeout=300
    )
    assert wrong.returncode == 1 and '"enviro"' in wrong.stdout, wrong.stdout
