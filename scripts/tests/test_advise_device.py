"""`gmb advise -- APP` on the GPU machine: each example program (examples/, built by CMake in
build/release/examples) profiled by Nsight Compute and advised, against the GPU's newest
committed run. Skipped without ncu, a GPU or the built examples (CI has none of them);
test_advise.py checks the same on committed H100 exports."""

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import FIXTURES, GMB
from gmbtools.data.ncu_source import read_source_csv

EXAMPLES = GMB.resolve().parents[1] / "build" / "release" / "examples"
PROBE = FIXTURES / "advise" / "probe.cu"


def _gpu() -> bool:
    try:
        return subprocess.run(["nvidia-smi", "-L"], capture_output=True, text=True,
                              timeout=30).stdout.startswith("GPU ")
    except (OSError, subprocess.TimeoutExpired):
        return False


pytestmark = pytest.mark.skipif(
    shutil.which("ncu") is None or not _gpu() or not (EXAMPLES / "transpose_naive").is_file(),
    reason="needs ncu, a GPU and the examples built in build/release/examples")


@pytest.fixture(scope="module")
def advised(tmp_path_factory):
    folder = tmp_path_factory.mktemp("advise")
    seen = {}

    def run(example):
        if example not in seen:
            done = subprocess.run(
                [sys.executable, str(GMB), "advise", "--json", "--keep",
                 str(folder / f"{example}.ncu-rep"), "--", str(EXAMPLES / example)],
                capture_output=True, text=True, timeout=300)
            assert done.returncode == 0, done.stderr
            kernels = json.loads(done.stdout)["kernels"]
            seen[example] = next(k for k in kernels if not k["kernel"].startswith("example::"))
        return seen[example]
    return run


@pytest.mark.parametrize("example, line, kind, sectors, twin", [
    ("transpose_naive", "transpose_naive.cu:11", "column walk", 32, "transpose/f32/naive_rows/"),
    ("particles_aos", "particles_aos.cu:16", "strided", 32, "stride/f32/read/s:8"),
    ("hashed_gather", "hashed_gather.cu:14", "scattered", 32, "gather/random"),
    ("stencil", "stencil.cu:11", "misaligned", 5, "offset/f32/read/off:1"),
])
def test_each_example_gets_its_expensive_line_named(advised, example, line, kind, sectors, twin):
    kernel = advised(example)
    top = max(kernel["accesses"], key=lambda a: a["share_of_kernel_sectors"])
    assert (top["where"], top["class"]) == (line, kind)
    assert top["sectors_per_request"] == pytest.approx(sectors, abs=0.01)
    assert top["behaves_like"].startswith(twin)
    assert kernel["fixes"] and line in kernel["fixes"][0]["where"]


def test_the_column_sum_is_coalesced(advised):
    kernel = advised("column_sum")
    assert {a["class"] for a in kernel["accesses"]} == {"coalesced"} and kernel["fixes"] == []


@pytest.mark.parametrize("broken, fixed", [("transpose_naive", "transpose_tiled"),
                                           ("particles_aos", "particles_soa")])
def test_the_predicted_time_with_the_line_fixed_is_within_15_percent_of_the_fixed_twin(
        advised, broken, fixed):
    predicted = advised(broken)["fixes"][0]["predicted_seconds"]
    measured = advised(fixed)["seconds"]
    print(f"{broken}: predicted {predicted * 1e3:.4f} ms with the line fixed; "
          f"{fixed}: {measured * 1e3:.4f} ms")
    assert predicted == pytest.approx(measured, rel=0.15)


def _nvcc() -> str | None:
    return shutil.which("nvcc") or next(
        (str(p) for p in (Path("/usr/local/cuda/bin/nvcc"),) if p.is_file()), None)


def test_a_program_not_among_the_examples_gets_its_lines_named_as_nsight_compute_counts(
        tmp_path):
    """fixtures/advise/probe.cu, built here with -lineinfo: four kernels of its own."""
    nvcc = _nvcc()
    if nvcc is None:
        pytest.skip("needs nvcc")
    app, report = tmp_path / "probe", tmp_path / "probe.ncu-rep"
    subprocess.run([nvcc, "-O3", "-lineinfo", "-arch=native", "-o", str(app), str(PROBE)],
                   check=True, capture_output=True)
    done = subprocess.run([sys.executable, str(GMB), "advise", "--json", "--keep", str(report),
                           "--", str(app)], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    kernels = {k["kernel"].split("(")[0]: k for k in json.loads(done.stdout)["kernels"]}
    top = {name: max(k["accesses"], key=lambda a: a["share_of_kernel_sectors"])
           for name, k in kernels.items()}
    assert (top["stride3"]["where"], top["stride3"]["class"], top["stride3"]["stride"]) == (
        "probe.cu:7", "strided", 3)
    assert (top["aos_update"]["class"], top["aos_update"]["stride"]) == ("strided", 8)
    assert top["transpose_naive"]["class"] == "column walk"
    # a hashed gather over 64 MiB, most of it in the L2: a walk or scattered (docs/advise.md)
    assert top["gather_hash"]["class"] in ("column walk", "scattered")
    # Nsight Compute's own numbers, read from the kept report without gmb's reader of it
    export = subprocess.run(["ncu", "--import", str(report), "--page", "source", "--csv",
                             "--print-source", "sass"], capture_output=True, text=True,
                            check=True).stdout
    own = {(a.kernel.split("(")[0], a.address): a.sectors / a.requests
           for a in read_source_csv(export)}
    for name, access in top.items():
        assert access["sectors_per_request"] == pytest.approx(own[(name, access["address"])])
