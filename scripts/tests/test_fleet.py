"""gmb fleet: the report on results from real GPUs, the task on this machine's real binary, and
submit end to end through a real single-node Slurm (the slurm_cluster fixture)."""

import csv
import json
import re
import shutil
import statistics
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import SCREEN_RUNS

from gmbtools import fleet, fleet_report
from gmbtools.cli import main

REPO = Path(__file__).resolve().parents[2]
GMB = REPO / "scripts" / "gmb"
# Four lent H200s (four GPU UUIDs) and an H100: their default runs cut to the screening
# benchmarks (fixtures/README.md).
H200_RUNS, H100_RUN = SCREEN_RUNS[:4], SCREEN_RUNS[4]


def screen_names() -> list[str]:
    """The screening benchmarks, from the one list the binary uses (include/gmb/screen.hpp)."""
    text = (REPO / "include" / "gmb" / "screen.hpp").read_text()
    block = text[text.index("kScreenBenchmarks = {"):]
    return re.findall(r'^\s+"([^"]+)",$', block[:block.index("};")], re.M)


def screen_json(run: str, slower: float = 1.0) -> dict:
    """A real run's screening benchmarks (what --gmb_sweep=screen writes); `slower` divides the
    best read's bandwidths, as a GPU with a slow memory would show."""
    doc = json.loads((run / "default.json").read_text())
    for b in doc["benchmarks"]:
        if b["run_name"].startswith("read/f32x4/ilp:1/grid:full") and "bytes_per_second" in b:
            b["bytes_per_second"] /= slower
    return doc


def add_task(folder: Path, rank: int, state: str, doc: dict | None = None,
             error: str | None = None, raw: str | None = None) -> Path:
    uuid = doc["context"]["gpu_uuid"] if doc else None
    where = folder / f"node{rank // 4}" / (uuid or f"task-{rank}")
    where.mkdir(parents=True)
    status = {"host": f"node{rank // 4}", "rank": rank, "state": state, "error": error,
              "gpu_uuid": uuid, "gpu_name": doc["context"]["gpu_name"] if doc else None}
    (where / fleet.STATUS).write_text(json.dumps(status))
    if doc is not None:
        (where / fleet.SCREEN_JSON).write_text(raw if raw is not None else json.dumps(doc))
    return where


@pytest.fixture
def real_fleet(tmp_path: Path) -> Path:
    """Ten tasks: four H200s, one H100, one H200 with a 10% slow read, and one each that
    failed, never finished, wrote corrupt JSON, and never started."""
    folder = tmp_path / "fleet" / "20261123-120000"
    folder.mkdir(parents=True)
    fleet.save_manifest(folder, fleet.Manifest(
        created="2026-11-23T12:00:00", nodes=3, tasks_per_node=4, tasks=10,
        binary="/opt/gmb/build/release/gmembench", repetitions=5, task_timeout_s=180,
        time_limit="00:15:00", launcher=["sbatch"], job_id="4242"))
    for rank, run in enumerate(H200_RUNS):
        add_task(folder, rank, "ok", screen_json(run))
    add_task(folder, 4, "ok", screen_json(H100_RUN))
    slow = screen_json(H200_RUNS[0], slower=1.1)
    slow["context"]["gpu_uuid"] = "GPU-slow-copy-of-a-real-run"
    add_task(folder, 5, "ok", slow)
    add_task(folder, 6, "failed", error="gmembench: error: no CUDA device found")
    add_task(folder, 7, "running")
    add_task(folder, 8, "ok", screen_json(H200_RUNS[1]),
             raw='{"context": {}, "benchmarks": [')
    return folder


def test_screen_names_are_in_the_real_runs():
    names = screen_names()
    assert len(names) == 9 and len(set(names)) == 9
    for run in H200_RUNS + [H100_RUN]:
        got = {b["run_name"].removesuffix("/manual_time") for b in screen_json(run)["benchmarks"]}
        assert got == set(names), run


