"""pip's build backend for the gmbtools package: setuptools' own, run on a copy of the files the
package is made of, in a temporary folder. In the checkout, setuptools would leave build/lib,
build/bdist.* and scripts/gmbtools.egg-info behind, and a later build would pack what build/lib
still holds of modules deleted since; from the copy, `pip install .` leaves nothing and packs
only today's files. An editable install (`pip install -e .`) must point at the checkout: it is
built there."""

import os
import shutil
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from setuptools import build_meta
from setuptools.build_meta import (  # noqa: F401 (hooks pip calls, as setuptools has them)
    build_editable, get_requires_for_build_editable, prepare_metadata_for_build_editable)

# What the package is made of (pyproject.toml's package-dir and license-files), and this
# backend, which an sdist must carry to be built again (MANIFEST, written into the copy).
SOURCES = ("pyproject.toml", "LICENSE", "scripts/gmbtools", "scripts/packaging")
MANIFEST = "graft scripts/packaging\nglobal-exclude *.py[co]\n"


@contextmanager
def _in_a_copy() -> Iterator[None]:
    """The hook runs in a temporary copy of SOURCES, as if it were the checkout."""
    root = Path.cwd()
    with tempfile.TemporaryDirectory(prefix="gmbtools-build-") as copy:
        for name in SOURCES:
            if (root / name).is_dir():
                shutil.copytree(root / name, Path(copy) / name, ignore=shutil.ignore_patterns(
                    "__pycache__", "*.pyc", "*.egg-info"))
            else:
                (Path(copy) / name).parent.mkdir(parents=True, exist_ok=True)
                shutil.copy2(root / name, Path(copy) / name)
        (Path(copy) / "MANIFEST.in").write_text(MANIFEST)
        os.chdir(copy)
        try:
            yield
        finally:
            os.chdir(root)


def _absolute(directory: str | None) -> str | None:
    return None if directory is None else os.path.abspath(directory)


def get_requires_for_build_wheel(config_settings=None):
    with _in_a_copy():
        return build_meta.get_requires_for_build_wheel(config_settings)


def prepare_metadata_for_build_wheel(metadata_directory, config_settings=None):
    metadata_directory = _absolute(metadata_directory)
    with _in_a_copy():
        return build_meta.prepare_metadata_for_build_wheel(metadata_directory, config_settings)


def build_wheel(wheel_directory, config_settings=None, metadata_directory=None):
    wheel_directory, metadata_directory = _absolute(wheel_directory), _absolute(metadata_directory)
    with _in_a_copy():
        return build_meta.build_wheel(wheel_directory, config_settings, metadata_directory)


def get_requires_for_build_sdist(config_settings=None):
    with _in_a_copy():
        return build_meta.get_requires_for_build_sdist(config_settings)


def build_sdist(sdist_directory, config_settings=None):
    sdist_directory = _absolute(sdist_directory)
    with _in_a_copy():
        return build_meta.build_sdist(sdist_directory, config_settings)
