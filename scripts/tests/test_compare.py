"""`gmb compare`: on the H200 caching run (CACHING_RUN, trimmed) and on small hand-made files."""

import csv
import json
import math
import re
import statistics

import pytest
from conftest import CACHING_RUN, T, aggregate, assert_one_line_error, gmb, iteration, write_gb

from gmbtools.present import compare
from gmbtools.data import results
from gmbtools.errors import GmbError

# Benchmarks in every flavor of CACHING_RUN (ref/, aos/, warp/, offset/f32x2/read/).
BENCHMARKS = 24


def noise_rule(cv_a, cv_b):
    """The flag rule as the issue states it, written out again on purpose."""
    return max(3 * math.sqrt((cv_a or 0) ** 2 + (cv_b or 0) ** 2), 0.005)


def table_names(text):
    """Benchmark names of the markdown table rows, in order."""
    return re.findall(r"^\| `([^`]+)` \|", text, flags=re.MULTILINE)


def section(text, title):
    start = text.index(f"## {title}\n")
    end = text.find("\n## ", start + 1)
    return text[start:] if end < 0 else text[start:end]


# --- the H200 caching run: default, ca and cg -----------------------------------------------

@pytest.fixture(scope="module")
def run():
    comparisons, preamble, unread = compare.compare_flavors(CACHING_RUN, None)
    assert unread == []
    medians = {f: results.median_by_name(results.load(CACHING_RUN / f"{f}.json").records)
               for f in ("default", "ca", "cg")}
    return {(c.a.label, c.b.label): c for c in comparisons}, preamble, medians


def raw_median(flavor, name):
    """bytes_per_second of the `median` aggregate, read straight from the JSON."""
    doc = json.loads((CACHING_RUN / f"{flavor}.json").read_text())
    [entry] = [e for e in doc["benchmarks"]
               if e.get("aggregate_name") == "median" and e["run_name"].startswith(name + "/")]
    return entry["bytes_per_second"]


def test_flavor_tables_and_their_order(run):
    comparisons, preamble, _ = run
    assert list(comparisons) == [("default", "ca"), ("default", "cg"), ("ca", "cg")]
    assert preamble[0].startswith("# gmb compare: flavors of ") and "(NVIDIA H200)" in preamble[0]
    assert not any("Skipped" in line or "Warning" in line for line in preamble)
    for c in comparisons.values():
        assert len(c.pairs) == BENCHMARKS and not c.errors and not c.only_a and not c.only_b


def test_ratio_is_the_ratio_of_the_medians(run):
    comparisons, _, _ = run
    for a, b in comparisons:
        [pair] = [p for p in comparisons[a, b].pairs if p.name == "aos/p12/fields:all"]
        name = "aos/p12/fields:all"
        assert pair.ratio == raw_median(b, name) / raw_median(a, name)
    # Caching wins where warps re-use lines: the non-caching build is clearly slower.
    [cg_ca] = [p for p in comparisons["ca", "cg"].pairs if p.name == "aos/p12/fields:all"]
    assert cg_ca.flagged and cg_ca.ratio < 0.95


def test_memcpy_agrees_between_ca_and_default(run):
    comparisons, _, _ = run
    [memcpy] = [p for p in comparisons["default", "ca"].pairs if p.name == "ref/memcpy_d2d"]
    assert not memcpy.flagged
    assert abs(memcpy.ratio - 1) <= noise_rule(memcpy.cv_a, memcpy.cv_b)


def test_flag_rule_is_applied_exactly(run):
    comparisons, _, medians = run
    for (a, b), c in comparisons.items():
        expected = set()
        for name, ma in medians[a].items():
            mb = medians[b][name]
            ratio = mb.bytes_per_second / ma.bytes_per_second
            if abs(ratio - 1) > noise_rule(ma.cv, mb.cv):
                expected.add(name)
        assert {p.name for p in c.flagged} == expected, (a, b)
        text = "\n".join(compare.render(c))
        shown = table_names(text)
        assert set(shown) == expected and len(shown) == len(expected)
        sizes = [abs(math.log(p.ratio)) for p in c.flagged]
        assert sizes == sorted(sizes, reverse=True)
        agree = BENCHMARKS - len(expected)
        assert f"{agree} of {BENCHMARKS} benchmarks agree within the noise" in text
        assert f"`*`: |{b}/{a} − 1| > noise = max(3 × √(cv_{a}² + cv_{b}²), 0.5 %)." in text


