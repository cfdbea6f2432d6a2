import gzip
import json
import os
import sys
from datetime import datetime
from pathlib import Path

import pytest
from conftest import SYNTHETIC_DEFAULT

from gmbtools.commands import binaries, flavor_files, run, run_options
from gmbtools.errors import GmbError

NOW = datetime(2025, 6, 1, 12, 0, 5)


# --- pure helpers ---------------------------------------------------------------------------

def test_run_dirs_started_in_the_same_second_never_collide(tmp_path):
    first = binaries.make_run_dir(tmp_path, "h100-sxm5-80gb", NOW)
    (first / "default.json").write_text("keep me")
    second = binaries.make_run_dir(tmp_path, "h100-sxm5-80gb", NOW)
    third = binaries.make_run_dir(tmp_path, "h100-sxm5-80gb", NOW)
    assert first == tmp_path / "h100-sxm5-80gb" / "20250601-120005"
    assert second == tmp_path / "h100-sxm5-80gb" / "20250601-120005-2"
    assert third == tmp_path / "h100-sxm5-80gb" / "20250601-120005-3"
    assert (first / "default.json").read_text() == "keep me"
    assert list(second.iterdir()) == [] and list(third.iterdir()) == []


def test_benchmark_command_puts_user_options_last():
    command = binaries.benchmark_command(
        "build/release/gmembench-ca", 1, 7, "results/x/20250601-120005/ca.json",
        ("--benchmark_filter=copy/f32x4", "--gmb_bytes=64M"))
    assert command == [
        "build/release/gmembench-ca",
        "--device=1",
        "--benchmark_repetitions=7",
        "--benchmark_display_aggregates_only=true",
        "--benchmark_out=results/x/20250601-120005/ca.json",
        "--benchmark_out_format=json",
        "--benchmark_filter=copy/f32x4",
        "--gmb_bytes=64M",
    ]


def test_passthrough_accepts_benchmark_and_gmb_options():
    extra = ["--benchmark_filter=copy/f32x4", "--gmb_bytes=64M", "--benchmark_min_time=0.1s"]
    assert run_options.passthrough_args(extra) == tuple(extra)


@pytest.mark.parametrize(
    ("arg", "fragment"),
    [
        ("--bogus", "unrecognized argument '--bogus'"),
        ("copy", "unrecognized argument 'copy'"),
        ("-x", "unrecognized argument '-x'"),
        ("--benchmark_out=x.json", "--benchmark_out is set by gmb run"),
        ("--benchmark_out_format=csv", "--benchmark_out_format is set by gmb run"),
        ("--benchmark_repetitions=3", "use --repetitions N"),
        ("--gmb_info", "--gmb_info is set by gmb run"),
    ],
)
def test_passthrough_rejects(arg, fragment):
    with pytest.raises(GmbError) as caught:
        run_options.passthrough_args(["--benchmark_filter=x", arg])
    assert fragment in str(caught.value) and caught.value.exit_code == 2


def test_parse_flavors():
    assert run_options.parse_flavors("default,ca,cg") == ("default", "ca", "cg")
    assert run_options.parse_flavors(" cg, default,cg ") == ("cg", "default")
    for bad in ("", ",", "default,xx"):
        with pytest.raises(GmbError, match="--flavors"):
            run_options.parse_flavors(bad)


def test_configure_command_takes_the_users_architectures():
    assert binaries.configure_command("release", None) == ["cmake", "--preset", "release"]
    assert binaries.configure_command("sm90", "80;90") == [
        "cmake", "--preset", "sm90", "-DCMAKE_CUDA_ARCHITECTURES=80;90"]


def test_benchmark_command_with_health_file_and_progress():
    command = binaries.benchmark_command("build/release/gmembench", 0, 5, "r/default.json", (),
                                    "r/health-default.json", "default 1/3")
    assert command[-2:] == ["--gmb_health_out=r/health-default.json",
                            "--gmb_progress=default 1/3"]


def test_preset_override():
    assert binaries.choose_preset("debug") == "debug"


# --- the whole run, against a fake repository, cmake, nvidia-smi and binaries ----------------

