"""Where the gmembench checkout is, for the commands that build or run its binaries; which
output files git tracks, so that no command overwrites committed results unasked.

From a checkout (`scripts/gmb`, or an editable install) that is the checkout holding this
package. Installed with pip, the package lives in site-packages, far from any checkout: then it
is the current folder or the nearest one above it that looks like a checkout, so `gmb run`
works from anywhere inside one. Standard library only, like `gmb run`.
"""

import subprocess
from collections.abc import Iterable
from pathlib import Path

from gmbtools.errors import GmbError

# What makes a folder a gmembench checkout: `gmb run` runs the first and configures the second.
MARKERS = ("scripts/setup", "CMakeLists.txt")

# scripts/gmbtools/repo.py -> the checkout's root, when the package runs from one.
PACKAGE_CHECKOUT = Path(__file__).resolve().parents[3]


def is_checkout(folder: Path) -> bool:
    return all((folder / marker).is_file() for marker in MARKERS)


def find_repo(start: Path | None = None, package_checkout: Path = PACKAGE_CHECKOUT) -> Path:
    """The checkout that holds this package, else the nearest checkout at or above `start`
    (default: the current folder). A GmbError (one line) when there is none."""
    if is_checkout(package_checkout):
        return package_checkout
    here = (start or Path.cwd()).resolve()
    for folder in (here, *here.parents):
        if is_checkout(folder):
            return folder
    raise GmbError(
        f"no gmembench checkout at or above {here} (a folder with {' and '.join(MARKERS)}):"
        " run this command inside a clone of the repository"
    )


def refuse_tracked(paths: Iterable[Path], force: bool, elsewhere: str = "--out DIR") -> None:
    """A GmbError naming the first of `paths` that git tracks, unless `force`: committed results
    are what the docs cite, and a documented command must leave the checkout clean. `elsewhere`
    is how this command writes to another place instead."""
    found = [] if force else tracked(paths)
    if found:
        raise GmbError(f"{found[0]} is tracked by git: write elsewhere ({elsewhere}) or pass"
                       " --force to overwrite it")


def tracked(paths: Iterable[Path]) -> list[Path]:
    """The existing files among `paths` that git tracks (one `git ls-files` per folder). Without
    git, or outside a work tree, none is."""
    folders: dict[Path, list[str]] = {}
    for path in paths:
        if path.is_file():
            folders.setdefault(path.parent, []).append(path.name)
    found = []
    for folder, names in folders.items():
        try:
            listed = subprocess.run(["git", "--literal-pathspecs", "-C", str(folder), "ls-files",
                                     "-z", "--", *names],
                                    capture_output=True, text=True, timeout=60)
        except (OSError, subprocess.TimeoutExpired):
            continue
        if listed.returncode == 0:
            found += [folder / name for name in listed.stdout.split("\0") if name]
    return found