def test_csv_holds_every_pair_unrounded(run, tmp_path):
    comparisons, _, medians = run
    out = tmp_path / "pairs.csv"
    compare.write_csv(list(comparisons.values()), out)
    with out.open(newline="") as stream:
        rows = list(csv.DictReader(stream))
    assert tuple(rows[0]) == compare.CSV_COLUMNS and len(rows) == 3 * BENCHMARKS
    [row] = [r for r in rows
             if (r["a"], r["b"], r["benchmark"]) == ("ca", "cg", "aos/p12/fields:all")]
    a, b = medians["ca"]["aos/p12/fields:all"], medians["cg"]["aos/p12/fields:all"]
    assert float(row["ratio"]) == b.bytes_per_second / a.bytes_per_second
    assert float(row["a_gbs"]) == a.bytes_per_second / 1e9 and float(row["a_cv"]) == a.cv
    assert row["status"] == "flagged"


def test_cli_on_the_run(tmp_path):
    md, out = tmp_path / "compare.md", tmp_path / "compare.csv"
    proc = gmb("compare", "--flavors", str(CACHING_RUN), "--md", str(md), "--csv", str(out))
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == md.read_text() and out.is_file()
    assert [line for line in proc.stdout.splitlines() if line.startswith("## ")] == [
        "## ca/default", "## cg/default", "## cg/ca"]
    cg_ca = section(proc.stdout, "cg/ca")
    assert "| benchmark | ca GB/s | cg GB/s | cg/ca | ca cv | cg cv | noise | flag |" in cg_ca
    assert "`aos/p12/fields:all`" in cg_ca
    assert "No benchmark differs by more than the noise." in section(proc.stdout, "ca/default")


def test_cli_all_and_filter_on_two_files():
    proc = gmb("compare", str(CACHING_RUN / "ca.json"), "--all", str(CACHING_RUN / "cg.json"),
               "--filter", "^(aos|ref)/")
    assert proc.returncode == 0, proc.stderr
    names = table_names(proc.stdout)
    assert names and all(re.match("^(aos|ref)/", n) for n in names)
    assert "ref/memcpy_d2d" in names  # --all lists the agreeing pairs too
    assert names[0] == "aos/s64/fields:all"  # flagged first, the largest difference first
    assert "Only benchmarks whose name matches `^(aos|ref)/`." in proc.stdout
    assert f"of {len(names)} benchmarks agree within the noise." in proc.stdout


# --- small hand-made files -------------------------------------------------------------------

def bench(name, bps, cv):
    """A benchmark run with repetitions: its median and cv aggregates."""
    return [aggregate(name, "median", bps), aggregate(name, "cv", cv)]


def failed(name, message="verification failed: 3 of 1024 elements wrong"):
    return [iteration(name, T, error_occurred=True, error_message=message)]


def two_files(tmp_path, a, b, names=("a.json", "b.json")):
    return (write_gb(tmp_path / names[0], [e for entries in a for e in entries]),
            write_gb(tmp_path / names[1], [e for entries in b for e in entries]))


def compared(path_a, path_b, name_filter=None):
    [c] = compare.compare_files(path_a, path_b, name_filter)
    return c