def test_each_gpu_is_compared_with_the_median_of_its_model(real_fleet: Path):
    data = fleet_report.collect(real_fleet)
    ok = {t.rank: t for t in data.tasks if t.state == "ok"}
    assert sorted(ok) == [0, 1, 2, 3, 4, 5]
    h200 = [ok[r] for r in (0, 1, 2, 3, 5)]
    name = "ref/memcpy_d2d"
    median = statistics.median(t.metrics[name].value for t in h200)
    assert data.medians[(h200[0].gpu_name, name)] == pytest.approx(median)
    assert data.ratio(h200[2], name) == pytest.approx(h200[2].metrics[name].value / median)
    # Latency: lower is better, so the ratio is median / value.
    chase = "latency/chase/ws:2147483648/lanes:1"
    assert ok[0].metrics[chase].unit == "ns"
    lat_median = statistics.median(t.metrics[chase].value for t in h200)
    assert data.ratio(ok[0], chase) == pytest.approx(lat_median / ok[0].metrics[chase].value)
    # The H100 is its own fleet: exactly its median.
    assert all(data.ratio(ok[4], n) == pytest.approx(1.0) for n in ok[4].metrics)
    # Only the slowed GPU is an outlier, on the read alone; the real H200s agree within 5%.
    assert [r for r, t in ok.items() if data.outliers(t)] == [5]
    assert data.outliers(ok[5]) == ["read/f32x4/ilp:1/grid:full"]


def test_report_lists_every_task_that_did_not_screen_its_gpu(real_fleet: Path, capsys):
    assert main(["fleet", "report", str(real_fleet)]) == 1
    err = capsys.readouterr().err.strip()
    assert err == (f"gmb: error: 4 of 10 task(s) did not screen their GPU "
                   f"(see {real_fleet / 'report.md'})")
    report = (real_fleet / "report.md").read_text()
    assert "- GPUs screened: 6 of 10" in report
    assert "| failed | gmembench: error: no CUDA device found |" in report
    assert "| unfinished | status.json still says running" in report
    assert re.search(r"\| corrupt \| \S+/screen.json: truncated or corrupt JSON", report)
    assert "| missing | no status.json: the task never started (see slurm-4242.out) |" in report
    assert "0.909 ⚠" in report  # the slowed read: 1 / 1.1
    rows = list(csv.DictReader(open(real_fleet / "fleet.csv")))
    assert {r["state"] for r in rows} == {"ok", "failed", "unfinished", "corrupt", "missing"}
    flagged = [r for r in rows if r["outlier"] == "1"]
    assert [(r["rank"], r["benchmark"]) for r in flagged] == [("5", "read/f32x4/ilp:1/grid:full")]
    assert (real_fleet / "fleet.png").stat().st_size > 0


def test_report_refuses_a_folder_that_is_not_a_fleet(tmp_path: Path, capsys):
    assert main(["fleet", "report", str(tmp_path)]) == 1
    assert capsys.readouterr().err.strip() == (
        f"gmb: error: {tmp_path}: not a fleet folder (no fleet.json; gmb fleet submit makes it)")


def built_binary() -> Path:
    for preset in ("ci", "release", "sm90"):
        binary = REPO / "build" / preset / "gmembench"
        if binary.is_file():
            return binary
    pytest.skip("no built gmembench (scripts/test builds it first)")


def gpu_present() -> bool:
    try:
        listed = subprocess.run(["nvidia-smi", "-L"], capture_output=True, text=True)
    except OSError:
        return False
    return "GPU " in listed.stdout


def manifest_for(folder: Path, binary: Path, timeout_s: int = 60, tasks: int = 1) -> None:
    fleet.save_manifest(folder, fleet.Manifest(
        created="now", nodes=1, tasks_per_node=tasks, tasks=tasks, binary=str(binary),
        repetitions=1, task_timeout_s=timeout_s, time_limit="00:05:00", launcher=[]))


def run_task(folder: Path, **env: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, str(GMB), "fleet", "task", str(folder)],
                          capture_output=True, text=True,
                          env={"PATH": "/usr/bin:/bin", **env})


def test_a_task_without_a_gpu_records_the_binarys_error(tmp_path: Path):
    if gpu_present():
        pytest.skip("a GPU is present: the task would screen it")
    manifest_for(tmp_path, built_binary())
    proc = run_task(tmp_path, SLURMD_NODENAME="n1", SLURM_PROCID="3", SLURM_LOCALID="0")
    assert proc.returncode == 1
    status = json.loads((tmp_path / "n1" / "task-3" / fleet.STATUS).read_text())
    assert status["state"] == "failed"
    assert status["error"].startswith("gmembench: error: no CUDA device found")


