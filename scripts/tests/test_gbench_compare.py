"""Google Benchmark's own compare.py pairs two gmembench runs by name: one run with the default
minimum time and one with --benchmark_min_time (fixtures/pairing, from a lent H200). Before the
default became a flag value, names carried `/min_time:...` and such runs did not pair; the
committed runs of that time show it (the negative control)."""

import json
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import FIXTURES

COMPARE = Path("/usr/share/benchmark/compare.py")  # Debian's libbenchmark-tools
PAIRING = FIXTURES / "pairing"
OLD_NAMES = FIXTURES / "runs" / "h200-baselines" / "default.json"


def run_names(path):
    return {b["run_name"] for b in json.loads(path.read_text())["benchmarks"]}


def paired_by_compare_py(a, b, tmp_path):
    if not COMPARE.is_file():
        pytest.skip("no /usr/share/benchmark/compare.py (scripts/setup --test installs it)")
    pytest.importorskip("scipy", reason="compare.py needs scipy (scripts/setup --test)")
    dump = tmp_path / "pairs.json"
    proc = subprocess.run([sys.executable, str(COMPARE), "--no-color", "-d", str(dump),
                           "benchmarks", str(a), str(b)], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    return {entry["name"] for entry in json.loads(dump.read_text())}


def test_runs_with_and_without_min_time_pair_by_name(tmp_path):
    plain = PAIRING / "default_min_time.json"
    flagged = PAIRING / "min_time_0.03s.json"
    assert run_names(plain) == run_names(flagged)
    assert not any("min_time" in name for name in run_names(plain))
    paired = paired_by_compare_py(plain, flagged, tmp_path)
    assert run_names(plain) <= paired  # every benchmark has its partner
    assert len(run_names(plain)) == 4


def test_names_that_carried_min_time_did_not_pair(tmp_path):
    old = run_names(OLD_NAMES)
    assert all("/min_time:" in name for name in old)
    paired = paired_by_compare_py(PAIRING / "default_min_time.json", OLD_NAMES, tmp_path)
    assert not (paired & run_names(PAIRING / "default_min_time.json"))