def test_flag_rule_at_its_edges(tmp_path):
    cv = 0.01
    noise = noise_rule(cv, cv)  # 3 × √2 %, above the floor
    floor = noise_rule(1e-4, 1e-4)
    assert floor == 0.005
    a, b = two_files(tmp_path, [
        bench("up/just_above", 2 * T, cv), bench("up/just_below", 2 * T, cv),
        bench("down/just_above", 2 * T, cv), bench("floor/above", 2 * T, 1e-4),
        bench("floor/below", 2 * T, 1e-4),
    ], [
        bench("up/just_above", 2 * T * (1 + noise * 1.001), cv),
        bench("up/just_below", 2 * T * (1 + noise * 0.999), cv),
        bench("down/just_above", 2 * T * (1 - noise * 1.001), cv),
        bench("floor/above", 2 * T * 1.0051, 1e-4),
        bench("floor/below", 2 * T * 1.0049, 1e-4),
    ])
    c = compared(a, b)
    assert {p.name: p.flagged for p in c.pairs} == {
        "up/just_above": True, "up/just_below": False, "down/just_above": True,
        "floor/above": True, "floor/below": False}
    assert all(p.noise == noise_rule(p.cv_a, p.cv_b) for p in c.pairs)
    text = "\n".join(compare.render(c))
    assert table_names(text) == ["down/just_above", "up/just_above", "floor/above"]
    assert "| `up/just_above` | 2000.0 | 2084.9 | 1.0425 | 1.000 % | 1.000 % | 4.24 % | * |" in text
    assert "2 of 5 benchmarks agree within the noise (listed with --all)." in text
    assert "counts as 0" not in text


def test_cv_from_repetitions_or_none(tmp_path):
    rates = [1.00 * T, 1.02 * T, 0.98 * T]
    a, b = two_files(tmp_path, [
        [iteration("copy/f32", r, i) for i, r in enumerate(rates)],
    ], [
        [iteration("copy/f32", 1.006 * T)],  # one run: no cv
    ])
    [pair] = compared(a, b).pairs
    assert pair.cv_a == pytest.approx(statistics.stdev(rates) / statistics.mean(rates))
    assert pair.cv_b is None and pair.noise == 3 * pair.cv_a and not pair.flagged
    text = "\n".join(compare.render(compared(a, b), show_all=True))
    assert "| 2.000 % | n/a | 6.00 % |  |" in text
    assert "; a cv of n/a (no repetitions) counts as 0." in text


def test_one_sided_and_errored_benchmarks_are_named_not_numbers(tmp_path):
    a, b = two_files(tmp_path, [
        bench("read/f32", 3 * T, 0.001), bench("copy/f32", 2 * T, 0.001),
        bench("only/in_a", 1 * T, 0.001), failed("write/f32"),
    ], [
        bench("read/f32", 3 * T, 0.001), failed("copy/f32", "skipped: no memory"),
        bench("write/f32", 2 * T, 0.001), bench("only/in_b", 1 * T, 0.001),
        bench("only/in_b2", 1 * T, 0.001),
    ])
    c = compared(a, b)
    assert [p.name for p in c.pairs] == ["read/f32"]
    assert c.only_a == ["only/in_a"] and c.only_b == ["only/in_b", "only/in_b2"]
    text = "\n".join(compare.render(c, show_all=True))
    assert table_names(text) == ["read/f32"]
    assert "1 of 1 benchmarks agree within the noise." in text
    assert "Only in a (1): `only/in_a`" in text
    assert "Only in b (2): `only/in_b`, `only/in_b2`" in text
    assert "Errored or without a bandwidth (2), no ratio:" in text
    assert "- `copy/f32`: b: skipped: no memory" in text
    assert "- `write/f32`: a: verification failed: 3 of 1024 elements wrong" in text
    assert "2000.0" not in text  # the good side of an errored pair is not shown as a number

    out = tmp_path / "out.csv"
    compare.write_csv([c], out)
    with out.open(newline="") as stream:
        rows = {r["benchmark"]: r for r in csv.DictReader(stream)}
    assert rows["copy/f32"]["status"] == "error" and rows["copy/f32"]["ratio"] == ""
    assert rows["copy/f32"]["note"] == "b: skipped: no memory"
    assert rows["only/in_a"]["status"] == "only_a" and rows["only/in_b2"]["status"] == "only_b"
    assert rows["read/f32"]["status"] == "agrees" and float(rows["read/f32"]["ratio"]) == 1.0