def test_a_task_that_hangs_is_stopped_and_reported_as_a_timeout(tmp_path: Path):
    hang = tmp_path / "hangs"
    hang.write_text("#!/bin/sh\nexec sleep 600\n")
    hang.chmod(0o755)
    manifest_for(tmp_path, hang, timeout_s=2)
    proc = run_task(tmp_path, SLURMD_NODENAME="n1", SLURM_PROCID="0")
    assert proc.returncode == 1
    status = json.loads((tmp_path / "n1" / "task-0" / fleet.STATUS).read_text())
    assert status["state"] == "timeout"
    assert "did not answer within the task's time limit" in status["error"]


def test_batch_script_has_one_task_per_gpu(tmp_path: Path):
    options = fleet.SubmitOptions(nodes=4, gpus_per_node=8, partition="gpu",
                                  sbatch_args=("--account=ops",))
    script = fleet.batch_script(options, tmp_path, ["python3", "gmb", "fleet", "task", "X"])
    for line in ("#SBATCH --nodes=4", "#SBATCH --ntasks-per-node=8", "#SBATCH --gpus-per-task=1",
                 "#SBATCH --partition=gpu", "#SBATCH --account=ops",
                 f"#SBATCH --output={tmp_path}/slurm-%j.out",
                 "srun --kill-on-bad-exit=0 python3 gmb fleet task X"):
        assert line in script.splitlines()


def test_submit_through_real_slurm_reports_each_tasks_failure(slurm_cluster, tmp_path: Path):
    """End to end: sbatch, two tasks on the local node, each fails without a GPU (or screens
    one where there is), the report lists them."""
    binary = built_binary()
    hang = tmp_path / "hangs"
    hang.write_text("#!/bin/sh\nexec sleep 600\n")
    hang.chmod(0o755)
    for chosen, timeout, expected in ((binary, 60, "gmembench: error: no CUDA device found"),
                                      (hang, 3, "did not answer within the task's time limit")):
        if chosen == binary and gpu_present():
            continue
        proc = subprocess.run(
            [sys.executable, str(GMB), "fleet", "submit", "--binary", str(chosen),
             "--no-gpu-request", "--gpus-per-node", "2", "--task-timeout", str(timeout),
             "--time", "00:02:00", "--wait", "--out", str(tmp_path / "results")],
            capture_output=True, text=True, env=slurm_cluster.env, timeout=240)
        assert proc.returncode == 1, proc.stdout + proc.stderr
        assert "2 of 2 task(s) did not screen their GPU" in proc.stderr
        folder = max((tmp_path / "results" / "fleet").iterdir())
        report = (folder / "report.md").read_text()
        assert report.count(expected) == 2, report
        manifest = fleet.load_manifest(folder)
        assert manifest.job_id and (folder / f"slurm-{manifest.job_id}.out").exists()
        shutil.rmtree(tmp_path / "results")


def test_a_broken_status_is_corrupt_and_its_rank_not_also_missing(tmp_path: Path):
    folder = tmp_path / "fleet"
    folder.mkdir()
    manifest_for(folder, Path("/bin/true"), tasks=3)
    for name, text in (("a", '{"host": 1, "rank": "x"}'), ("b", "[")):
        (folder / "n1" / name).mkdir(parents=True)
        (folder / "n1" / name / fleet.STATUS).write_text(text)
    data = fleet_report.collect(folder)
    states = sorted((t.state, t.error) for t in data.tasks)
    assert [s for s, _ in states] == ["corrupt", "corrupt", "missing"]
    assert "missing or wrong host, rank" in states[0][1] + states[1][1]
    assert fleet_report.render(data, None).count("| missing |") == 1


def test_a_task_outside_slurm_with_a_bad_rank_is_a_one_line_error(tmp_path: Path):
    manifest_for(tmp_path, Path("/bin/true"))
    proc = run_task(tmp_path, SLURM_PROCID="x")
    assert proc.returncode == 1
    assert proc.stderr.strip() == ("gmb: error: SLURM_PROCID='x' is not a task index "
                                   "(is this a Slurm task?)")
