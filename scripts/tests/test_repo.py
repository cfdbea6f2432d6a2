"""gmbtools.repo: the checkout `gmb run` builds in, with or without the package inside one;
the refusal to overwrite files git tracks, and the commands that write files honour it."""

import shutil
from pathlib import Path

import pytest
from conftest import CACHING_RUN, SCRIPTS, assert_one_line_error, git_commit_all, git_status, gmb

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


# --- files git tracks are not overwritten unasked ---------------------------------------------

def test_tracked_files_are_refused_unless_forced(tmp_path):
    clone = git_commit_all(make_checkout(tmp_path / "clone"))
    (clone / "new.md").write_text("not committed\n")
    committed, new, absent = clone / "CMakeLists.txt", clone / "new.md", clone / "absent.md"
    assert repo.tracked([committed, new, absent, clone / "scripts" / "setup"]) == [
        committed, clone / "scripts" / "setup"]
    with pytest.raises(GmbError) as caught:
        repo.refuse_tracked([new, absent, committed], force=False)
    assert str(caught.value) == (f"{committed} is tracked by git: write elsewhere (--out DIR) or"
                                 " pass --force to overwrite it")
    repo.refuse_tracked([committed], force=True)  # asked for
    repo.refuse_tracked([new, absent], force=False)  # nothing committed at stake


def test_outside_a_repository_nothing_is_tracked(tmp_path):
    (tmp_path / "summary.md").write_text("x\n")
    assert repo.tracked([tmp_path / "summary.md"]) == []


def committed_run(tmp_path: Path, *outputs: str) -> tuple[Path, Path]:
    """A clean clone holding a results folder with what `gmb OUTPUT` writes committed."""
    clone = tmp_path / "clone"
    run = clone / "results" / "gpu" / "run"
    shutil.copytree(CACHING_RUN, run)
    for output in outputs:
        assert gmb(output, str(run)).returncode == 0
    return git_commit_all(clone), run


def test_writing_commands_refuse_committed_outputs_and_write_elsewhere(tmp_path):
    clone, run = committed_run(tmp_path, "summary", "report")
    figure = sorted((run / "figures").glob("*.png"))[0]
    refused = {
        ("summary", str(run)): run / "summary.md",
        ("report", str(run)): run / "report.md",
        ("plot", str(run)): figure,
        ("plot", str(run), "--out", str(run / "figures")): figure,
        ("load", str(run), "--csv", str(run / "summary.md")): run / "summary.md",
        ("compare", "--flavors", str(run), "--md", str(run / "report.md")): run / "report.md",
    }
    for args, path in refused.items():
        proc = gmb(*args)
        assert_one_line_error(proc, f"{path} is tracked by git:")
        assert "--force" in proc.stderr
    assert git_status(clone) == ""
    elsewhere = tmp_path / "elsewhere"
    for args in (("summary", str(run), "--out", str(elsewhere)),
                 ("report", str(run), "--out", str(elsewhere))):
        proc = gmb(*args)
        assert proc.returncode == 0, proc.stderr
    assert git_status(clone) == ""
    # The same text as the committed files: --out moves them, nothing else.
    for name in ("summary.md", "report.md"):
        assert (elsewhere / name).read_text() == (run / name).read_text()
    assert sorted(p.name for p in (elsewhere / "figures").iterdir()) == sorted(
        p.name for p in (run / "figures").iterdir())


def test_force_overwrites_committed_outputs(tmp_path):
    clone, run = committed_run(tmp_path, "summary")
    (run / "summary.md").write_text("edited\n")
    proc = gmb("summary", str(run), "--force")
    assert proc.returncode == 0, proc.stderr
    assert git_status(clone) == ""  # written again, as committed
