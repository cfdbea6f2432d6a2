"""scripts/device/time_run.sh, the script that times a default run for the records: run in a
copy of scripts/ whose `gmb` prints two binaries' lines, so its files are checked without a GPU;
a file it cannot write costs one stderr line, never the run or gmb's exit status."""

import shutil
import subprocess
from pathlib import Path

import pytest

SCRIPT = Path(__file__).resolve().parents[1] / "device" / "time_run.sh"

FAKE_GMB = """#!/usr/bin/env bash
echo "gmb: building"
echo "gmb: build/release/gmembench --device=0 --benchmark_out=x"
echo "coalesced/f32_mean 1 2 3"
echo "coalesced/f32_median 1 2 3"
echo "gmb: CUDA_CACHE_DISABLE=1 build/release-cg/gmembench-cg --device=0"
echo "stride/f32_mean 1 2 3"
exit 3
"""


@pytest.fixture
def checkout(tmp_path):
    """A directory shaped like the repository: scripts/device/time_run.sh and a fake scripts/gmb."""
    (tmp_path / "scripts" / "device").mkdir(parents=True)
    shutil.copy(SCRIPT, tmp_path / "scripts" / "device" / "time_run.sh")
    gmb = tmp_path / "scripts" / "gmb"
    gmb.write_text(FAKE_GMB)
    gmb.chmod(0o755)
    return tmp_path


def time_run(checkout, out):
    return subprocess.run(["scripts/device/time_run.sh", out], cwd=checkout,
                          capture_output=True, text=True, timeout=60)


def test_writes_lines_time_and_slowest_with_gmbs_status(checkout):
    done = time_run(checkout, "o")
    assert done.returncode == 3, done.stderr
    assert done.stderr == ""
    time_txt = (checkout / "o" / "time.txt").read_text()
    assert time_txt.startswith("scripts/gmb run --out o/res : exit 3, ")
    assert done.stdout == time_txt
    logged = (checkout / "o" / "gmb-lines.txt").read_text().splitlines()
    seconds, line = logged[2].split(maxsplit=1)
    assert float(seconds) >= 0 and line == "coalesced/f32_mean 1 2 3"
    assert len(logged) == 6
    slowest = (checkout / "o" / "slowest.txt").read_text()
    # one line a binary, then one a benchmark (its _mean), labelled by build
    assert slowest.count("(the binary, start to its last benchmark)") == 2
    assert "default  coalesced/f32" in slowest and "cg       stride/f32" in slowest


def test_a_file_it_cannot_write_costs_one_line_not_the_run(checkout):
    # a directory where a file should be: open() fails as on a full disk
    for name in ("gmb-lines.txt", "time.txt"):
        (checkout / "o" / name).mkdir(parents=True)
    done = time_run(checkout, "o")
    assert done.returncode == 3
    assert done.stderr.splitlines() == ["time_run: o/gmb-lines.txt: Is a directory",
                                        "time_run: o/time.txt: Is a directory"]
    assert "Traceback" not in done.stderr
    assert "exit 3" in done.stdout  # the timing still printed
    assert "stride/f32" in (checkout / "o" / "slowest.txt").read_text()
