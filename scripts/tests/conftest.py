"""Shared test setup: import gmbtools from scripts/, and find the fixture JSON files.

Fixtures named synthetic_*.json are hand-made in Google Benchmark's format with known numbers
(synthetic_families_*.json by fixtures/make_synthetic_families.py); files from real GPU runs
(gb183_default.json, ...) may be added beside them and are picked up by the tests that
parametrize over `ALL_FIXTURES`. H200_RUN and CACHING_RUN are runs of the suite on an H200
committed under results/, trimmed to the benchmarks the tests use by fixtures/trim_run.py and
kept under fixtures/runs/ (fixtures/README.md says which run, which commit, which benchmarks), so
no test needs results/ (test_committed_summaries.py checks it where it exists). `gmb(...)` runs the CLI as a user does. `slurm_cluster` is a private
one-node Slurm cluster (slurm_cluster.py) for the tests that submit jobs.
"""

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import slurm_cluster as slurm

SCRIPTS = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(SCRIPTS))

FIXTURES = Path(__file__).resolve().parent / "fixtures"
ALL_FIXTURES = sorted(FIXTURES.glob("*.json"))
SYNTHETIC_DEFAULT = FIXTURES / "synthetic_gb183_default.json"  # GB 1.8.3, 3 repetitions
SYNTHETIC_CA = FIXTURES / "synthetic_gb171_ca.json"  # GB 1.7.1, no repetitions
# The families the suite is gaining (offset, stride, aos/soa, vector, cache, latency, tlb,
# inflight, the transpose and reduce ladders), one run each.
SYNTHETIC_FAMILIES = {flavor: FIXTURES / f"synthetic_families_{flavor}.json"
                      for flavor in ("default", "ca", "cg")}
# results/nvidia-h200/20261122-022717 (read/write/copy/ref, 5 repetitions): default and ca.
H200_RUN = FIXTURES / "runs" / "h200-baselines"
# results/nvidia-h200/20261122-030335 (every family, 5 repetitions): default, ca and cg.
CACHING_RUN = FIXTURES / "runs" / "h200-catalog"
# Screening runs (fixtures/README.md): four lent H200s, then an H100.
SCREEN_RUNS = [FIXTURES / "runs" / name for name in (
    "screen-h200-20261123-091332", "screen-h200-20261123-092452", "screen-h200-20261123-105448",
    "screen-h200-20261123-121406", "screen-h100-20261123-122232")]
GMB = SCRIPTS / "gmb"


@pytest.fixture(scope="session")
def slurm_cluster(tmp_path_factory):
    """A started one-node Slurm cluster, shared by the session; stopped at its end."""
    ok, why = slurm.available()
    if not ok:
        pytest.skip(why)
    with slurm.SlurmCluster(tmp_path_factory.mktemp("slurm")) as cluster:
        yield cluster


def gmb(*args):
    return subprocess.run([sys.executable, str(GMB), *args], capture_output=True, text=True)


def git_commit_all(folder: Path) -> Path:
    """`folder` made a git repository with everything in it committed: what a clean clone is."""
    if shutil.which("git") is None:
        pytest.skip("needs git")
    for args in (["init", "-q"], ["add", "-A"],
                 ["-c", "user.name=gmb", "-c", "user.email=gmb@localhost", "-c",
                  "commit.gpgsign=false", "commit", "-q", "--allow-empty", "-m", "clean"]):
        subprocess.run(["git", "-C", str(folder), *args], check=True, capture_output=True)
    return folder


def git_status(folder: Path) -> str:
    """`git status --porcelain` of the repository at `folder` ("" when it is clean)."""
    return subprocess.run(["git", "-C", str(folder), "status", "--porcelain"], check=True,
                          capture_output=True, text=True).stdout


def assert_one_line_error(proc, fragment):
    assert proc.returncode != 0
    assert "Traceback" not in proc.stderr
    lines = proc.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("gmb: error: "), proc.stderr
    assert fragment in lines[0]


# --- small hand-made files in Google Benchmark's layout --------------------------------------

T = 1e12


def write_gb(path, benchmarks, context=None):
    """A minimal file in Google Benchmark's layout."""
    doc = {"context": context or {"date": "2025-01-01T00:00:00+00:00"}, "benchmarks": benchmarks}
    path.write_text(json.dumps(doc))
    return path


def iteration(name, bps, index=0, **extra):
    return {"name": f"{name}/manual_time", "run_name": f"{name}/manual_time",
            "run_type": "iteration", "repetitions": 3, "repetition_index": index, "threads": 1,
            "iterations": 10, "real_time": 1.0, "cpu_time": 0.1, "time_unit": "ms",
            "bytes_per_second": bps, "pct_peak": bps / 3e10, **extra}


def aggregate(name, aggregate_name, bps, **extra):
    return {"name": f"{name}/manual_time_{aggregate_name}", "run_name": f"{name}/manual_time",
            "run_type": "aggregate", "repetitions": 3, "threads": 1,
            "aggregate_name": aggregate_name, "iterations": 3, "real_time": 1.0,
            "cpu_time": 0.1, "time_unit": "ms", "bytes_per_second": bps, "pct_peak": bps / 3e10,
            **extra}
