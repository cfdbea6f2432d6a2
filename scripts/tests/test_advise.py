"""`gmb advise`: Nsight Compute's source page read into each global load and store, classified
and matched to the catalog (data/ncu_source.py, analysis/advise_match.py,
commands/advise.py), from committed exports of profiles made on an H100 (fixtures/advise/:
probe_source.csv, and examples/ with each example program's source and raw pages,
fixtures/README.md). CI has no ncu: a stand-in `ncu` serves the examples' exports for the
reports they came from; the real one runs in test_advise_device.py on the GPU machine."""

import gzip
import json
import os
import shutil
import subprocess
import sys

import pytest

from conftest import FIXTURES, GMB, gmb
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
    ((1, 1, 1, 32, 4), ("broadcast", None)),  # every lane one word: warp/broadcast
    ((1, 1, 1, 8, 4), ("coalesced", None)),  # 8 lanes' 32 B fill the one sector anyway
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
    rows = [a for k in json.loads(done.stdout)["kernels"] for a in k["accesses"]]
    strided = next(r for r in rows if r["where"].startswith("0x") and r["class"] == "strided")
    assert strided["behaves_like"] == "stride/f32/read/s:3"
    assert strided["behaves_like_gbs"] > 0


def test_the_text_names_each_kernels_expensive_accesses_and_their_fix():
    done = gmb("advise", str(PROBE), "--kernel", "transpose")
    assert done.returncode == 0, done.stderr
    assert "kernel transpose_naive" in done.stdout and "stride3" not in done.stdout
    assert "| store | 4 | 131072 | 32 (4) | 32 | 22% | own line | stride/f32/write/s:32" \
        in done.stdout
    assert "4 accesses (own line, at 0x" in done.stdout
    assert "move up to 8x the sectors needed; fixed, the kernel moves 78% fewer sectors" \
        in done.stdout
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


# --- the example programs (examples/), through a stand-in ncu serving their H100 exports ------

EXAMPLES = FIXTURES / "advise" / "examples"
H100_TIME_RUN = FIXTURES.parents[2] / "results" / "nvidia-h100-80gb-hbm3" / "20261127-043312-time"
STAND_IN = """#!/bin/sh
# ncu --import R.ncu-rep --page source|raw ...: the committed export of the report's example
report=""; page=""
while [ $# -gt 0 ]; do
  case "$1" in --import) report="$2"; shift;; --page) page="$2"; shift;; esac; shift
done
name=$(basename "$report" .ncu-rep)
[ "$page" = raw ] && exec gzip -dc "{examples}/$name-raw.csv.gz"
exec gzip -dc "{examples}/$name-source.csv.gz"
"""


@pytest.fixture(scope="module")
def advise_example(tmp_path_factory):
    """`gmb advise EXAMPLE.ncu-rep --json` with the stand-in ncu first on PATH; its JSON's
    kernel of that name (the example's own, not its fill kernel)."""
    folder = tmp_path_factory.mktemp("ncu")
    (folder / "ncu").write_text(STAND_IN.replace("{examples}", str(EXAMPLES)))
    (folder / "ncu").chmod(0o755)
    env = {**os.environ, "PATH": f"{folder}{os.pathsep}{os.environ['PATH']}"}

    def run(example, *args):
        report = folder / f"{example}.ncu-rep"
        report.touch()
        done = subprocess.run([sys.executable, str(GMB), "advise", str(report), *args],
                              capture_output=True, text=True, env=env)
        assert done.returncode == 0, done.stderr
        if "--json" not in args:
            return done.stdout
        kernels = json.loads(done.stdout)["kernels"]
        return next(k for k in kernels if not k["kernel"].startswith("example::fill"))
    return run


def csv_sectors_per_request(example, line):
    """Nsight Compute's own numbers for the instructions of one source line: sectors over
    executions, read straight from the export."""
    rows = list(read_source_csv(gzip.open(EXAMPLES / f"{example}-source.csv.gz", "rt").read()))
    return sorted({a.sectors / a.requests for a in rows if a.source == line})