FAKE_BINARY = """\
#!{python}
import json, os, sys, time
from pathlib import Path
name = Path(sys.argv[0]).name
start = time.time()
with open(os.environ["FAKE_LOG"], "a") as log:
    log.write(json.dumps([name] + sys.argv[1:]) + "\\n")
peer = next((a.split("=", 1)[1] for a in sys.argv if a.startswith("--gmb_peer=")), "all")
device = next(a.split("=", 1)[1] for a in sys.argv if a.startswith("--device="))
# A made-up peer benchmark, except in the build FAKE_NO_PEER names (as if default-flavor only).
peers = [] if name == os.environ.get("FAKE_NO_PEER") else [{{
    "name": "peer/read/f32/ilp:1/manual_time", "run_name": "peer/read/f32/ilp:1/manual_time",
    "run_type": "iteration", "repetitions": 1, "repetition_index": 0, "threads": 1,
    "iterations": 10, "real_time": 1.0, "cpu_time": 0.1, "time_unit": "ms",
    "bytes_per_second": 1e11, "pct_peak": 50.0}}]
if "--gmb_info" in sys.argv:
    if os.environ.get("FAKE_NO_GPU"):
        print("CUDA warning on stderr", file=sys.stderr)
        print("gmembench: error: no CUDA device found (cudaGetDeviceCount: 100)", file=sys.stderr)
        sys.exit(3)
    print(json.dumps({{"gmb_flavor": "default", "gpu_name": "Fake H100", "gpu_slug": "fake-h100",
                      "gpu_ordinal": "0", "gpu_peak_gbs": "3352.32"}}, indent=2))
    sys.exit(0)
doc = json.loads(Path(os.environ["FAKE_FIXTURE"]).read_text())
if "--benchmark_list_tests=true" in sys.argv:
    print("\\n".join(b["run_name"] for b in doc["benchmarks"] + peers
                    if b.get("run_type") != "aggregate"))
    sys.exit(0)
if name == os.environ.get("FAKE_FAIL", "") and peer != "only":
    sys.exit(5)
if peer == "only" and device == os.environ.get("FAKE_PEER_FAIL_DEVICE"):
    sys.exit(6)
out = next(a.split("=", 1)[1] for a in sys.argv if a.startswith("--benchmark_out="))
if peer == "only":
    doc["benchmarks"] = peers
    doc["context"]["gmb_default_flavor_only"] = "2"
else:
    doc["context"]["gmb_default_flavor_only"] = "3"
    doc["benchmarks"] += peers if peer == "all" else []
time.sleep(float(os.environ.get("FAKE_SECONDS", "0")))
with open(os.environ["FAKE_LOG"] + ".times", "a") as log:
    log.write(json.dumps([name, int(device), peer, start, time.time()]) + "\\n")
doc["context"]["gmb_flavor"] = {{"gmembench": "default", "gmembench-ca": "ca",
                                "gmembench-cg": "cg"}}[name]
Path(out).write_text(json.dumps(doc))
health = [a.split("=", 1)[1] for a in sys.argv if a.startswith("--gmb_health_out=")]
if health:
    Path(health[0]).write_text(json.dumps({{"nvml": "on", "start": {{"sm_mhz": "1980"}},
                                           "end": {{"sm_mhz": "1755"}}, "flagged": {{}}}}))
"""

FAKE_TOOL = """\
#!/bin/bash
echo "$(basename "$0") $*" >> "$FAKE_LOG.tools"
if [ "$(basename "$0")" = nvidia-smi ]; then
  [ -n "$FAKE_NO_GPU" ] && exit 9
  if [ "$1" = -L ]; then echo "GPU 0: Fake H100 (UUID: GPU-1234)"; exit 0; fi
  echo "Fake H100, 580.65.06, 1980 MHz, 2619 MHz, 1980 MHz, 2619 MHz, 35, 70.00 W"
fi
exit 0
"""


