"""The documentation is written for users (issue 25):

- no commit hash (a standalone word of 7 to 40 hex digits, with a digit and a letter a-f) in
  README.md or docs/*.md, except on a provenance line: one line per run that contains the word
  "provenance" and names the run's results folder;
- every docs/*.md topic page opens, after its title
  and a blank line, with the question it answers: one line that ends with "?", followed by the
  answer (the next paragraph) before the first section heading. The index (README.md), the
  design page and the usage reference answer no one question and are left out.
"""

import re
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
DOCS = sorted((REPO / "docs").glob("*.md"))
PAGES = [REPO / "README.md", *DOCS]
NOT_QUESTION_PAGES = {"README.md", "design.md", "usage.md"}
# A word of hex digits standing alone: not inside a file name or path (perlaunch-49c4a1a.json,
# results/<stamp>), with at least one digit and one letter a-f (so neither plain numbers nor
# English words count).
HEX_WORD = re.compile(
    r"(?<![\w/.:-])(?=[0-9a-f]*[0-9])(?=[0-9a-f]*[a-f])[0-9a-f]{7,40}(?![\w/-]|\.\w)")


def commit_hashes(text: str) -> list[tuple[int, str]]:
    """(line number, word) of every hex word outside a provenance line."""
    return [(number, word)
            for number, line in enumerate(text.splitlines(), 1)
            if "provenance" not in line.lower()
            for word in HEX_WORD.findall(line)]


def opening(text: str) -> tuple[str, str]:
    """The page's first line after its title, and the paragraph after that line."""
    lines = text.splitlines()
    assert lines and lines[0].startswith("# "), "the page must start with a '# ' title"
    rest = lines[1:]
    while rest and not rest[0].strip():
        rest.pop(0)
    question = rest[0] if rest else ""
    answer = []
    for line in rest[1:]:
        if line.startswith("#"):
            break
        answer.append(line)
    return question, "\n".join(answer).strip()


def test_hex_rule():
    assert commit_hashes("Those runs predate 6cc5a92, after which") == [(1, "6cc5a92")]
    assert commit_hashes("(provenance: `results/x/20261122-030335` at commit 714521b)") == []
    assert commit_hashes("[file](../probe/perlaunch-49c4a1a.json.gz) 20261123-213551") == []
    assert commit_hashes("ws:16777216 and 2,187x and 1234567 and the word defaced") == []
    assert commit_hashes("line one\nsee commit\n714521b.") == [(3, "714521b")]


def test_opening_rule():
    q, a = opening("# Title\n\nHow fast?\n\nThis fast: 1 GB/s.\n\n## Evidence\n")
    assert q == "How fast?" and a == "This fast: 1 GB/s."


@pytest.mark.parametrize("page", PAGES, ids=lambda p: str(p.relative_to(REPO)))
def test_no_commit_hash_outside_a_provenance_line(page):
    found = commit_hashes(page.read_text())
    assert not found, (f"{page.relative_to(REPO)}: commit hashes outside a provenance line "
                       f"(line, word): {found}; cite the results folder on one "
                       "'provenance:' line instead")


@pytest.mark.parametrize("page", [p for p in DOCS if p.name not in NOT_QUESTION_PAGES],
                         ids=lambda p: p.name)
def test_page_opens_with_its_question_and_answer(page):
    question, answer = opening(page.read_text())
    assert question.rstrip().endswith("?"), (
        f"docs/{page.name}: the line after the title must be the question the page answers, "
        f"ending with '?' (found {question!r})")
    assert answer, f"docs/{page.name}: the question must be followed by its answer"
