"""Package layout: the top-level folders install under the `corral` namespace.

The repository's top level shows the architecture (`pipeline/`, `actors/`,
`sources/`, `sinks/`); installed, they are `corral.pipeline` and so on, so no
generic module name like `pipeline` ever lands in site-packages. `corral`
itself is a namespace package.
"""

from pathlib import Path

from setuptools import setup

TOP_LEVEL = ("pipeline", "actors", "sources", "sinks")


def _packages() -> dict[str, str]:
    found: dict[str, str] = {}
    for top in TOP_LEVEL:
        for init in sorted(Path(top).rglob("__init__.py")):
            folder = init.parent
            found["corral." + ".".join(folder.parts)] = folder.as_posix()
    return found


PACKAGES = _packages()
setup(packages=list(PACKAGES), package_dir=PACKAGES)