@pytest.fixture
def fake(tmp_path, monkeypatch):
    """A repository with scripts/setup and prebuilt fake binaries for both presets, and fake
    cmake / nvidia-smi first on PATH. Every call is logged."""
    repo = tmp_path / "repo"
    (repo / "scripts").mkdir(parents=True)
    (repo / "scripts" / "setup").write_text(
        'echo setup >> "$FAKE_LOG.tools"\nexit ${FAKE_SETUP_RC:-0}\n')
    for preset in ("release", "sm90"):
        build = repo / "build" / preset
        build.mkdir(parents=True)
        for binary in ("gmembench", "gmembench-ca", "gmembench-cg"):
            (build / binary).write_text(FAKE_BINARY.format(python=sys.executable))
            (build / binary).chmod(0o755)
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    for tool in ("cmake", "nvidia-smi"):
        (bin_dir / tool).write_text(FAKE_TOOL)
        (bin_dir / tool).chmod(0o755)
    log = tmp_path / "log"
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{os.environ['PATH']}")
    monkeypatch.setenv("FAKE_LOG", str(log))
    monkeypatch.setenv("FAKE_FIXTURE", str(SYNTHETIC_DEFAULT))
    monkeypatch.delenv("CUDA_DEVICE_ORDER", raising=False)
    monkeypatch.delenv("CUDA_VISIBLE_DEVICES", raising=False)

    class Fake:
        root = repo

        @staticmethod
        def binary_calls():
            return [json.loads(line) for line in log.read_text().splitlines()]

        @staticmethod
        def tool_calls():
            return Path(f"{log}.tools").read_text().splitlines()

        @staticmethod
        def intervals():
            """(binary, device, --gmb_peer value, start, end) of every benchmark run."""
            return [tuple(json.loads(line)) for line in Path(f"{log}.times").read_text()
                    .splitlines()]

    return Fake


def test_full_run(fake, capfd):
    options = run_options.Options(device=0, repetitions=3, passthrough=("--benchmark_filter=copy",),
                          gmb_command="scripts/gmb run --repetitions 3 --benchmark_filter=copy")
    folder = run.run(options, repo=fake.root)

    assert folder.parent == fake.root / "results" / "fake-h100"
    assert sorted(p.name for p in folder.iterdir()) == [
        "ca.json.gz", "cg.json.gz", "default.json.gz", "figures", "health-ca.json",
        "health-cg.json", "health-default.json", "report.md", "run_info.json", "summary.md"]
    with gzip.open(folder / "cg.json.gz", "rt") as packed:  # the binary's file, compressed
        assert json.load(packed)["context"]["gmb_flavor"] == "cg"
    # The fixture has coalesced copies and references: the flavors figure applies.
    assert (folder / "figures" / "flavors.png").stat().st_size > 0
    assert "![Load caching" in (folder / "report.md").read_text()
    assert fake.tool_calls() == [
        "setup",
        "nvidia-smi -L",
        "cmake --preset release",
        "cmake --build --preset release --target gmembench gmembench-ca gmembench-cg",
    ]
    rel = folder.relative_to(fake.root)
    calls = fake.binary_calls()
    assert calls[0] == ["gmembench", "--device=0", "--gmb_info"]
    assert calls[1] == ["gmembench", "--device=0", "--benchmark_repetitions=3",
                        "--benchmark_display_aggregates_only=true",
                        f"--benchmark_out={rel}/default.json", "--benchmark_out_format=json",
                        f"--gmb_health_out={rel}/health-default.json",
                        "--benchmark_filter=copy"]
    assert [c[0] for c in calls[2:]] == ["gmembench-ca", "gmembench-cg"]

    summary = (folder / "summary.md").read_text()
    assert "- build preset: `release`" in summary
    assert ("CUDA_DEVICE_ORDER=PCI_BUS_ID build/release/gmembench-cg --device=0 "
            "--benchmark_repetitions=3") in summary
    assert "## Run health" in summary
    assert "## Flavor `cg`" in summary
    assert "| cg | `cg.json.gz` | " in summary
    info = json.loads((folder / "run_info.json").read_text())
    assert info["health"]["cg"]["end"] == {"sm_mhz": "1755"}
    assert [r["exit_code"] for r in info["flavor_runs"]] == [0, 0, 0]
    assert capfd.readouterr().out.rstrip().splitlines()[-1] == str(folder)


def test_failed_flavor_is_reported_and_the_run_goes_on(fake, monkeypatch, capfd):
    monkeypatch.setenv("FAKE_FAIL", "gmembench-ca")
    out = fake.root.parent / "elsewhere"
    with pytest.raises(GmbError) as caught:
        run.run(run_options.Options(flavors=("ca", "cg"), out=out), repo=fake.root)
    folder = next((out / "fake-h100").iterdir())
    assert "ca exited with 5" in str(caught.value) and str(folder) in str(caught.value)
    assert caught.value.exit_code != 0
    assert [c[0] for c in fake.binary_calls()] == ["gmembench-ca", "gmembench-ca", "gmembench-cg"]
    assert "cmake --build --preset release --target gmembench-ca gmembench-cg" in fake.tool_calls()
    summary = (folder / "summary.md").read_text()
    assert "| ca | (none) | no JSON written | 5 |" in summary
    assert "| default | (none) | not run |  |  |" in summary
    # Outside the repository, output paths are recorded absolute.
    assert f"--benchmark_out={folder}/cg.json" in summary
    assert "gmb: flavor ca on GPU 0 failed with exit code 5" in capfd.readouterr().err


