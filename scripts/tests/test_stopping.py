"""Runs that survive the real world, against a stand-in binary that behaves as gmembench does
when stopped (tests/host/result_file_test.cpp and the device tests check gmembench itself):
it writes its file after every benchmark, closes it with gmb_interrupted on a first SIGTERM,
SIGINT or SIGHUP and exits 128 + N, dies at once on a second; FAKE_HANG names a benchmark
that never returns (a kernel stuck on the GPU: signals do nothing until SIGKILL).

Covered: a signal to `gmb` alone and to its whole process group, twice; `--resume`; the
watchdog; a results folder that cannot be written; partial.py's reading of cut files.
"""

import gzip
import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from conftest import SCRIPTS

from gmbtools.data import partial

NAMES = [f"read/f32/ilp:{k}/grid:full" for k in range(1, 9)]

FAKE = r'''#!{python}
import json, os, signal, sys, time
from pathlib import Path
args = dict(a.split("=", 1) if "=" in a else (a, "") for a in sys.argv[1:])
names = os.environ["FAKE_NAMES"].split(",")
binary = Path(sys.argv[0]).name
flavor = {{"gmembench": "default", "gmembench-ca": "ca", "gmembench-cg": "cg"}}[binary]
if "--gmb_info" in args:
    print(json.dumps({{"gpu_slug": "fake-h100", "gpu_name": "Fake H100",
                      "gpu_uuid": os.environ.get("FAKE_UUID", "GPU-1"),
                      "git_sha": os.environ.get("FAKE_SHA", "abc")}}))
    sys.exit(0)
skip = set()
if "--gmb_skip_list" in args:
    skip = {{line.strip() for line in open(args["--gmb_skip_list"]) if line.strip()}}
names = [n for n in names if n not in skip]
if "--benchmark_list_tests" in args:
    print("\n".join(n + "/manual_time" for n in names))
    sys.exit(0)
with open(os.environ["FAKE_LOG"], "a") as log:
    log.write(json.dumps([binary] + sys.argv[1:]) + "\n")
stop = []
def on_signal(sig, frame):
    if stop:
        signal.signal(sig, signal.SIG_DFL)
        os.kill(os.getpid(), sig)
    stop.append(sig)
for s in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
    signal.signal(s, on_signal)
try:
    out = open(args["--benchmark_out"], "w")
except OSError:
    print(f"invalid file name: '{{args['--benchmark_out']}}'", file=sys.stderr)
    sys.exit(1)
reps = int(args.get("--benchmark_repetitions", "1"))
context = {{"gmb_flavor": flavor, "gpu_name": "Fake H100", "gmb_benchmarks": str(len(names)),
           "gpu_peak_gbs": "3352.32"}}
text = json.dumps(context, indent=2).replace("\n", "\n  ")
out.write('{{\n  "context": ' + text + ',\n  "benchmarks": [\n')
out.flush()
def entry(name, rep, aggregate=None):
    e = {{"name": name + "/manual_time" + ("_" + aggregate if aggregate else ""),
         "run_name": name + "/manual_time", "run_type": "aggregate" if aggregate else "iteration",
         "repetitions": reps, "threads": 1, "iterations": 10, "real_time": 1.0,
         "cpu_time": 0.1, "time_unit": "ms", "bytes_per_second": 1e11 * (1 + rep / 100),
         "pct_peak": 50.0}}
    if aggregate:
        e["aggregate_name"] = aggregate
    else:
        e["repetition_index"] = rep
    return e
first, done = True, 0
for k, name in enumerate(names):
    if name == os.environ.get("FAKE_HANG"):
        for s in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
            signal.signal(s, signal.SIG_IGN)  # stuck in a kernel: only SIGKILL ends it
        while True:
            time.sleep(1)
    if stop:
        break
    time.sleep(float(os.environ.get("FAKE_STEP", "0.05")))
    if stop:
        break  # abandoned
    entries = [entry(name, r) for r in range(reps)] + ([entry(name, 0, "median")] if reps > 1 else [])
    whole = out.tell()
    try:
        for e in entries:
            out.write(("" if first else ",\n") + "    " + json.dumps(e, indent=2).replace("\n", "\n    "))
            first = False
        out.flush()
    except OSError as err:  # as gmembench: back to the last whole benchmark, closed there
        print(f"gmembench: error: cannot write '{{args['--benchmark_out']}}' ({{err.strerror}})",
              file=sys.stderr)
        fd = os.open(args["--benchmark_out"], os.O_WRONLY)
        os.ftruncate(fd, whole)
        os.pwrite(fd, b"\n  ]\n}}\n", whole)
        os.close(fd)
        os._exit(74)
    done += 1
    if str(done) == os.environ.get("FAKE_DIE_AFTER"):
        os.kill(os.getpid(), signal.SIGKILL)
out.write("\n  ]\n}}\n")
out.close()
if stop:
    doc = json.load(open(args["--benchmark_out"]))
    name = signal.Signals(stop[0]).name
    doc["context"]["gmb_interrupted"] = f"{{name}} after {{done}} of {{len(names)}} benchmarks"
    json.dump(doc, open(args["--benchmark_out"], "w"), indent=2)
    print(f"gmembench: interrupted by {{name}}", file=sys.stderr)
    sys.exit(128 + stop[0])
'''

