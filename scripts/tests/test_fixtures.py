"""fixtures/trim_run.py: trimmed copies are the original less whole entries, byte for byte, and
the committed fixtures under fixtures/runs/ are what it writes from results/ (where the
checkout has results/; the other tests never read it)."""

import importlib.util
import json
import re

import pytest
from conftest import CACHING_RUN, FIXTURES, H200_RUN, SCREEN_RUNS, SYNTHETIC_DEFAULT

spec = importlib.util.spec_from_file_location("trim_run", FIXTURES / "trim_run.py")
trim_run = importlib.util.module_from_spec(spec)
spec.loader.exec_module(trim_run)


def test_trim_keeps_the_context_and_whole_entries_verbatim():
    text = SYNTHETIC_DEFAULT.read_text()
    original = json.loads(text)
    out, kept, total = trim_run.trim_text(text, re.compile("ref/"))
    trimmed = json.loads(out)
    assert total == len(original["benchmarks"]) and 0 < kept < total
    assert trimmed["context"] == original["context"]
    assert trimmed["benchmarks"] == [e for e in original["benchmarks"]
                                     if e["run_name"].startswith("ref/")]
    # Byte for byte: the text up to the first entry, and every kept entry.
    assert out[:out.index("{", out.index('"benchmarks"'))] == \
        text[:text.index("{", text.index('"benchmarks"'))]
    for entry in re.findall(r"\{[^{}]*\}", out):
        assert entry in text


def test_trim_refuses_to_write_an_empty_run():
    with pytest.raises(ValueError, match="no benchmark matches"):
        trim_run.trim_text(SYNTHETIC_DEFAULT.read_text(), re.compile("nothing/"))


def test_the_runs_in_conftest_are_the_recipe():
    assert {FIXTURES / dest for dest in trim_run.RUNS} == {H200_RUN, CACHING_RUN,
                                                          FIXTURES / "docs" / "run", *SCREEN_RUNS}
    for dest, (_, _, files) in trim_run.RUNS.items():
        assert sorted(p.name for p in (FIXTURES / dest).iterdir()) == sorted(files)


@pytest.mark.parametrize("dest", sorted(trim_run.RUNS))
def test_fixture_is_reproduced_from_results(dest, tmp_path):
    src, pattern, files = trim_run.RUNS[dest]
    if not (trim_run.REPO / src).is_dir():
        pytest.skip(f"{src} is not in this checkout")
    trim_run.trim_folder(trim_run.REPO / src, tmp_path, pattern, files)
    for name in files:
        assert (tmp_path / name).read_bytes() == (FIXTURES / dest / name).read_bytes(), name