def test_no_gpu_builds_then_stops_with_the_binary_message(fake, monkeypatch):
    monkeypatch.setenv("FAKE_NO_GPU", "1")
    with pytest.raises(GmbError) as caught:
        run.run(run_options.Options(), repo=fake.root)
    assert str(caught.value) == "gmembench: error: no CUDA device found (cudaGetDeviceCount: 100)"
    assert caught.value.exit_code == 3
    assert fake.tool_calls() == [
        "setup", "nvidia-smi -L", "cmake --preset sm90",
        "cmake --build --preset sm90 --target gmembench gmembench-ca gmembench-cg"]
    assert not (fake.root / "results").exists()


def test_setup_failure_stops_before_the_build(fake, monkeypatch):
    monkeypatch.setenv("FAKE_SETUP_RC", "7")
    with pytest.raises(GmbError, match="^setup failed") as caught:
        run.run(run_options.Options(), repo=fake.root)
    assert caught.value.exit_code == 7
    assert fake.tool_calls() == ["setup"]


def test_preset_option_skips_detection(fake):
    with pytest.raises(GmbError):  # no such build folder: the binary cannot run
        run.run(run_options.Options(preset="debug"), repo=fake.root)
    assert fake.tool_calls()[:3] == ["setup", "cmake --preset debug",
                                     "cmake --build --preset debug --target gmembench "
                                     "gmembench-ca gmembench-cg"]


# --- node runs: the local families at once, then the peer family GPU by GPU -----------------

def node_run(fake, devices="0,1", concurrent=True, **options):
    return run.run(run_options.Options(devices=devices, concurrent=concurrent,
                               flavors=options.pop("flavors", ("default", "ca")),
                               gmb_command="scripts/gmb run --devices 0,1 --concurrent",
                               **options), repo=fake.root)


def gpu_folders(folder):
    return sorted(p for p in folder.iterdir() if p.is_dir())


def packed_json(path):
    with gzip.open(path, "rt") as file:
        return json.load(file)


def overlap(a, b):
    return a[3] < b[4] and b[3] < a[4]


def test_concurrent_node_runs_peer_benchmarks_alone(fake, monkeypatch):
    monkeypatch.setenv("FAKE_SECONDS", "0.3")
    folder = node_run(fake)

    runs = fake.intervals()
    local = [r for r in runs if r[2] == "skip"]
    peer = [r for r in runs if r[2] == "only"]
    assert sorted((r[0], r[1]) for r in local) == sorted(
        (b, d) for b in ("gmembench", "gmembench-ca") for d in (0, 1))
    assert [(r[0], r[1]) for r in peer] == [("gmembench", 0), ("gmembench-ca", 0),
                                            ("gmembench", 1), ("gmembench-ca", 1)]
    assert overlap(local[0], local[1])  # the GPUs' local families ran at the same time
    for r in peer:  # a peer benchmark never shares the node with another process
        assert not any(overlap(r, other) for other in runs if other is not r)
    assert min(r[3] for r in peer) > max(r[4] for r in local)

    calls = [c for c in fake.binary_calls() if "--gmb_peer=only" in c]
    assert [c[c.index("--gmb_peer=only") + 1] for c in calls] == [
        "--gmb_peer_partner=1", "--gmb_peer_partner=1", "--gmb_peer_partner=0",
        "--gmb_peer_partner=0"]

    for gpu in gpu_folders(folder):
        names = sorted(p.name for p in gpu.iterdir() if "json" in p.name)
        assert names == ["ca.json.gz", "default.json.gz", "health-ca-peer.json",
                         "health-ca.json", "health-default-peer.json", "health-default.json",
                         "run_info.json"]
        doc = packed_json(gpu / "default.json.gz")
        local_names = [b["name"] for b in json.loads(SYNTHETIC_DEFAULT.read_text())["benchmarks"]]
        assert [b["name"] for b in doc["benchmarks"]] == [
            *local_names, "peer/read/f32/ilp:1/manual_time"]
        assert doc["context"]["gmb_default_flavor_only"] == "5"  # 3 local + 2 peer
        info = json.loads((gpu / "run_info.json").read_text())
        assert all("--gmb_peer=skip" in r["command"] for r in info["flavor_runs"])
        assert [r["flavor"] for r in info["peer_runs"]] == ["default", "ca"]
        assert all("--gmb_peer=only" in r["command"] for r in info["peer_runs"])
        assert set(info["health"]) == {"default", "ca", "default-peer", "ca-peer"}
        summary = (gpu / "summary.md").read_text()
        assert "--gmb_peer=skip" in summary and "--gmb_peer=only" in summary

    node = json.loads((folder / "node.json").read_text())
    assert [(p["kind"], p["devices"], p["partner"]) for p in node["phases"]] == [
        ("local", [0, 1], None), ("peer", [0], 1), ("peer", [1], 0)]
    text = (folder / "summary.md").read_text()
    assert "| peer family on GPU 1 (partner GPU 0) | 1 | " in text
    peer_s = sum(p["wall_s"] for p in node["phases"] if p["kind"] == "peer")
    assert f"The peer part added {peer_s:.1f} s of wall time." in text
    assert peer_s >= 4 * 0.3


