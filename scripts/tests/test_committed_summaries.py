"""Every summary.md under results/ that `gmb summary` writes is what the current code writes from
the folder's JSON, byte for byte: a change to the summary code updates the committed summaries
in the same commit (`scripts/gmb summary RESULTS_DIR --force` writes one again).

The one test that reads results/: skipped on a clone without it, and without pandas (the
model's section of summary.md needs it).
"""

import difflib
from pathlib import Path

import pytest
from conftest import SCRIPTS

from gmbtools.commands.cli import main
from gmbtools.data import node, results
from gmbtools.data.flavors import FLAVORS, json_name
from gmbtools.present import peer_summary

REPO = SCRIPTS.parent
RESULTS = REPO / "results"
# Folders gmb summary could write whose summary.md is notes written by hand (no run_info.json).
HAND_WRITTEN = ("nvidia-h200/20261122-041333-caching-first-look",)


def summarised(folder: Path) -> bool:
    """Whether `gmb summary` writes this folder's summary.md: a flavor file, a node's or a peer
    matrix's."""
    return node.is_node(folder) or peer_summary.is_peer_matrix(folder) or any(results.stored(folder / json_name(flavor)).exists()
                                       for flavor in FLAVORS)


FOLDERS = sorted(p.parent for p in RESULTS.rglob("summary.md")
                 if summarised(p.parent)
                 and str(p.parent.relative_to(RESULTS)) not in HAND_WRITTEN) \
    if RESULTS.is_dir() else []


def test_the_committed_summaries_are_found():
    if not RESULTS.is_dir():
        pytest.skip("no results/ in this checkout")
    assert len(FOLDERS) >= 20, "fewer gmb-written summaries than committed: the walk is broken"
    for name in HAND_WRITTEN:  # still notes, else the exception would hide a summary
        title = (RESULTS / name / "summary.md").read_text().splitlines()[0]
        assert summarised(RESULTS / name) and not title.startswith("# gmembench ")


@pytest.mark.parametrize("folder", FOLDERS, ids=lambda f: str(f.relative_to(RESULTS)))
def test_committed_summary_is_what_gmb_summary_writes(folder, tmp_path, monkeypatch, capsys):
    pytest.importorskip("pandas")
    relative = folder.relative_to(REPO)
    monkeypatch.chdir(REPO)  # the folder named as the docs name it, from the repository root
    assert main(["summary", str(relative), "--out", str(tmp_path)]) == 0, capsys.readouterr().err
    written = (tmp_path / "summary.md").read_text(encoding="utf-8")
    committed = (folder / "summary.md").read_text(encoding="utf-8")
    if written != committed:
        diff = difflib.unified_diff(committed.splitlines(), written.splitlines(),
                                    "committed", "gmb summary", lineterm="", n=1)
        pytest.fail(f"{relative}/summary.md is not what the code writes; write it again with"
                    f" scripts/gmb summary {relative} --force\n" + "\n".join(list(diff)[:60]))
