"""gmb fleet: the report on results from real GPUs, the task on this machine's real binary, and
submit end to end through a real single-node Slurm (the slurm_cluster fixture)."""

import csv
import json
import re
import shutil
import signal
import statistics
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest
from conftest import SCREEN_RUNS

from gmbtools.commands import fleet

from gmbtools.data import fleet_folder
from gmbtools.present import fleet_report
from gmbtools.commands.cli import main

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
    (where / fleet_folder.STATUS).write_text(json.dumps(status))
    if doc is not None:
        (where / fleet_folder.SCREEN_JSON).write_text(raw if raw is not None else json.dumps(doc))
    return where


@pytest.fixture
def real_fleet(tmp_path: Path) -> Path:
    """Ten tasks: four H200s, one H100, one H200 with a 10% slow read, and one each that
    failed, never finished, wrote corrupt JSON, and never started."""
    folder = tmp_path / "fleet" / "20261123-120000"
    folder.mkdir(parents=True)
    fleet_folder.save_manifest(folder, fleet_folder.Manifest(
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
    fleet_folder.save_manifest(folder, fleet_folder.Manifest(
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
    status = json.loads((tmp_path / "n1" / "task-3" / fleet_folder.STATUS).read_text())
    assert status["state"] == "failed"
    assert status["error"].startswith("gmembench: error: no CUDA device found")


def test_a_task_that_hangs_is_stopped_and_reported_as_a_timeout(tmp_path: Path):
    hang = tmp_path / "hangs"
    hang.write_text("#!/bin/sh\nexec sleep 600\n")
    hang.chmod(0o755)
    manifest_for(tmp_path, hang, timeout_s=2)
    proc = run_task(tmp_path, SLURMD_NODENAME="n1", SLURM_PROCID="0")
    assert proc.returncode == 1
    status = json.loads((tmp_path / "n1" / "task-0" / fleet_folder.STATUS).read_text())
    assert status["state"] == "timeout"
    assert "did not answer within the task's time limit" in status["error"]


def test_batch_script_has_one_task_per_gpu(tmp_path: Path):
    options = fleet.SubmitOptions(nodes=4, gpus_per_node=8, partition="gpu",
                                  sbatch_args=("--account=ops",))
    script = fleet.batch_script(options, tmp_path, ["python3", "gmb", "fleet", "task", "X"])
    for line in ("#SBATCH --nodes=4", "#SBATCH --ntasks-per-node=8", "#SBATCH --gpus-per-task=1",
                 "#SBATCH --partition=gpu", "#SBATCH --account=ops",
                 f"#SBATCH --output={tmp_path}/slurm-%j.out", "#SBATCH --signal=TERM@120",
                 "srun --kill-on-bad-exit=0 python3 gmb fleet task X"):
        assert line in script.splitlines()


# Issue 33 item 6: what the user gives goes into #SBATCH lines, so a value that would add a line
# of its own, or that Slurm would not parse, is refused before anything is built or written.
BAD_VALUES = [
    (["--partition", "gpu\n#SBATCH --uid=0"], "--partition: 'gpu\\n#SBATCH --uid=0' holds a "
     "control character (U+000A)"),
    (["--partition", "gpu --qos=high"], "--partition: 'gpu --qos=high' is not a Slurm partition "
     "name (holds ' ')"),
    (["--partition", "gpu#x"], "--partition: 'gpu#x' is not a Slurm partition name"),
    (["--sbatch-arg=--comment=a\tb"], "--sbatch-arg: '--comment=a\\tb' holds a control "
     "character (U+0009)"),
    (["--sbatch-arg=--comment=\x1b[2J"], "--sbatch-arg: '--comment=\\x1b[2J' holds a control "
     "character (U+001B)"),
    (["--sbatch-arg=--comment=a\x7f"], "holds a control character (U+007F)"),
    (["--sbatch-arg=account=ops"], "--sbatch-arg: 'account=ops' is not an sbatch option"),
    (["--time=1:2:3:4"], "--time: '1:2:3:4' is not a Slurm time limit"),
    (["--time=abc"], "--time: 'abc' is not a Slurm time limit"),
    (["--time=-5"], "--time: '-5' is not a Slurm time limit"),
    (["--time=1-"], "--time: '1-' is not a Slurm time limit"),
    (["--time=30\n"], "--time: '30\\n' holds a control character (U+000A)"),
    (["--time=99999999:00:00"], "--time: '99999999:00:00' is longer than Slurm can hold"),
]


@pytest.mark.parametrize(("args", "message"), BAD_VALUES, ids=[repr(a[-1]) for a, _ in BAD_VALUES])
def test_a_value_that_would_break_the_batch_script_is_refused_first(
        args: list[str], message: str, tmp_path: Path, capsys, monkeypatch):
    def never(*_args, **_kwargs):
        raise AssertionError("nothing may be built or run for a refused value")
    for name in ("run", "Popen"):
        monkeypatch.setattr(fleet.subprocess, name, never)
    monkeypatch.setattr(fleet, "_build", never)
    out = tmp_path / "results"
    assert main(["fleet", "submit", "--binary", "/bin/true", "--out", str(out), *args]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    err = captured.err.splitlines()
    assert len(err) == 1 and err[0].startswith("gmb: error: ") and message in err[0], err
    assert not out.exists() and list(tmp_path.iterdir()) == []


def test_an_out_folder_with_a_newline_is_refused_first(tmp_path: Path, capsys, monkeypatch):
    monkeypatch.setattr(fleet, "_build", lambda *_: pytest.fail("built for a refused --out"))
    out = tmp_path / "results\n#SBATCH --uid=0"
    assert main(["fleet", "submit", "--out", str(out)]) == 2
    err = capsys.readouterr().err.splitlines()
    assert len(err) == 1 and err[0].startswith("gmb: error: --out: ") and "U+000A" in err[0]
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize(("text", "seconds"), [
    ("30", 1800), ("1:00:00", 3600), ("2-00:00:00", 172800), ("1-12", 129600),
    ("90:30", 5460), ("1-2:03", 93780), ("00:15:00", 900), ("0:30", 60),
    ("0", None), ("UNLIMITED", None), ("infinite", None)])
def test_slurms_time_formats_are_accepted(text: str, seconds: int | None):
    """sbatch --time's formats (minutes, minutes:seconds, hours:minutes:seconds, days-hours,
    days-hours:minutes, days-hours:minutes:seconds), rounded up to the minute as Slurm does."""
    assert fleet.time_limit_s(text) == seconds
    assert fleet.SubmitOptions(time_limit=text).time_limit == text


def test_the_job_is_warned_before_its_time_limit(tmp_path: Path):
    """SIGTERM to the job steps (no B:), 120 s ahead; a quarter of a short limit; none without
    a limit. An --out folder sbatch would split is quoted as its #SBATCH parser wants."""
    def signal_lines(limit: str, folder: Path = tmp_path) -> list[str]:
        script = fleet.batch_script(fleet.SubmitOptions(time_limit=limit), folder, ["t"])
        return [line for line in script.splitlines() if "--signal" in line]
    assert signal_lines("00:15:00") == ["#SBATCH --signal=TERM@120"]
    assert signal_lines("1-12") == ["#SBATCH --signal=TERM@120"]
    assert signal_lines("4") == ["#SBATCH --signal=TERM@60"]
    assert signal_lines("1") == ["#SBATCH --signal=TERM@15"]
    assert signal_lines("0") == signal_lines("UNLIMITED") == []
    odd = tmp_path / 'a b#"c'
    script = fleet.batch_script(fleet.SubmitOptions(), odd, ["t"])
    assert f'#SBATCH --output="{tmp_path}/a b#\\"c/slurm-%j.out"' in script.splitlines()


# A stand-in for gmembench that stops as it does (include/gmb/stop_signal.hpp): on SIGTERM it
# closes --benchmark_out with context gmb_interrupted and exits 128 + 15.
STOPPABLE = textwrap.dedent("""\
    #!{python}
    import json, signal, sys, time
    args = dict(a.split("=", 1) for a in sys.argv[1:] if "=" in a)
    if "--gmb_info" in sys.argv:
        print(json.dumps({{"gpu_slug": "fake", "gpu_uuid": "GPU-fake", "gpu_name": "Fake"}}))
        sys.exit(0)
    def stop(sig, frame):
        doc = {{"context": {{"gmb_interrupted": "SIGTERM after 0 of 9 benchmarks"}},
                "benchmarks": []}}
        open(args["--benchmark_out"], "w").write(json.dumps(doc))
        print("gmembench: interrupted by SIGTERM after 0 of 9 benchmarks", file=sys.stderr)
        sys.exit(128 + sig)
    signal.signal(signal.SIGTERM, stop)
    open({started!r}, "w").close()
    time.sleep(600)
    """)


def stoppable(folder: Path) -> tuple[Path, Path]:
    """The stand-in binary, and the file it makes once the screen has started."""
    binary, started = folder / "stoppable", folder / "started"
    binary.write_text(STOPPABLE.format(python=sys.executable, started=str(started)))
    binary.chmod(0o755)
    return binary, started


def wait_for(path: Path, timeout: float = 30) -> None:
    deadline = time.monotonic() + timeout
    while not path.exists():
        assert time.monotonic() < deadline, f"timed out waiting for {path}"
        time.sleep(0.05)


def test_a_task_stopped_by_sigterm_is_interrupted_not_failed(tmp_path: Path):
    """The signal reaches the task alone (as a `kill` by hand would): it passes it on to the
    binary, which closes its JSON; status.json says interrupted, and the task exits 128 + 15."""
    binary, started = stoppable(tmp_path)
    folder = tmp_path / "fleet"
    folder.mkdir()
    manifest_for(folder, binary)
    proc = subprocess.Popen([sys.executable, str(GMB), "fleet", "task", str(folder)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env={"PATH": "/usr/bin:/bin", "SLURMD_NODENAME": "n1",
                                 "SLURM_PROCID": "0"})
    wait_for(started)
    proc.send_signal(signal.SIGTERM)
    out, err = proc.communicate(timeout=30)
    assert proc.returncode == 128 + signal.SIGTERM, out + err
    where = folder / "n1" / "GPU-fake"
    status = json.loads((where / fleet_folder.STATUS).read_text())
    assert status["state"] == "interrupted"
    assert status["error"] == "interrupted by SIGTERM after 0 of 9 benchmarks"
    data = fleet_report.collect(folder)
    assert [(t.state, t.gpu_uuid) for t in data.problems] == [("interrupted", "GPU-fake")]
    assert "| interrupted | interrupted by SIGTERM after 0 of 9 benchmarks |" in \
        fleet_report.render(data, None)


def test_a_binary_that_does_not_stop_cleanly_is_interrupted_with_how_it_ended(tmp_path: Path):
    """As a gmembench that aborts in Google Benchmark's statistics when stopped mid-way."""
    binary, started = stoppable(tmp_path)
    text = binary.read_text()
    binary.write_text(text.replace("    open(args", "    print('statistics.cc:135: Check failed.',"
                                   " flush=True)\n    import os; os.abort()\n    open(args"))
    assert binary.read_text() != text
    folder = tmp_path / "fleet"
    folder.mkdir()
    manifest_for(folder, binary)
    proc = subprocess.Popen([sys.executable, str(GMB), "fleet", "task", str(folder)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env={"PATH": "/usr/bin:/bin", "SLURMD_NODENAME": "n1",
                                 "SLURM_PROCID": "0"})
    wait_for(started)
    proc.send_signal(signal.SIGTERM)
    proc.communicate(timeout=30)
    status = json.loads((folder / "n1" / "GPU-fake" / fleet_folder.STATUS).read_text())
    assert (status["state"], status["error"]) == (
        "interrupted", "interrupted by SIGTERM; the screen then ended with SIGABRT: "
        "statistics.cc:135: Check failed.")


def test_a_binary_that_exits_128_plus_sigterm_is_interrupted(tmp_path: Path):
    """Stopped by a signal the task never saw (Slurm signals every process of the step)."""
    binary = tmp_path / "stopped"
    binary.write_text("#!/bin/sh\ncase \"$*\" in *--gmb_info*) echo '{\"gpu_slug\": \"fake\"}';"
                      " exit 0;; esac\nexit 143\n")
    binary.chmod(0o755)
    manifest_for(tmp_path, binary)
    assert run_task(tmp_path, SLURMD_NODENAME="n1", SLURM_PROCID="0").returncode == 1
    status = json.loads((tmp_path / "n1" / "task-0" / fleet_folder.STATUS).read_text())
    assert (status["state"], status["error"]) == ("interrupted", "interrupted by SIGTERM")


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
        manifest = fleet_folder.load_manifest(folder)
        assert manifest.job_id and (folder / f"slurm-{manifest.job_id}.out").exists()
        shutil.rmtree(tmp_path / "results")


def test_slurm_warns_the_tasks_before_the_time_limit(slurm_cluster, tmp_path: Path):
    """End to end: a one-minute job (the warning a quarter of it ahead) whose screen would run
    for ten; Slurm's SIGTERM stops it, and the folder says interrupted, not unfinished. The
    results folder has a space and a '#', which the script's --output line must quote."""
    binary, _ = stoppable(tmp_path)
    out = tmp_path / "results #1"
    began = time.monotonic()
    proc = subprocess.run(
        [sys.executable, str(GMB), "fleet", "submit", "--binary", str(binary),
         "--no-gpu-request", "--time", "1", "--task-timeout", "600", "--wait",
         "--out", str(out)],
        capture_output=True, text=True, env=slurm_cluster.env, timeout=240)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert time.monotonic() - began < 60  # ended by the warning, not at the limit
    folder = max((out / "fleet").iterdir())
    assert "#SBATCH --signal=TERM@15" in (folder / "job.sbatch").read_text().splitlines()
    manifest = fleet_folder.load_manifest(folder)
    assert manifest.job_id and (folder / f"slurm-{manifest.job_id}.out").exists()
    data = fleet_report.collect(folder)
    assert [(t.state, t.error) for t in data.tasks] == [
        ("interrupted", "interrupted by SIGTERM after 0 of 9 benchmarks")]


def test_a_broken_status_is_corrupt_and_its_rank_not_also_missing(tmp_path: Path):
    folder = tmp_path / "fleet"
    folder.mkdir()
    manifest_for(folder, Path("/bin/true"), tasks=3)
    for name, text in (("a", '{"host": 1, "rank": "x"}'), ("b", "[")):
        (folder / "n1" / name).mkdir(parents=True)
        (folder / "n1" / name / fleet_folder.STATUS).write_text(text)
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