def test_labels_name_the_files(tmp_path):
    (tmp_path / "r1").mkdir()
    (tmp_path / "r2").mkdir()
    assert compare.file_labels(tmp_path / "r1/default.json", tmp_path / "r2/ca.json") == (
        "default", "ca")
    assert compare.file_labels(tmp_path / "r1/default.json", tmp_path / "r2/default.json") == (
        "default (r1)", "default (r2)")
    a = tmp_path / "r1/default.json"
    assert compare.file_labels(a, a) == ("default (A)", "default (B)")


def test_flavors_with_a_missing_file(tmp_path):
    two_files(tmp_path, [bench("read/f32", 3 * T, 0.001)], [bench("read/f32", 2 * T, 0.001)],
              names=("default.json", "cg.json"))
    comparisons, preamble, unread = compare.compare_flavors(tmp_path, None)
    assert unread == []  # a flavor file the folder lacks is no problem
    assert [(c.a.label, c.b.label) for c in comparisons] == [("default", "cg")]
    assert "**Skipped:** `ca.json` is not in this folder (no ca/default, cg/ca)." in preamble
    text = compare.markdown(comparisons, preamble, show_all=False)
    assert "| `read/f32` | 3000.0 | 2000.0 | 0.6667 |" in text

    (tmp_path / "ca.json").write_text("{}")
    _, preamble, unread = compare.compare_flavors(tmp_path, None)
    assert any(line.startswith("**Skipped:**") and "ca.json: not Google Benchmark JSON" in line
               for line in preamble)
    assert len(unread) == 1 and "ca.json: not Google Benchmark JSON" in unread[0]

    (tmp_path / "cg.json").unlink()
    with pytest.raises(GmbError, match="fewer than two readable flavor files"):
        compare.compare_flavors(tmp_path, None)


# --- errors: one line each ---------------------------------------------------------------------

def test_no_benchmark_in_common(tmp_path):
    a, b = two_files(tmp_path, [bench("read/f32", T, 0.001)], [bench("write/f32", T, 0.001)])
    assert_one_line_error(gmb("compare", str(a), str(b)), "have no benchmark in common")
    a, b = two_files(tmp_path, [bench("read/f32", T, 0.001)], [bench("read/f32", T, 0.001)])
    assert_one_line_error(gmb("compare", str(a), str(b), "--filter", "^copy/"),
                          "no benchmark matching --filter '^copy/' in common")


@pytest.mark.parametrize(("content", "fragment"), [
    (None, "b.json: no such file"),
    ("", "b.json: file is empty"),
    ('{"context": {}, "benchmarks": [', "b.json: truncated or corrupt JSON"),
    ('{"kernels": []}', "b.json: not Google Benchmark JSON output"),
])
def test_unreadable_file(tmp_path, content, fragment):
    a = write_gb(tmp_path / "a.json", bench("read/f32", T, 0.001))
    if content is not None:
        (tmp_path / "b.json").write_text(content)
    proc = gmb("compare", str(a), str(tmp_path / "b.json"))
    assert_one_line_error(proc, fragment)
    assert proc.returncode == 1


@pytest.mark.parametrize(("args", "fragment"), [
    (("compare",), "compare takes two files A.json B.json or --flavors RESULTS_DIR, got 0 files"),
    (("compare", "a.json"), "got 1 file"),
    (("compare", "a.json", "b.json", "c.json"), "got 3 files"),
    (("compare", "a.json", "--flavors", "x"), "not both"),
    (("compare", "a.json", "b.json", "--filter", "("), "--filter: not a regular expression"),
    (("compare", "a.json", "b.json", "--bogus"), "unrecognized argument '--bogus'"),
])
def test_usage_errors(args, fragment):
    proc = gmb(*args)
    assert_one_line_error(proc, fragment)
    assert proc.returncode == 2


def test_missing_flavors_folder():
    assert_one_line_error(gmb("compare", "--flavors", "/nonexistent"),
                          "/nonexistent: no such folder")