TOOL = """#!/bin/bash
[ "$(basename "$0")" = nvidia-smi ] && [ "$1" = -L ] && echo "GPU 0: Fake H100 (UUID: GPU-1)"
exit 0
"""

DRIVER = """import sys
sys.path.insert(0, {scripts!r})
from pathlib import Path
from gmbtools.commands import cli, run
run.find_repo = lambda *a, **k: Path({repo!r})
if __name__ == "__main__":  # the figures' worker processes import this file again
    sys.exit(cli.main(sys.argv[1:]))
"""


@pytest.fixture
def stand_in(tmp_path, monkeypatch):
    """A checkout with stand-in binaries, cmake and nvidia-smi; `gmb(...)` starts the CLI as a
    process of its own (in a new process group, as a shell's job), returning the Popen."""
    repo = tmp_path / "repo"
    (repo / "scripts").mkdir(parents=True)
    (repo / "scripts" / "setup").write_text("exit 0\n")
    build = repo / "build" / "release"
    build.mkdir(parents=True)
    for binary in ("gmembench", "gmembench-ca", "gmembench-cg"):
        (build / binary).write_text(FAKE.format(python=sys.executable))
        (build / binary).chmod(0o755)
    tools = tmp_path / "bin"
    tools.mkdir()
    for tool in ("cmake", "nvidia-smi"):
        (tools / tool).write_text(TOOL)
        (tools / tool).chmod(0o755)
    driver = tmp_path / "gmb_driver.py"
    driver.write_text(DRIVER.format(scripts=str(SCRIPTS), repo=str(repo)))
    monkeypatch.setenv("PATH", f"{tools}{os.pathsep}{os.environ['PATH']}")
    monkeypatch.setenv("FAKE_LOG", str(tmp_path / "calls"))
    monkeypatch.setenv("FAKE_NAMES", ",".join(NAMES))
    out = tmp_path / "results"

    class StandIn:
        root = repo
        results = out

        @staticmethod
        def gmb(*args):
            return subprocess.Popen([sys.executable, str(driver), *args], cwd=repo,
                                    stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                    start_new_session=True)

        @staticmethod
        def calls():
            path = tmp_path / "calls"
            return [json.loads(line) for line in path.read_text().splitlines()] \
                if path.exists() else []

        @staticmethod
        def folder():
            (found,) = list(out.glob("fake-h100/*"))
            return found

    return StandIn


def run_args(stand_in, *extra):
    return ("run", "--preset", "release", "--repetitions", "2", "--out", str(stand_in.results),
            *extra)


