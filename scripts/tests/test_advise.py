"""`gmb advise`: Nsight Compute's source page read into each global load and store, classified
and matched to the catalog (data/ncu_source.py, analysis/advise_match.py,
commands/advise.py), from a committed export of a profile made on an H100
(fixtures/advise/probe_source.csv, fixtures/README.md). CI has no ncu: what needs it is
checked for its one-line error here and run on the GPU machine."""

import json
import shutil

import pytest

from conftest import FIXTURES, gmb
from gmbtools.analysis.advise_match import advise, classify
from gmbtools.data.ncu_source import kernels, read_source_csv
from gmbtools.errors import GmbError

PROBE = FIXTURES / "advise" / "probe_source.csv"
H100_RUN = FIXTURES.parents[2] / "results" / "nvidia-h100-80gb-hbm3" / "20261125-152107"


def probe():
    return read_source_csv(PROBE.read_text())


def by_kernel(name):
    return [a for a in advise(probe()) if a.access.kernel.startswith(name)]


def test_the_source_page_gives_each_kernels_global_loads_and_stores_once():
    accesses = probe()
    assert [k.split("(")[0] for k in kernels(accesses)] == [
        "stride3", "transpose_naive", "aos_update", "gather_hash"]
    # Nsight Compute prints each kernel's block twice; the instructions count once.
    counts = {k.split("(")[0]: sum(a.kernel == k for a in accesses) for k in kernels(accesses)}
    assert counts == {"stride3": 2, "transpose_naive": 8, "aos_update": 9, "gather_hash": 2}
    load = next(a for a in accesses if a.kernel.startswith("stride3") and a.operation == "Load")
    # The numbers: 2^24 threads, 6 291 456 sectors where 2 097 152 are ideal.
    assert (load.requests, load.sectors, load.ideal_sectors, load.lines) == (
        524288, 6291456, 2097152, 1572864)
    assert load.word_bytes == 4 and load.lanes == 32


def test_each_access_gets_the_class_and_the_built_in_the_suite_gives_its_shape():
    stride3 = by_kernel("stride3")
    assert (stride3[0].kind, stride3[0].stride, stride3[0].twin) == (
        "strided", 3, "stride/f32/read/s:3")
    assert stride3[0].sectors_per_request == 12 and stride3[0].ideal_per_request == 4
    assert (stride3[1].kind, stride3[1].twin) == ("coalesced", "write/f32/ilp:1/grid:full")
    transpose = by_kernel("transpose_naive")
    stores = [a for a in transpose if a.access.operation == "Store"]
    assert len(stores) == 4 and all(a.kind == "own line" and a.sectors_per_request == 32
                                    and a.twin == "stride/f32/write/s:32" for a in stores)
    assert transpose[0].access.operation == "Store"  # the most sectors first
    aos = by_kernel("aos_update")  # 32-B structures: lanes 8 floats apart
    assert {(a.kind, a.stride) for a in aos} == {("strided", 8)}
    assert {a.twin for a in aos} == {"stride/f32/read/s:8", "stride/f32/write/s:8"}
    gather = by_kernel("gather_hash")[0]
    assert (gather.kind, gather.sectors_per_request, gather.lines_per_request) == (
        "own line", 32, 32)


def test_what_fixing_a_line_saves_is_its_excess_over_the_kernels_sectors():
    stride3 = by_kernel("stride3")
    # 12 + 4 sectors per request; at 4 + 4 the kernel moves half as many.
    assert stride3[0].share == pytest.approx(0.75)
    assert stride3[0].saved_share == pytest.approx(0.5)
    assert stride3[1].saved_share == 0


@pytest.mark.parametrize("counts, expected", [
    ((4, 4, 1, 32, 4), ("coalesced", None)),
    ((5, 4, 2, 32, 4), ("misaligned", None)),
    ((8, 4, 2, 32, 4), ("strided", 2)),
    ((16, 16, 4, 32, 16), ("coalesced", None)),
    ((32, 8, 16, 32, 8), ("strided", 8)),  # f64, lanes 64 B apart
    ((32, 4, 32, 32, 4), ("own line", None)),
    ((20, 4, 9, 32, 4), ("scattered", None)),  # lines and sectors disagree with any stride
])
def test_classes_from_sectors_and_lines_per_request(counts, expected):
    assert classify(*counts) == expected


def test_a_results_folder_gives_each_built_in_its_gbs():
    if not H100_RUN.is_dir():
        pytest.skip("no results/ here")
    done = gmb("advise", str(PROBE), "--results", str(H100_RUN), "--json")
    assert done.returncode == 0, done.stderr
    rows = json.loads(done.stdout)
    strided = next(r for r in rows if r["kernel"].startswith("stride3") and r["class"] == "strided")
    assert strided["behaves_like"] == "stride/f32/read/s:3"
    assert strided["behaves_like_gbs"] > 0


def test_the_text_names_each_kernels_expensive_accesses_and_their_fix():
    done = gmb("advise", str(PROBE), "--kernel", "transpose")
    assert done.returncode == 0, done.stderr
    assert "kernel transpose_naive" in done.stdout and "stride3" not in done.stdout
    assert "4 of its accesses (own line, like stride/f32/write/s:32" in done.stdout
    assert "transpose through shared memory" in done.stdout


def test_bad_input_is_one_line_and_a_non_zero_exit(tmp_path):
    not_csv = tmp_path / "notes.csv"
    not_csv.write_text("hello,world\n1,2\n")
    cases = [
        ((str(not_csv),), "not a source page of Nsight Compute"),
        ((str(tmp_path / "missing.ncu-rep"),), "no such file"),
        ((str(PROBE), "--kernel", "nothing_like_it"), "no kernel with global loads or stores"),
        ((str(PROBE), "--kernel", "("), "is not a regular expression"),
        (("--",), "nothing after --"),
        ((), "give a report"),
        ((str(PROBE), "--keep", str(PROBE)), "--keep names where to keep"),
    ]
    for args, words in cases:
        done = gmb("advise", *args)
        assert done.returncode != 0, args
        lines = done.stderr.strip().splitlines()
        assert len(lines) == 1 and words in lines[0], (args, done.stderr)


@pytest.mark.skipif(shutil.which("ncu") is not None, reason="ncu is here")
def test_without_nsight_compute_a_report_or_an_application_says_so():
    for args in ((str(PROBE.parent / "probe.cu"),), ("--", "true")):
        done = gmb("advise", *args)
        assert done.returncode == 1 and "ncu (Nsight Compute) is not on PATH" in done.stderr


def test_a_source_page_without_source_counters_is_refused():
    with pytest.raises(GmbError, match="no column 'L2 Theoretical Sectors Global'"):
        read_source_csv('"Kernel Name","k()",\n"Address","Source","Instructions Executed",'
                        '"Access Operation","Access Size"\n')
