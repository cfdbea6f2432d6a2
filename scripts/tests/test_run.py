import json
import os
import sys
from datetime import datetime
from pathlib import Path

import pytest
from conftest import SYNTHETIC_DEFAULT

from gmbtools import run
from gmbtools.errors import GmbError

NOW = datetime(2025, 6, 1, 12, 0, 5)


# --- pure helpers ---------------------------------------------------------------------------

def test_run_dirs_started_in_the_same_second_never_collide(tmp_path):
    first = run.make_run_dir(tmp_path, "h100-sxm5-80gb", NOW)
    (first / "default.json").write_text("keep me")
    second = run.make_run_dir(tmp_path, "h100-sxm5-80gb", NOW)
    third = run.make_run_dir(tmp_path, "h100-sxm5-80gb", NOW)
    assert first == tmp_path / "h100-sxm5-80gb" / "20250601-120005"
    assert second == tmp_path / "h100-sxm5-80gb" / "20250601-120005-2"
    assert third == tmp_path / "h100-sxm5-80gb" / "20250601-120005-3"
    assert (first / "default.json").read_text() == "keep me"
    assert list(second.iterdir()) == [] and list(third.iterdir()) == []


def test_benchmark_command_puts_user_options_last():
    command = run.benchmark_command(
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
    assert run.passthrough_args(extra) == tuple(extra)


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
        run.passthrough_args(["--benchmark_filter=x", arg])
    assert fragment in str(caught.value) and caught.value.exit_code == 2


def test_parse_flavors():
    assert run.parse_flavors("default,ca,cg") == ("default", "ca", "cg")
    assert run.parse_flavors(" cg, default,cg ") == ("cg", "default")
    for bad in ("", ",", "default,xx"):
        with pytest.raises(GmbError, match="--flavors"):
            run.parse_flavors(bad)


def test_configure_command_takes_the_users_architectures():
    assert run.configure_command("release", None) == ["cmake", "--preset", "release"]
    assert run.configure_command("sm90", "80;90") == [
        "cmake", "--preset", "sm90", "-DCMAKE_CUDA_ARCHITECTURES=80;90"]


def test_benchmark_command_with_health_file_and_progress():
    command = run.benchmark_command("build/release/gmembench", 0, 5, "r/default.json", (),
                                    "r/health-default.json", "default 1/3")
    assert command[-2:] == ["--gmb_health_out=r/health-default.json",
                            "--gmb_progress=default 1/3"]


def test_preset_override():
    assert run.choose_preset("debug") == "debug"


# --- the whole run, against a fake repository, cmake, nvidia-smi and binaries ----------------

FAKE_BINARY = """\
#!{python}
import json, os, sys
from pathlib import Path
name = Path(sys.argv[0]).name
with open(os.environ["FAKE_LOG"], "a") as log:
    log.write(json.dumps([name] + sys.argv[1:]) + "\\n")
if "--gmb_info" in sys.argv:
    if os.environ.get("FAKE_NO_GPU"):
        print("CUDA warning on stderr", file=sys.stderr)
        print("gmembench: error: no CUDA device found (cudaGetDeviceCount: 100)", file=sys.stderr)
        sys.exit(3)
    print(json.dumps({{"gmb_flavor": "default", "gpu_name": "Fake H100", "gpu_slug": "fake-h100",
                      "gpu_ordinal": "0", "gpu_peak_gbs": "3352.32"}}, indent=2))
    sys.exit(0)
if name == os.environ.get("FAKE_FAIL", ""):
    sys.exit(5)
out = next(a.split("=", 1)[1] for a in sys.argv if a.startswith("--benchmark_out="))
doc = json.loads(Path(os.environ["FAKE_FIXTURE"]).read_text())
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

    return Fake


def test_full_run(fake, capfd):
    options = run.Options(device=0, repetitions=3, passthrough=("--benchmark_filter=copy",),
                          gmb_command="scripts/gmb run --repetitions 3 --benchmark_filter=copy")
    folder = run.run(options, repo=fake.root)

    assert folder.parent == fake.root / "results" / "fake-h100"
    assert sorted(p.name for p in folder.iterdir()) == [
        "ca.json", "cg.json", "default.json", "figures", "health-ca.json", "health-cg.json",
        "health-default.json", "report.md", "run_info.json", "summary.md"]
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
    info = json.loads((folder / "run_info.json").read_text())
    assert info["health"]["cg"]["end"] == {"sm_mhz": "1755"}
    assert [r["exit_code"] for r in info["flavor_runs"]] == [0, 0, 0]
    assert capfd.readouterr().out.rstrip().splitlines()[-1] == str(folder)


def test_failed_flavor_is_reported_and_the_run_goes_on(fake, monkeypatch, capfd):
    monkeypatch.setenv("FAKE_FAIL", "gmembench-ca")
    out = fake.root.parent / "elsewhere"
    with pytest.raises(GmbError) as caught:
        run.run(run.Options(flavors=("ca", "cg"), out=out), repo=fake.root)
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
        run.run(run.Options(), repo=fake.root)
    assert str(caught.value) == "gmembench: error: no CUDA device found (cudaGetDeviceCount: 100)"
    assert caught.value.exit_code == 3
    assert fake.tool_calls() == [
        "setup", "nvidia-smi -L", "cmake --preset sm90",
        "cmake --build --preset sm90 --target gmembench gmembench-ca gmembench-cg"]
    assert not (fake.root / "results").exists()


def test_setup_failure_stops_before_the_build(fake, monkeypatch):
    monkeypatch.setenv("FAKE_SETUP_RC", "7")
    with pytest.raises(GmbError, match="^setup failed") as caught:
        run.run(run.Options(), repo=fake.root)
    assert caught.value.exit_code == 7
    assert fake.tool_calls() == ["setup"]


def test_preset_option_skips_detection(fake):
    with pytest.raises(GmbError):  # no such build folder: the binary cannot run
        run.run(run.Options(preset="debug"), repo=fake.root)
    assert fake.tool_calls()[:3] == ["setup", "cmake --preset debug",
                                     "cmake --build --preset debug --target gmembench "
                                     "gmembench-ca gmembench-cg"]
