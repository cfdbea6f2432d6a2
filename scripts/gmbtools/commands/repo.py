"""Where the gmembench checkout is, for the commands that build or run its binaries.

From a checkout (`scripts/gmb`, or an editable install) that is the checkout holding this
package. Installed with pip, the package lives in site-packages, far from any checkout: then it
is the current folder or the nearest one above it that looks like a checkout, so `gmb run`
works from anywhere inside one. Standard library only, like `gmb run`.
"""

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
