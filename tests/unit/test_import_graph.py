"""The import graph of the top-level folders is straight: pipeline <- {sources, sinks} <- actors.

`pipeline/` is the contract and imports none of the others; `sources/` and
`sinks/` import only `pipeline/` (never each other, never `actors/`);
`actors/` wires everything together and may import all of them. Every
module is parsed (never imported), every `import` and `from ... import`
found anywhere in it (inside functions too) is resolved, relative ones
against the module's own package, and each edge that crosses into a folder
it must not reach is reported with file and line. A provider's package
(`sources/<name>/`) is named only from its own folder and the few places
listed in `NAMES_PROVIDERS`; and every module ARCHITECTURE.md names exists,
so the map stays true.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator
from pathlib import Path

import attrs
import pytest

ROOT = Path(__file__).resolve().parents[2]
NAMESPACE = "corral"

# Which top-level folders each one may import (itself included).
ALLOWED: dict[str, frozenset[str]] = {
    "pipeline": frozenset({"pipeline"}),
    "sources": frozenset({"pipeline", "sources"}),
    "sinks": frozenset({"pipeline", "sinks"}),
    "actors": frozenset({"pipeline", "sources", "sinks", "actors"}),
}


@attrs.frozen
class Edge:
    path: str  # the importing file, relative to the repository
    line: int
    target: str  # the imported module, as an installed name (corral.x.y)

    def __str__(self) -> str:
        return f"{self.path}:{self.line} imports {self.target}"


# The front door, `corral` itself (`import corral`), is this folder (setup.py).
FRONT = Path("actors/front-door")


def _package_of(path: Path, root: Path = ROOT) -> list[str]:
    """The installed package a module runs in: actors/replay/_x.py -> corral.actors.replay."""
    folder = path.relative_to(root).parent
    return [NAMESPACE] if folder == FRONT else [NAMESPACE, *folder.parts]


def _resolve(node: ast.ImportFrom, package: list[str]) -> list[str]:
    """The absolute modules a `from ... import` reaches (names may be submodules)."""
    if node.level == 0:
        base = node.module or ""
    else:
        anchor = package[: len(package) - (node.level - 1)]
        base = ".".join(anchor + ([node.module] if node.module else []))
    if node.module is None:  # `from . import x`: x is a submodule or a name of the package
        return [f"{base}.{alias.name}" for alias in node.names]
    return [base]


def imports_of(path: Path, root: Path = ROOT) -> Iterator[Edge]:
    tree = ast.parse(path.read_bytes(), filename=str(path))
    package = _package_of(path, root)
    where = path.relative_to(root).as_posix()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield Edge(where, node.lineno, alias.name)
        elif isinstance(node, ast.ImportFrom):
            for target in _resolve(node, package):
                yield Edge(where, node.lineno, target)
                if node.module is not None:  # `from ..sources import claude`: maybe a package
                    for alias in node.names:
                        yield Edge(where, node.lineno, f"{target}.{alias.name}")


def _folder_of(target: str) -> str | None:
    parts = target.split(".")
    if len(parts) >= 2 and parts[0] == NAMESPACE and parts[1] in ALLOWED:
        return parts[1]
    return None


def _one_per_line(edges: list[Edge]) -> list[Edge]:
    """The first edge of each import statement (`from a import b, c` may yield a, a.b, a.c)."""
    seen: set[tuple[str, int]] = set()
    kept: list[Edge] = []
    for edge in edges:
        if (edge.path, edge.line) not in seen:
            seen.add((edge.path, edge.line))
            kept.append(edge)
    return kept


def forbidden_edges(root: Path = ROOT) -> list[Edge]:
    found: list[Edge] = []
    for folder, allowed in ALLOWED.items():
        for path in sorted((root / folder).rglob("*.py")):
            for edge in imports_of(path, root):
                reached = _folder_of(edge.target)
                if reached is not None and reached not in allowed:
                    found.append(edge)
    return _one_per_line(found)


def test_no_top_level_folder_imports_one_it_must_not() -> None:
    bad = forbidden_edges()
    assert not bad, "imports against the graph (see ARCHITECTURE.md):\n" + "\n".join(map(str, bad))


def front_door_edges(root: Path = ROOT) -> list[Edge]:
    """Imports of `corral` itself: it gathers the package, so nothing in it may import it."""
    found: list[Edge] = []
    for folder in ALLOWED:
        for path in sorted((root / folder).rglob("*.py")):
            found += [edge for edge in imports_of(path, root) if edge.target == NAMESPACE]
    return _one_per_line(found)


def test_the_front_door_sits_on_top_nothing_imports_it() -> None:
    bad = front_door_edges()
    assert not bad, "`corral` itself imported inside the package:\n" + "\n".join(map(str, bad))


def test_an_import_of_the_front_door_is_caught(tmp_path: Path) -> None:
    for folder in ALLOWED:
        (tmp_path / folder).mkdir()
    (tmp_path / "sinks" / "bad.py").write_text("import attrs\nfrom corral import Runtime\n")
    (tmp_path / "actors" / "fine.py").write_text(
        "from corral.sinks import lines\nfrom .. import pipeline\n"
    )
    assert [(e.path, e.line) for e in front_door_edges(tmp_path)] == [("sinks/bad.py", 2)]


def test_the_front_door_is_the_corral_package() -> None:
    assert (ROOT / FRONT / "__init__.py").is_file()
    assert _package_of(ROOT / FRONT / "__init__.py") == [NAMESPACE]


# Outside its own folder, a provider (sources/<name>/) is named only here: the
# registry lists them, the bench measures each wire's translator, and the mock
# is what `--mock SCRIPT`, the demo, `Runtime(mock=...)` and the front door
# (`corral.load_script`, for `Runtime(mock=...)`) offer.
NAMES_PROVIDERS = frozenset(
    {
        "sources/registry.py",
        "actors/cli.py",
        "actors/_cli_inputs.py",  # `--mock NAME|FILE`, read for the CLI
        "actors/demo.py",
        "actors/runtime.py",
        f"{FRONT.as_posix()}/__init__.py",
    }
)


def _providers(root: Path = ROOT) -> set[str]:
    """The packages of sources/ but its private ones (`_kit/`: the plumbing they share)."""
    packages = (init.parent.name for init in (root / "sources").glob("*/__init__.py"))
    return {name for name in packages if not name.startswith("_")}


def provider_edges(root: Path = ROOT) -> list[Edge]:
    """Imports of a provider's package from outside it (and outside NAMES_PROVIDERS)."""
    providers = _providers(root)
    found: list[Edge] = []
    for folder in ALLOWED:
        for path in sorted((root / folder).rglob("*.py")):
            where = path.relative_to(root)
            if where.as_posix() in NAMES_PROVIDERS or where.parts[:2] == ("actors", "bench"):
                continue
            own = where.parts[1] if where.parts[0] == "sources" and len(where.parts) > 2 else None
            for edge in imports_of(path, root):
                parts = edge.target.split(".")
                provider = parts[2] if parts[1:2] == ["sources"] and len(parts) > 2 else None
                if provider in providers and provider != own:
                    found.append(edge)
    return _one_per_line(found)


