"""Every relative link of the front page, docs/ and results/README.md names a file of the
repository, and every #anchor a heading of its target: a clone must not meet a dead link.
Links into results/ are checked where the checkout has results/ (the tests pass without it)."""

import re
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
PAGES = [REPO / "README.md", *sorted((REPO / "docs").glob("*.md")), REPO / "results" / "README.md"]
LINK = re.compile(r"\]\(([^)\s]+)\)")
FENCE = re.compile(r"^(```|~~~).*?^\1", re.MULTILINE | re.DOTALL)


def github_anchor(heading: str) -> str:
    """GitHub's anchor of a heading: lower case, punctuation dropped, spaces to hyphens."""
    text = re.sub(r"[^\w\- ]", "", heading.strip().lower())
    return text.replace(" ", "-")


def anchors(page: Path) -> set[str]:
    """The anchors of a page's headings; a repeated heading gets -1, -2, ... as on GitHub."""
    seen: dict[str, int] = {}
    found = set()
    for line in FENCE.sub("", page.read_text()).splitlines():
        if re.match(r"#{1,6} ", line):
            anchor = github_anchor(line.lstrip("#"))
            count = seen.get(anchor, 0)
            seen[anchor] = count + 1
            found.add(anchor if count == 0 else f"{anchor}-{count}")
    return found


def relative_links(page: Path) -> list[str]:
    """The page's link targets outside code blocks, less those with a scheme (https:, mailto:)."""
    return [t for t in LINK.findall(FENCE.sub("", page.read_text()))
            if not re.match(r"[a-z][a-z0-9+.-]*:", t)]


def test_anchor_rules():
    assert github_anchor(" The model (`model_gbs`, `scripts/gmbtools/littles_law.py`)") == \
        "the-model-model_gbs-scriptsgmbtoolslittles_lawpy"
    assert github_anchor("What stops f64 n:11568 on the H200") == "what-stops-f64-n11568-on-the-h200"


def test_a_repeated_heading_gets_a_number(tmp_path):
    page = tmp_path / "page.md"
    page.write_text("# Title\n## Flavor\n```sh\n# not a heading\n```\n## Flavor\n")
    assert anchors(page) == {"title", "flavor", "flavor-1"}


@pytest.mark.parametrize("page", [p for p in PAGES if p.exists()],
                         ids=lambda p: str(p.relative_to(REPO)))
def test_every_relative_link_resolves(page):
    results = REPO / "results"
    for target in relative_links(page):
        file_part, _, anchor = target.partition("#")
        path = (page.parent / file_part).resolve() if file_part else page
        where = f"{page.relative_to(REPO)}: {target}"
        assert path == REPO or REPO in path.parents, f"{where} points outside the repository"
        if results in [path, *path.parents] and not results.is_dir():
            continue
        assert path.exists(), f"{where} does not exist"
        if anchor:
            assert path.suffix == ".md", f"{where}: an anchor into a file that is not markdown"
            assert anchor in anchors(path), f"{where}: no heading #{anchor}"


def test_results_readme_lists_every_folder():
    results = REPO / "results"
    if not results.is_dir():
        pytest.skip("no results/ in this checkout")
    listed = {(results / t.partition("#")[0]).resolve().parent
              for t in relative_links(results / "README.md")}
    folders = {d.resolve() for d in results.glob("*/*") if d.is_dir()}
    assert folders - listed == set(), "results/README.md does not list these folders"
