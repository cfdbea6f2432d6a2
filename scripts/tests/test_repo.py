"""gmbtools.repo: the checkout `gmb run` builds in, with or without the package inside one."""

from pathlib import Path

import pytest
from conftest import SCRIPTS

from gmbtools.commands import repo
from gmbtools.errors import GmbError


def make_checkout(folder: Path) -> Path:
    (folder / "scripts").mkdir(parents=True)
    (folder / "scripts" / "setup").write_text("#!/usr/bin/env bash\n")
    (folder / "CMakeLists.txt").write_text("project(gmembench)\n")
    return folder


def test_the_package_in_this_checkout_finds_this_checkout(tmp_path):
    assert repo.PACKAGE_CHECKOUT == SCRIPTS.parent
    assert repo.find_repo(start=tmp_path) == SCRIPTS.parent  # its own, wherever the cwd is


def test_installed_package_walks_up_from_the_start_folder(tmp_path):
    site = tmp_path / "venv" / "lib" / "python3.12"  # what parents[2] is in site-packages
    site.mkdir(parents=True)
    checkout = make_checkout(tmp_path / "clone")
    deep = checkout / "results" / "nvidia-h200"
    deep.mkdir(parents=True)
    assert repo.find_repo(start=deep, package_checkout=site) == checkout
    assert repo.find_repo(start=checkout, package_checkout=site) == checkout


def test_the_nearest_checkout_wins(tmp_path):
    outer = make_checkout(tmp_path / "outer")
    inner = make_checkout(outer / "third_party" / "inner")
    assert repo.find_repo(start=inner / "scripts", package_checkout=tmp_path / "none") == inner


def test_default_start_is_the_current_folder(tmp_path, monkeypatch):
    checkout = make_checkout(tmp_path / "clone")
    monkeypatch.chdir(checkout / "scripts")
    assert repo.find_repo(package_checkout=tmp_path / "none") == checkout


@pytest.mark.parametrize("missing", repo.MARKERS)
def test_both_markers_are_needed(tmp_path, missing):
    checkout = make_checkout(tmp_path / "clone")
    (checkout / missing).unlink()
    with pytest.raises(GmbError, match="no gmembench checkout at or above"):
        repo.find_repo(start=checkout, package_checkout=tmp_path / "none")


def test_no_checkout_is_one_line_error(tmp_path):
    with pytest.raises(GmbError) as caught:
        repo.find_repo(start=tmp_path, package_checkout=tmp_path)
    message = str(caught.value)
    assert "\n" not in message and str(tmp_path.resolve()) in message
    assert "scripts/setup and CMakeLists.txt" in message
    assert caught.value.exit_code == 1