def test_provider_knowledge_stays_in_its_own_source_folder() -> None:
    bad = provider_edges()
    assert not bad, "a provider named outside sources/<name>/:\n" + "\n".join(map(str, bad))


def test_every_folder_has_modules_to_check() -> None:
    for folder in ALLOWED:
        assert any((ROOT / folder).rglob("*.py")), folder


@pytest.mark.parametrize(
    ("module", "source", "expected"),
    [
        ("sources/replay/_x.py", "from ...actors.engine import Engine", "corral.actors.engine"),
        ("sources/replay/__init__.py", "from ..claude import x", "corral.sources.claude"),
        ("sinks/transcript/_x.py", "from ...sources import replay", "corral.sources"),
        ("sinks/_x.py", "from . import lines", "corral.sinks.lines"),
        ("pipeline/_x.py", "import corral.actors.cli", "corral.actors.cli"),
        ("actors/_x.py", "from corral.sinks import metrics", "corral.sinks"),
    ],
)
def test_relative_imports_resolve_against_the_module_s_package(
    module: str, source: str, expected: str
) -> None:
    node = ast.parse(source).body[0]
    package = _package_of(ROOT / module)
    if isinstance(node, ast.Import):
        assert [alias.name for alias in node.names] == [expected]
    else:
        assert isinstance(node, ast.ImportFrom)
        assert _resolve(node, package) == [expected]


def test_a_forbidden_import_is_caught(tmp_path: Path) -> None:
    for folder in ALLOWED:
        (tmp_path / folder).mkdir()
    (tmp_path / "sinks" / "bad.py").write_text(
        "def later():\n    from ..sources.replay import replay\n"
    )
    (tmp_path / "actors" / "fine.py").write_text("from ..sinks import lines\n")
    (tmp_path / "pipeline" / "fine.py").write_text("from . import events\nimport attrs\n")
    found = forbidden_edges(tmp_path)
    assert [(e.line, e.target) for e in found] == [(2, "corral.sources.replay")]


def test_every_module_architecture_md_names_exists() -> None:
    text = (ROOT / "ARCHITECTURE.md").read_text("utf-8")
    named = set(re.findall(r"\b(?:pipeline|actors|sources|sinks)/[\w./-]*", text))
    missing = [name for name in sorted(named) if not (ROOT / name.rstrip(".,")).exists()]
    assert len(named) > 20 and missing == []


def test_every_module_stays_under_400_lines() -> None:
    """A module that grows past 400 lines holds more than one thing: split it."""
    long = [
        f"{path.relative_to(ROOT)}: {lines}"
        for folder in ("pipeline", "actors", "sources", "sinks")
        for path in sorted((ROOT / folder).rglob("*.py"))
        if (lines := len(path.read_text().splitlines())) >= 400
    ]
    assert long == []