def wait_for_benchmarks(stand_in, count, flavor="default", timeout=20):
    """Until the running flavor's file holds `count` benchmarks."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        for path in stand_in.results.glob(f"fake-h100/*/{flavor}.json"):
            text = path.read_text()
            if text.count('"run_type": "aggregate"') >= count:
                return
        time.sleep(0.05)
    raise AssertionError(f"the stand-in did not write {count} benchmarks")


def no_stand_in_left(stand_in):
    """Whether any stand-in binary of this test is still running."""
    found = subprocess.run(["pgrep", "-f", str(stand_in.root / "build")], capture_output=True,
                           text=True)
    return found.stdout.strip() == ""


def flavor_doc(folder, flavor):
    path = folder / f"{flavor}.json.gz"
    with gzip.open(path, "rt") as file:
        return json.load(file)


@pytest.mark.parametrize("to_group", [False, True], ids=["gmb-alone", "whole-group"])
def test_a_stop_keeps_what_finished_says_so_and_exits_128_plus_n(stand_in, monkeypatch,
                                                                  to_group):
    monkeypatch.setenv("FAKE_STEP", "0.3")
    proc = stand_in.gmb(*run_args(stand_in))
    wait_for_benchmarks(stand_in, 2)
    if to_group:
        os.killpg(proc.pid, signal.SIGTERM)  # a batch system, Ctrl-C: every process of the job
    else:
        proc.send_signal(signal.SIGTERM)  # timeout, kill: gmb alone
    started = time.monotonic()
    out, err = proc.communicate(timeout=30)
    assert time.monotonic() - started < 5
    assert proc.returncode == 128 + signal.SIGTERM, err
    assert no_stand_in_left(stand_in)
    folder = stand_in.folder()
    assert err.strip().splitlines()[-1].startswith("gmb: error: interrupted by SIGTERM")
    assert str(folder) in err and "--resume" in err
    doc = flavor_doc(folder, "default")
    assert doc["context"]["gmb_interrupted"].startswith("SIGTERM after ")
    assert 2 <= len(partial.finished(doc)) < len(NAMES)
    assert not (folder / "ca.json.gz").exists()  # the next flavors never started
    summary = (folder / "summary.md").read_text()
    assert "**Interrupted by SIGTERM**" in summary and "`ca` not started" in summary
    info = json.loads((folder / "run_info.json").read_text())
    assert info["interrupted"] == "SIGTERM"
    assert [r["interrupted"] for r in info["flavor_runs"]] == ["SIGTERM"]
    # One stop, one signal to the binary: a copy sent by gmb after the group's own would have
    # killed it at once, leaving the file cut (which gmb would then have had to close).
    assert "closed by gmb" not in doc["context"]["gmb_interrupted"]


def test_a_second_signal_ends_the_binary_at_once_and_gmb_closes_its_file(stand_in,
                                                                        monkeypatch):
    monkeypatch.setenv("FAKE_STEP", "2")
    proc = stand_in.gmb(*run_args(stand_in, "--flavors", "default"))
    wait_for_benchmarks(stand_in, 1)
    proc.send_signal(signal.SIGINT)
    time.sleep(0.3)
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=30)
    assert proc.returncode == 128 + signal.SIGINT, err
    assert no_stand_in_left(stand_in)
    doc = flavor_doc(stand_in.folder(), "default")
    assert len(partial.finished(doc)) == 1
    assert doc["context"]["gmb_interrupted"] == \
        "SIGINT after 1 of 8 benchmarks (the binary was killed; closed by gmb run)"


def test_resume_runs_only_what_is_missing_and_completes_the_run(stand_in, monkeypatch):
    monkeypatch.setenv("FAKE_STEP", "0.3")
    proc = stand_in.gmb(*run_args(stand_in, "--flavors", "default,ca"))
    wait_for_benchmarks(stand_in, 3)
    proc.send_signal(signal.SIGHUP)
    proc.communicate(timeout=30)
    assert proc.returncode == 128 + signal.SIGHUP
    folder = stand_in.folder()
    kept = set(partial.finished(flavor_doc(folder, "default")))

    monkeypatch.setenv("FAKE_STEP", "0")
    resumed = stand_in.gmb("run", "--resume", str(folder))
    out, err = resumed.communicate(timeout=60)
    assert resumed.returncode == 0, err
    assert out.strip().splitlines()[-1] == str(folder), out + err
    for flavor in ("default", "ca"):
        doc = flavor_doc(folder, flavor)
        assert sorted(partial.names(doc)) == sorted(NAMES)  # each exactly once
        assert partial.INTERRUPTED not in doc["context"]
    calls = stand_in.calls()
    skip_list = next(a for a in calls[-2] if a.startswith("--gmb_skip_list="))
    listed = (stand_in.root / skip_list.split("=", 1)[1]).read_text().split()
    assert set(listed) == kept  # the resume skipped exactly what had finished
    info = json.loads((folder / "run_info.json").read_text())
    assert [p["command"].split()[1:3] for p in info["parts"]] == [["run", "--preset"],
                                                                  ["run", "--resume"]]
    assert info["interrupted"] == ""
    summary = (folder / "summary.md").read_text()
    assert "Interrupted" not in summary
    # Resuming a complete run runs nothing.
    again = stand_in.gmb("run", "--resume", str(folder))
    _, err = again.communicate(timeout=60)
    assert again.returncode == 0, err
    assert len(stand_in.calls()) == len(calls)


def test_resume_refuses_another_gpu_or_build_unless_forced(stand_in, monkeypatch):
    proc = stand_in.gmb(*run_args(stand_in, "--flavors", "default"))
    proc.communicate(timeout=60)
    folder = stand_in.folder()
    for variable, value, what in (("FAKE_UUID", "GPU-2", "GPU"), ("FAKE_SHA", "def", "build")):
        monkeypatch.setenv(variable, value)
        refused = stand_in.gmb("run", "--resume", str(folder))
        _, err = refused.communicate(timeout=60)
        assert refused.returncode == 2
        assert len(err.strip().splitlines()) == 1 and what in err and "--force" in err
        monkeypatch.delenv(variable)
    forced = stand_in.gmb("run", "--resume", str(folder), "--force")
    _, err = forced.communicate(timeout=60)
    assert forced.returncode == 0, err
    taken = stand_in.gmb("run", "--resume", str(folder), "--flavors", "ca")
    _, err = taken.communicate(timeout=60)
    assert taken.returncode == 2 and "leave out --flavors" in err


def test_the_watchdog_ends_a_benchmark_that_never_returns_and_the_run_goes_on(stand_in,
                                                                               monkeypatch):
    monkeypatch.setenv("FAKE_HANG", NAMES[3])
    proc = stand_in.gmb(*run_args(stand_in, "--flavors", "default,ca", "--stall-timeout", "1"))
    out, err = proc.communicate(timeout=120)
    assert proc.returncode == 1
    assert f"{NAMES[3]} stalled" in err
    assert no_stand_in_left(stand_in)
    folder = stand_in.folder()
    for flavor in ("default", "ca"):
        doc = flavor_doc(folder, flavor)
        assert sorted(partial.finished(doc)) == sorted(n for n in NAMES if n != NAMES[3])
        assert doc["context"][partial.STALLED] == f"{NAMES[3]} (no output for 1 s)"
    summary = (folder / "summary.md").read_text()
    assert f"**Stalled** (`default`): {NAMES[3]}" in summary
    info = json.loads((folder / "run_info.json").read_text())
    assert [r["stalled"] for r in info["flavor_runs"]] == [[NAMES[3]], [], [NAMES[3]], []]


def test_a_folder_removed_mid_run_gives_one_line(stand_in, monkeypatch):
    monkeypatch.setenv("FAKE_STEP", "0.3")
    proc = stand_in.gmb(*run_args(stand_in, "--flavors", "default,ca"))
    wait_for_benchmarks(stand_in, 2)
    shutil.rmtree(stand_in.folder())
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 74  # a write fault, as the binary's
    errors = [line for line in err.splitlines() if line.startswith("gmb: error:")]
    assert len(errors) == 1 and "Traceback" not in err, err
    assert "cannot write" in errors[0] and "No such file or directory" in errors[0]


def test_a_full_disk_gives_one_line_naming_the_file(stand_in, monkeypatch):
    """`ulimit -f`: writes past the limit fail (SIGXFSZ ignored), as on a full disk."""
    monkeypatch.setenv("FAKE_STEP", "0")
    monkeypatch.setenv("FAKE_NAMES", ",".join(NAMES * 1))
    script = (f"ulimit -f 8; trap '' XFSZ; exec {sys.executable} "
              f"{stand_in.root.parent / 'gmb_driver.py'} " + " ".join(run_args(stand_in)))
    proc = subprocess.run(["bash", "-c", script], cwd=stand_in.root, capture_output=True,
                          text=True, timeout=120)
    assert proc.returncode == 74
    errors = [line for line in proc.stderr.splitlines() if line.startswith("gmb: error:")]
    assert len(errors) == 1 and "Traceback" not in proc.stderr, proc.stderr
    assert "cannot write" in errors[0] and "default.json" in errors[0], errors[0]
    assert "--resume" in errors[0]
    assert len(stand_in.calls()) == 1  # the next flavors are not tried on a full disk


SMALL_DISK = """set -e
mount -t tmpfs -o size={size} gmb-full {out}
set +e
{python} {driver} {args}
echo $? > {tmp}/status
cp -a {out}/. {tmp}/saved/
"""


def test_a_disk_that_fills_leaves_a_closed_file_and_the_run_resumes(stand_in, monkeypatch,
                                                                     tmp_path):
    """A real full disk: --out on a small tmpfs (a private mount namespace, as root or in a
    user namespace); its folder is copied out, then resumed with room to spare."""
    if not shutil.which("unshare") or subprocess.run(
            ["unshare", "--user", "--map-root-user", "--mount", "true"],
            capture_output=True).returncode != 0:
        pytest.skip("no private mount namespace here (unshare)")
    monkeypatch.setenv("FAKE_STEP", "0")
    monkeypatch.setenv("FAKE_NAMES", ",".join(f"{n}/n:{k}" for k in range(40) for n in NAMES))
    stand_in.results.mkdir()
    (tmp_path / "saved").mkdir()
    script = SMALL_DISK.format(size="200k", out=stand_in.results, python=sys.executable,
                               driver=stand_in.root.parent / "gmb_driver.py", tmp=tmp_path,
                               args=" ".join(run_args(stand_in, "--flavors", "default,ca")))
    proc = subprocess.run(["unshare", "--user", "--map-root-user", "--mount", "sh", "-c",
                           script], cwd=stand_in.root, capture_output=True, text=True,
                          timeout=120)
    assert (tmp_path / "status").read_text().strip() == "74", proc.stderr
    errors = [line for line in proc.stderr.splitlines() if line.startswith("gmb: error:")]
    assert len(errors) == 1 and "Traceback" not in proc.stderr, proc.stderr
    assert "default.json" in errors[0] and "free on its file system" in errors[0], errors[0]
    (folder,) = list((tmp_path / "saved" / "fake-h100").iterdir())
    left = {p.name: p.stat().st_size for p in folder.iterdir()}
    assert all(size > 0 for size in left.values()), left  # nothing empty beside it
    assert not any(name.endswith((".tmp", ".gz")) for name in left), left
    doc = json.loads((folder / "default.json").read_text())  # closed by the binary: parses
    kept = partial.finished(doc)
    assert 0 < len(kept) < 320

    monkeypatch.setenv("FAKE_NAMES", ",".join(f"{n}/n:{k}" for k in range(40) for n in NAMES))
    resumed = stand_in.gmb("run", "--resume", str(folder))
    _, err = resumed.communicate(timeout=120)
    assert resumed.returncode == 0, err
    for flavor in ("default", "ca"):
        assert len(partial.names(flavor_doc(folder, flavor))) == 320


def test_a_killed_gmb_takes_its_binary_with_it_and_the_folder_resumes(stand_in, monkeypatch):
    """SIGKILL (the OOM killer, kill -9): the binary gets SIGTERM from the kernel (the
    parent-death signal), closes its file and ends; --resume completes the folder."""
    monkeypatch.setenv("FAKE_STEP", "0.3")
    proc = stand_in.gmb(*run_args(stand_in, "--flavors", "default,ca"))
    wait_for_benchmarks(stand_in, 2)
    proc.kill()
    proc.communicate(timeout=30)
    deadline = time.monotonic() + 5
    while not no_stand_in_left(stand_in) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert no_stand_in_left(stand_in)
    folder = stand_in.folder()
    doc = json.loads((folder / "default.json").read_text())
    assert doc["context"]["gmb_interrupted"].startswith("SIGTERM after ")

    monkeypatch.setenv("FAKE_STEP", "0")
    resumed = stand_in.gmb("run", "--resume", str(folder))
    _, err = resumed.communicate(timeout=60)
    assert resumed.returncode == 0, err
    for flavor in ("default", "ca"):
        assert sorted(partial.names(flavor_doc(folder, flavor))) == sorted(NAMES)


def test_a_child_whose_gmb_already_died_does_not_start(tmp_path):
    from gmbtools.commands import stopping
    marker = tmp_path / "ran"
    bind = stopping._dies_with(os.getpid() + 999999)  # a parent that is not ours
    proc = subprocess.run(["touch", str(marker)], preexec_fn=bind)
    assert proc.returncode == 128 + signal.SIGTERM and not marker.exists()


def test_a_continuation_left_unmerged_is_never_written_over(tmp_path):
    from gmbtools.commands import flavor_files
    (tmp_path / "default.json").write_text(gbench_text(["a"]) + "\n  ]\n}\n")
    first = flavor_files.continuation(tmp_path, "default")
    assert first.name == "default-continued.json"
    first.write_text(gbench_text(["b"]) + "\n  ]\n}\n")
    second = flavor_files.continuation(tmp_path, "default")
    assert second.name == "default-continued-2.json"
    second.write_text(gbench_text(["c"]) + "\n  ]\n}\n")
    moved = tmp_path / "moved.json"
    first.rename(moved)  # the first one merged: a new one still comes after the second
    assert flavor_files.continuation(tmp_path, "default").name == "default-continued-3.json"
    moved.rename(first)
    (tmp_path / "default-continued-x1.json").write_text("{}")  # not a continuation: left be
    flavor_files.fold_continuations(tmp_path, "default")  # what --resume does first
    doc, _ = partial.read(tmp_path / "default.json")
    assert partial.names(doc) == ["a", "b", "c"]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["default-continued-x1.json",
                                                           "default.json"]


# --- partial.py: a file cut short --------------------------------------------------------------

def gbench_text(names, reps=2, cut_in_last=False):
    entries = []
    for name in names:
        for rep in range(reps):
            entries.append({"name": f"{name}/manual_time", "run_name": f"{name}/manual_time",
                            "run_type": "iteration", "repetitions": reps,
                            "repetition_index": rep, "real_time": 1.0})
        entries.append({"name": f"{name}/manual_time_median", "run_name": f"{name}/manual_time",
                        "run_type": "aggregate", "aggregate_name": "median",
                        "repetitions": reps, "real_time": 1.0})
    if cut_in_last:
        entries = entries[:-2]  # the last benchmark's second repetition and median are missing
    body = ",\n".join("    " + json.dumps(e, indent=2).replace("\n", "\n    ") for e in entries)
    return '{\n  "context": {\n    "gmb_benchmarks": "9"\n  },\n  "benchmarks": [\n' + body


def test_partial_closes_a_cut_file_after_its_last_whole_benchmark(tmp_path):
    path = tmp_path / "default.json"
    path.write_text(gbench_text(["a", "b", "c"], cut_in_last=True) + ',\n    {\n      "na')
    doc, cut = partial.read(path)
    assert cut and partial.names(doc) == ["a", "b"] and partial.finished(doc) == ["a", "b"]
    assert partial.interrupted_text("SIGTERM", doc) == "SIGTERM after 2 of 9 benchmarks"
    path.write_text(gbench_text([]))
    doc, cut = partial.read(path)
    assert cut and doc["benchmarks"] == []
    path.write_text('{\n  "context": {\n    "gmb_')
    with pytest.raises(Exception, match="cut short before"):
        partial.read(path)


def test_partial_merge_restates_the_stop_for_the_whole_file():
    doc = json.loads(gbench_text(["a"]) + "\n  ]\n}\n")
    doc["context"]["gmb_interrupted"] = "SIGTERM after 1 of 9 benchmarks"
    part = json.loads(gbench_text(["b", "c"]) + "\n  ]\n}\n")
    merged = partial.merge(doc, part, adds_up=False)
    assert partial.names(merged) == ["a", "b", "c"]
    assert "gmb_interrupted" not in merged["context"]
    assert merged["context"]["gmb_benchmarks"] == "9"
    part = json.loads(gbench_text(["d"]) + "\n  ]\n}\n")
    part["context"]["gmb_interrupted"] = "SIGINT after 1 of 6 benchmarks"
    merged = partial.merge(merged, part, adds_up=False)
    assert merged["context"]["gmb_interrupted"] == "SIGINT after 4 of 9 benchmarks"


def stop_a_concurrent_node_run(stand_in, monkeypatch, devices):
    """A node run of `devices` (--concurrent) stopped by SIGTERM after two benchmarks."""
    monkeypatch.setenv("FAKE_STEP", "0.3")
    proc = stand_in.gmb(*run_args(stand_in, "--flavors", "default", "--devices", devices,
                                  "--concurrent"))
    wait_for_benchmarks(stand_in, 2, flavor="*/default")
    proc.send_signal(signal.SIGTERM)
    _, err = proc.communicate(timeout=30)
    assert proc.returncode == 128 + signal.SIGTERM, err


def test_a_node_run_stops_every_gpu_and_resumes_gpu_by_gpu(stand_in, monkeypatch):
    stop_a_concurrent_node_run(stand_in, monkeypatch, "0,1")
    assert no_stand_in_left(stand_in)
    folder = stand_in.folder()
    assert (folder / "summary.md").read_text().count("interrupted: SIGTERM after") == 2

    monkeypatch.setenv("FAKE_STEP", "0")
    resumed = stand_in.gmb("run", "--resume", str(folder))
    _, err = resumed.communicate(timeout=60)
    assert resumed.returncode == 0, err
    for gpu in ("gpu0-GPU-1", "gpu1-GPU-1"):
        doc = flavor_doc(folder / gpu, "default")
        assert sorted(partial.names(doc)) == sorted(NAMES)
        devices = {c[1] for c in stand_in.calls() if f"/{gpu}/" in " ".join(c)}
        assert devices == {f"--device={gpu[3]}"}
    assert "interrupted" not in (folder / "summary.md").read_text()


def test_a_stalled_gpu_is_flagged_in_the_node_summary(stand_in, monkeypatch):
    monkeypatch.setenv("FAKE_HANG", NAMES[-1])
    proc = stand_in.gmb(*run_args(stand_in, "--flavors", "default", "--devices", "0",
                                  "--stall-timeout", "1"))
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 1 and f"{NAMES[-1]} stalled" in err
    summary = (stand_in.folder() / "summary.md").read_text()
    assert f"GPU 0 (default): stalled, ended by the watchdog: {NAMES[-1]}" in summary


SLOW_PATTERN_BINARY = """#!{python}
import signal, sys, time
signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
time.sleep(60)
"""


def test_gmb_pattern_passes_a_stop_on_and_exits_128_plus_n(tmp_path):
    fake = tmp_path / "gmembench"
    fake.write_text(SLOW_PATTERN_BINARY.format(python=sys.executable))
    fake.chmod(0o755)
    proc = subprocess.Popen([sys.executable, str(SCRIPTS / "gmb"), "pattern", "i", "--binary",
                             str(fake)], cwd=tmp_path, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, start_new_session=True)
    time.sleep(2)
    proc.send_signal(signal.SIGTERM)
    _, err = proc.communicate(timeout=30)
    assert proc.returncode == 128 + signal.SIGTERM, err
    assert err.strip().splitlines()[-1].startswith("gmb: error: interrupted by SIGTERM")
    left = subprocess.run(["pgrep", "-f", str(fake)], capture_output=True, text=True)
    assert left.stdout.strip() == ""


def test_resume_of_a_file_stopped_during_its_last_benchmark_completes_it(stand_in):
    """A stop during the last benchmark: the binary finishes it and says "8 of 8"."""
    proc = stand_in.gmb(*run_args(stand_in, "--flavors", "default"))
    proc.communicate(timeout=60)
    folder = stand_in.folder()
    doc = flavor_doc(folder, "default")
    doc["context"]["gmb_interrupted"] = "SIGTERM after 8 of 8 benchmarks"
    with gzip.open(folder / "default.json.gz", "wt") as packed:
        json.dump(doc, packed)
    calls = len(stand_in.calls())
    resumed = stand_in.gmb("run", "--resume", str(folder))
    _, err = resumed.communicate(timeout=60)
    assert resumed.returncode == 0, err
    assert len(stand_in.calls()) == calls  # nothing left to run
    assert partial.INTERRUPTED not in flavor_doc(folder, "default")["context"]
    assert "Interrupted" not in (folder / "summary.md").read_text()


@pytest.mark.parametrize("flag", ["--gmb_skip_list=x.txt",
                                  "--benchmark_enable_random_interleaving=true"])
def test_flags_a_stop_or_resume_depends_on_are_refused(stand_in, flag):
    proc = stand_in.gmb(*run_args(stand_in, flag))
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 2 and f"{flag.split('=')[0]} is set by gmb run" in err


def test_resume_of_a_concurrent_node_run_keeps_its_partners(stand_in, monkeypatch):
    """--devices 0,2 pairs GPU 0 with 2 and 2 with 0 (not the binary's own (index + 1) mod
    count): a resume measures the peer family with the same partners."""
    stop_a_concurrent_node_run(stand_in, monkeypatch, "0,2")
    calls = len(stand_in.calls())

    monkeypatch.setenv("FAKE_STEP", "0")
    resumed = stand_in.gmb("run", "--resume", str(stand_in.folder()))
    _, err = resumed.communicate(timeout=60)
    assert resumed.returncode == 0, err
    runs = [c for c in stand_in.calls()[calls:] if any(a.startswith("--benchmark_out=")
                                                       for a in c)]
    partners = {(c[1], next(a for a in c if a.startswith("--gmb_peer_partner="))) for c in runs}
    assert partners == {("--device=0", "--gmb_peer_partner=2"),
                        ("--device=2", "--gmb_peer_partner=0")}


def test_resume_refuses_a_folder_committed_to_git(stand_in):
    proc = stand_in.gmb(*run_args(stand_in, "--flavors", "default"))
    proc.communicate(timeout=60)
    folder = stand_in.folder()
    git = ["git", "-c", "user.name=t", "-c", "user.email=t@t", "-C", str(stand_in.results)]
    for step in (["init", "-q"], ["add", "."], ["commit", "-qm", "results"]):
        subprocess.run([*git, *step], check=True, capture_output=True)
    refused = stand_in.gmb("run", "--resume", str(folder))
    _, err = refused.communicate(timeout=60)
    assert refused.returncode == 2
    assert len(err.strip().splitlines()) == 1 and "committed to git" in err, err
    assert subprocess.run([*git, "status", "--porcelain"], capture_output=True,
                          text=True).stdout == ""
