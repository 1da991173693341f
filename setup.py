"""Package layout: the top-level folders install as `corral`'s subpackages.

The repository's top level shows the architecture (`pipeline/`, `actors/`,
`sources/`, `sinks/`); installed, they are `corral.pipeline` and so on, so no
generic module name like `pipeline` ever lands in site-packages. `corral`
itself, the front door (`import corral`, its `py.typed`), is the folder
`actors/front-door/`: its name is not an identifier, so it is kept out of
`corral.actors` here and no import statement can reach its file under a
second name.
"""

from pathlib import Path

from setuptools import setup

TOP_LEVEL = ("pipeline", "actors", "sources", "sinks")
FRONT = Path("actors/front-door")


def _packages() -> dict[str, str]:
    found: dict[str, str] = {"corral": FRONT.as_posix()}
    for top in TOP_LEVEL:
        for init in sorted(Path(top).rglob("__init__.py")):
            folder = init.parent
            if folder == FRONT:
                continue
            found["corral." + ".".join(folder.parts)] = folder.as_posix()
    return found


PACKAGES = _packages()
setup(
    packages=list(PACKAGES),
    package_dir=PACKAGES,
    package_data={"corral": ["py.typed"]},
    exclude_package_data={"corral.actors": [f"{FRONT.name}/*"]},
)