def test_a_build_without_peer_benchmarks_gets_no_peer_part(fake, monkeypatch, capfd):
    monkeypatch.setenv("FAKE_NO_PEER", "gmembench-ca")  # as a default-flavor-only family
    folder = node_run(fake)
    peer = [r for r in fake.intervals() if r[2] == "only"]
    assert [(r[0], r[1]) for r in peer] == [("gmembench", 0), ("gmembench", 1)]
    assert "gmb: GPU 0, flavor ca: no peer benchmark to run" in capfd.readouterr().out
    for gpu in gpu_folders(folder):
        ca = packed_json(gpu / "ca.json.gz")
        assert not any(b["name"].startswith("peer/") for b in ca["benchmarks"])


def test_a_failed_peer_part_is_reported_and_the_rest_still_runs(fake, monkeypatch):
    monkeypatch.setenv("FAKE_PEER_FAIL_DEVICE", "0")
    with pytest.raises(GmbError) as caught:
        node_run(fake, flavors=("default",))
    assert "GPU 0: the peer part of default exited with 6" in str(caught.value)
    gpu0, gpu1 = gpu_folders(next((fake.root / "results" / "fake-h100").iterdir()))
    assert not any(b["name"].startswith("peer/")
                   for b in packed_json(gpu0 / "default.json.gz")["benchmarks"])
    assert any(b["name"].startswith("peer/")
               for b in packed_json(gpu1 / "default.json.gz")["benchmarks"])
    info = json.loads((gpu0 / "run_info.json").read_text())
    assert [r["exit_code"] for r in info["flavor_runs"] + info["peer_runs"]] == [0, 6]


def test_sequential_and_one_gpu_node_runs_have_no_peer_part(fake):
    for devices, concurrent in (("0,1", False), ("0", True)):
        folder = node_run(fake, devices=devices, concurrent=concurrent, flavors=("default",))
        assert not any(a.startswith(("--gmb_peer", "--benchmark_list_tests"))
                       for c in fake.binary_calls() for a in c)
        assert "phases" not in (folder / "summary.md").read_text().lower()
        assert json.loads((folder / "node.json").read_text())["phases"] == []


def test_a_users_peer_partner_is_kept_and_gmb_peer_refused(fake):
    node_run(fake, flavors=("default",), passthrough=("--gmb_peer_partner=1",))
    calls = [c for c in fake.binary_calls() if "--gmb_peer=only" in c]
    assert [c.count("--gmb_peer_partner=1") for c in calls] == [1, 1]
    assert not any(a == "--gmb_peer_partner=0" for c in calls for a in c)
    with pytest.raises(GmbError, match="--gmb_peer is set by gmb run --concurrent") as caught:
        node_run(fake, passthrough=("--gmb_peer=all",))
    assert caught.value.exit_code == 2


def test_merge_part_keeps_both_files_when_one_is_unreadable(tmp_path):
    into, part = tmp_path / "default.json", tmp_path / "default-peer.json"
    part.write_text(json.dumps({"context": {}, "benchmarks": [{"name": "peer/x"}]}))
    into.write_text("{cut short")
    assert "default.json: cut short" in flavor_files.merge_part(into, part)
    assert part.exists() and into.read_text() == "{cut short"
    into.unlink()
    assert flavor_files.merge_part(into, part) is None  # no local file: the peer part becomes it
    assert json.loads(into.read_text())["benchmarks"] == [{"name": "peer/x"}]
    assert not part.exists()