def expensive(kernel):
    """The access with the most sectors, and the fixes."""
    return max(kernel["accesses"], key=lambda a: a["share_of_kernel_sectors"]), kernel["fixes"]


def needs_results():
    if not H100_TIME_RUN.is_dir():
        pytest.skip("no results/ here")
    return ("--results", str(H100_TIME_RUN))


@pytest.mark.parametrize("example, line, op, kind, twin", [
    ("transpose_naive", "transpose_naive.cu:11", "Store", "column walk",
     "transpose/f32/naive_rows/n:16384"),
    ("particles_aos", "particles_aos.cu:16", "Load", "strided", "stride/f32/read/s:8"),
    ("hashed_gather", "hashed_gather.cu:14", "Load", "scattered", "gather/random"),
    ("stencil", "stencil.cu:11", "Load", "misaligned", "offset/f32/read/off:1"),
])
def test_each_example_gets_its_expensive_line_named_as_nsight_compute_counts_it(
        advise_example, example, line, op, kind, twin):
    kernel = advise_example(example, "--json", *needs_results())
    top, fixes = expensive(kernel)
    assert (top["where"], top["operation"], top["class"], top["behaves_like"]) == (
        line, op, kind, twin)
    assert top["behaves_like_gbs"] > 0
    assert top["sectors_per_request"] in csv_sectors_per_request(example, line)
    assert fixes and top["where"] in fixes[0]["where"]


def test_the_coalesced_column_sum_has_nothing_to_fix(advise_example):
    kernel = advise_example("column_sum", "--json", *needs_results())
    assert {a["class"] for a in kernel["accesses"]} == {"coalesced"}
    assert kernel["fixes"] == []
    assert kernel["coalesced_rate"]["kind"] == "read"  # 512 stored floats do not make a copy


@pytest.mark.parametrize("broken, fixed", [("transpose_naive", "transpose_tiled"),
                                           ("particles_aos", "particles_soa")])
def test_the_predicted_time_with_the_line_fixed_is_within_15_percent_of_the_fixed_twin(
        advise_example, broken, fixed):
    results = needs_results()
    predicted = advise_example(broken, "--json", *results)["fixes"][0]["predicted_seconds"]
    measured = advise_example(fixed, "--json", *results)["seconds"]
    assert predicted == pytest.approx(measured, rel=0.15)


def test_the_aos_fields_are_fixed_together_and_the_text_says_how(advise_example):
    out = advise_example("particles_aos", *needs_results())
    assert "| load x2 | 4 | 1048576 | 32 (4) | 8 | 22% | strided, 8 elements apart | " \
           "stride/f32/read/s:8" in out
    assert "fix strided, 8 elements apart (9 accesses at particles_aos.cu:16, " \
           "particles_aos.cu:17, particles_aos.cu:18: p[i].x += p[i].vx * kDt;)" in out
    assert "structure of arrays" in out


def test_without_results_a_report_of_a_gpu_the_suite_has_run_on_uses_its_newest_run(
        advise_example):
    if not H100_TIME_RUN.is_dir():
        pytest.skip("no results/ here")
    out = advise_example("transpose_naive")
    assert out.startswith("GB/s of the built-ins: ") and "nvidia-h100-80gb-hbm3" in out


def test_save_writes_a_new_folder_with_the_report_the_advice_and_its_figure(
        advise_example, tmp_path):
    pytest.importorskip("matplotlib")
    first = advise_example("transpose_naive", "--save", "--out", str(tmp_path))
    second = advise_example("transpose_naive", "--save", "--out", str(tmp_path))
    folders = sorted((tmp_path / "nvidia-h100-80gb-hbm3").iterdir())
    assert len(folders) == 2 and all(f.name.endswith(("-advise", "-advise-2")) for f in folders)
    for folder, out in zip(folders, (first, second)):
        assert sorted(p.name for p in folder.iterdir()) == [
            "advice.json", "advice.md", "advice.png", "report.ncu-rep"]
        assert f"gmb: wrote {folder / 'advice.md'}" in out
    md = (folders[0] / "advice.md").read_text()
    assert md.startswith("# gmb advise\n\nCommand: `scripts/gmb advise ")
    assert "fix column walk (1 access at transpose_naive.cu:11" in md
    saved = json.loads((folders[0] / "advice.json").read_text())
    assert saved["kernels"][1]["fixes"][0]["class"] == "column walk"


def test_save_refuses_a_csv_export_and_out_needs_save(tmp_path):
    for args, words in (((str(PROBE), "--save"), "--save needs the GPU's name"),
                        ((str(PROBE), "--out", str(tmp_path)), "--out names where --save")):
        done = gmb("advise", *args)
        lines = done.stderr.strip().splitlines()
        assert done.returncode != 0 and len(lines) == 1 and words in lines[0], done.stderr


FAKE_GMB = """#!{python}
import json, os, shutil, sys
from pathlib import Path
repo = Path(__file__).resolve().parents[1]
with open(repo / "calls.log", "a") as log:
    log.write(json.dumps(sys.argv[1:]) + "\\n")
if os.environ.get("FAKE_GMB_FAIL"):
    sys.exit(3)
folder = repo / "results" / "fake-gpu" / f"2099010{{len(list(repo.glob('results/*/*')))}}-000000"
folder.mkdir(parents=True)
(folder / "run_info.json").write_text("{{}}")
shutil.copy({run!r}, folder / "default.json.gz")
"""


@pytest.fixture
def fake_gmb_repo(tmp_path, monkeypatch):
    from gmbtools.commands import advise_twins
    if not H100_TIME_RUN.is_dir():
        pytest.skip("no results/ here")
    repo = tmp_path / "repo"
    (repo / "scripts").mkdir(parents=True)
    gmb_script = repo / "scripts" / "gmb"
    gmb_script.write_text(FAKE_GMB.format(python=sys.executable,
                                          run=str(H100_TIME_RUN / "default.json.gz")))
    gmb_script.chmod(0o755)
    monkeypatch.setattr(advise_twins, "REPO", repo)
    return repo


def test_without_a_run_of_the_gpu_a_short_run_measures_just_the_built_ins_once(fake_gmb_repo):
    from gmbtools.commands.advise_twins import twin_gbs
    from gmbtools.data.ncu_launches import KernelTime
    times = {"k": KernelTime("k", 1, 1e-3, 1e6, device="Fake GPU")}
    folder, gbs = twin_gbs(None, times, {"stride/f32/read/s:8"}, True, 1)
    assert folder.parent == fake_gmb_repo / "results" / "fake-gpu"
    assert gbs["stride/f32/read/s:8"] > 0 and gbs["ref/memcpy_d2d"] > 0
    calls = [json.loads(line) for line in (fake_gmb_repo / "calls.log").read_text().splitlines()]
    assert len(calls) == 1 and calls[0][:5] == ["run", "--flavors", "default", "--device", "1"]
    pattern = calls[0][5].split("=", 1)[1]
    import re
    assert re.match(pattern, "stride/f32/read/s:8/manual_time")
    assert re.match(pattern, "transpose/f32/tile_rows8/n:16384")
    assert not re.match(pattern, "stride/f32/read/s:16")
    # the next advice of that GPU finds the run: nothing measured again
    assert twin_gbs(None, times, {"stride/f32/read/s:8"}, True, 1)[0] == folder
    assert len((fake_gmb_repo / "calls.log").read_text().splitlines()) == 1


def test_a_failed_short_run_is_one_error_and_no_measure_runs_nothing(fake_gmb_repo, monkeypatch):
    from gmbtools.commands.advise_twins import twin_gbs
    from gmbtools.data.ncu_launches import KernelTime
    times = {"k": KernelTime("k", 1, 1e-3, 1e6, device="Fake GPU")}
    assert twin_gbs(None, times, {"gather/random"}, False, 0) == (None, {})
    assert not (fake_gmb_repo / "calls.log").exists()
    monkeypatch.setenv("FAKE_GMB_FAIL", "1")
    with pytest.raises(GmbError, match="the short run of the built-ins failed .*exited with 3"):
        twin_gbs(None, times, {"gather/random"}, True, 0)
