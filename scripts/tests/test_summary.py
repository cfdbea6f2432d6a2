import json
import re
import shutil

import pytest
from conftest import ALL_FIXTURES, SYNTHETIC_CA, SYNTHETIC_DEFAULT

from gmbtools.data import results
from gmbtools.errors import GmbError
from gmbtools.data.runinfo import FlavorRun, RunInfo
from gmbtools.present.summary import write_summary


def flavor_section(text, flavor):
    """The part of summary.md about one flavor."""
    start = text.index(f"## Flavor `{flavor}`")
    end = text.find("\n## ", start + 1)
    return text[start:] if end < 0 else text[start:end]


def table_rows(section):
    return [line for line in section.splitlines() if line.startswith("| ")]


@pytest.fixture
def folder(tmp_path):
    shutil.copy(SYNTHETIC_DEFAULT, tmp_path / "default.json")
    shutil.copy(SYNTHETIC_CA, tmp_path / "ca.json")
    return tmp_path


def test_numbers_are_the_medians_of_the_input(folder):
    written = write_summary(folder)
    assert written.path == folder / "summary.md" and written.unreadable == []
    default = flavor_section(written.path.read_text(), "default")
    # Hand-computed from the fixture: medians of 3 repetitions, pct = median / 3352.32 GB/s,
    # cv = sample stddev / mean.
    for row in [
        "| best read | `read/f32x4` | 3020.0 | 90.1 | 0.8 % |",
        "| best write | `write/f32x4` | 2950.0 | 88.0 | 3.5 % |",
        "| best copy | `copy/f32x4/ilp:4/grid:persistent` | 2940.0 | 87.7 | 0.3 % |",
        "| ref/memcpy_d2d | `ref/memcpy_d2d` | 2970.0 | 88.6 | 0.3 % |",
        "| ref/memset | `ref/memset` | 3110.0 | 92.8 | 0.3 % |",
        "| best copy / ref/memcpy_d2d | 0.990 |",  # 2940 / 2970
        "| best read / theoretical peak (3352.3 GB/s, gpu_peak_gbs) | 0.901 |",  # 3020 / 3352.32
        "| best write / ref/memset | 0.949 |",  # 2950 / 3110
    ]:
        assert row in table_rows(default)
    assert "- benchmarks: 10 (7 valid, 3 errored or skipped)" in default
    assert "- largest cv of a bandwidth: 3.5 % (`write/f32x4`)" in default


def test_iteration_only_flavor_and_missing_reference(folder):
    ca = flavor_section(write_summary(folder).path.read_text(), "ca")
    rows = table_rows(ca)
    assert "| best read | `read/f32x4` | 2990.0 | 89.2 | n/a |" in rows
    assert "| ref/memset | (not in this file) | | | |" in rows
    assert "| best copy / ref/memcpy_d2d | 0.993 |" in rows  # 2930 / 2950
    assert "| best write / ref/memset | n/a (no ref/memset in this file) |" in rows
    assert "- largest cv of a bandwidth: n/a (no repetitions)" in ca


def test_errored_benchmarks_are_listed_as_errors_not_numbers(folder):
    default = flavor_section(write_summary(folder).path.read_text(), "default")
    errored = ["copy/f32x4/ilp:8", "copy/f64/ilp:2", "stride/f32/read/s:8"]
    for name in errored:
        assert not any(name in row for row in table_rows(default)), name
    errors = default[default.index("Errored or skipped benchmarks"):]
    assert "- `copy/f32x4/ilp:8`: verification failed: 17 of 268435456" in errors
    assert "(in 1 of 3 repetitions)" in errors
    assert "- `stride/f32/read/s:8`: skipped: stride 8 needs 8 GiB" in errors
    # The partly failed copy's good repetitions (2.99 TB/s) would be the best copy: not shown.
    assert "2990.0" not in default


def test_absent_flavor_is_reported_not_run(folder):
    text = write_summary(folder).path.read_text()
    assert "| cg | (none) | not run |" in text
    assert "## Flavor `cg`" not in text


def test_errored_reference_gives_no_ratio(tmp_path):
    doc = json.loads(SYNTHETIC_DEFAULT.read_text())
    for entry in doc["benchmarks"]:
        if entry["run_name"].startswith("ref/memset/") and entry["run_type"] == "iteration":
            entry.update(error_occurred=True, error_message="memset result wrong")
    (tmp_path / "default.json").write_text(json.dumps(doc))
    default = flavor_section(write_summary(tmp_path).path.read_text(), "default")
    assert "| ref/memset | `ref/memset` | error (see below) | | |" in default
    assert "| best write / ref/memset | n/a (ref/memset errored) |" in default
    assert "- `ref/memset`: memset result wrong" in default


def test_peak_comes_from_the_context(tmp_path):
    doc = json.loads(SYNTHETIC_DEFAULT.read_text())
    doc["context"]["gpu_peak_gbs"] = "4000"
    (tmp_path / "default.json").write_text(json.dumps(doc))
    text = write_summary(tmp_path).path.read_text()
    assert "| best read / theoretical peak (4000.0 GB/s, gpu_peak_gbs) | 0.755 |" in text

    del doc["context"]["gpu_peak_gbs"]
    (tmp_path / "default.json").write_text(json.dumps(doc))
    text = write_summary(tmp_path).path.read_text()
    assert ("| best read / theoretical peak (gpu_peak_gbs) |"
            " n/a (no gpu_peak_gbs in the context) |") in text


def test_context_table(folder):
    text = write_summary(folder).path.read_text()
    assert "| key | default | ca |" in text
    for row in ["| gmb_flavor | default | ca |", "| gpu_peak_gbs | 3352.32 | 3352.32 |",
                "| gmb_array_bytes | 1073741824 | 1073741824 |",
                "| date | 2025-06-01T12:00:00+00:00 | 2025-06-01T12:00:00+00:00 |",
                "| host_name | gpu-node-17 | gpu-node-17 |",
                "| library_build_type | release | release |"]:
        assert row in text
    assert text.startswith("# gmembench summary: NVIDIA H100 80GB HBM3\n")


def test_flavor_mismatch_is_flagged(tmp_path):
    shutil.copy(SYNTHETIC_CA, tmp_path / "cg.json")
    text = write_summary(tmp_path).path.read_text()
    assert "**Warning:** this file's context says gmb_flavor = `ca`." in text


def test_run_record_is_included(folder):
    info = RunInfo(
        gmb_command="scripts/gmb run --benchmark_filter=copy",
        preset="release",
        flavor_runs=[
            FlavorRun("default", "build/release/gmembench --device=0", 0, 61.25),
            FlavorRun("ca", "build/release/gmembench-ca --device=0", 0, 58.0),
            FlavorRun("cg", "build/release/gmembench-cg --device=0", 134, 1.5),
        ],
        nvidia_smi_before=["NVIDIA H100 80GB HBM3, 580.65.06, 1980 MHz, 2619 MHz"],
        nvidia_smi_after=["NVIDIA H100 80GB HBM3, 580.65.06, 1755 MHz, 2619 MHz"],
    )
    text = write_summary(folder, info).path.read_text()
    assert "- command: `scripts/gmb run --benchmark_filter=copy`" in text
    assert "- build preset: `release`" in text
    assert "| default | `default.json` | 10 benchmarks, 3 errored or skipped | 0 | 61.2 s |" in text
    assert "| cg | (none) | no JSON written | 134 | 1.5 s |" in text
    commands = text[text.index("```sh"):text.index("```", text.index("```sh") + 3)]
    assert commands.splitlines()[1:] == [r.command for r in info.flavor_runs]
    assert "- before: `NVIDIA H100 80GB HBM3, 580.65.06, 1980 MHz, 2619 MHz`" in text
    assert "- after: `NVIDIA H100 80GB HBM3, 580.65.06, 1755 MHz, 2619 MHz`" in text


def test_unreadable_flavor_file_is_reported_and_the_rest_summarised(folder):
    (folder / "cg.json").write_text(SYNTHETIC_CA.read_text()[:300])
    written = write_summary(folder)
    assert len(written.unreadable) == 1 and "cg.json: truncated or corrupt" in written.unreadable[0]
    text = written.path.read_text()
    assert re.search(r"\| cg \| `cg.json` \| unreadable: .*cg.json: truncated or corrupt", text)
    assert "## Flavor `default`" in text and "## Flavor `ca`" in text


def test_folder_without_results(tmp_path):
    with pytest.raises(GmbError, match="no flavor file in this folder"):
        write_summary(tmp_path)
    with pytest.raises(GmbError, match="no such folder"):
        write_summary(tmp_path / "missing")


@pytest.mark.parametrize("path", ALL_FIXTURES, ids=lambda p: p.name)
def test_every_fixture_summarises_to_its_best_results(tmp_path, path):
    flavor = json.loads(path.read_text())["context"].get("gmb_flavor", "default")
    shutil.copy(path, tmp_path / f"{flavor}.json")
    section = flavor_section(write_summary(tmp_path).path.read_text(), flavor)
    medians = results.median_by_name(results.load(path).records).values()
    for family in ("read", "write", "copy"):
        valid = [m for m in medians if m.family == family and m.error is None]
        if valid:
            best = max(valid, key=lambda m: m.bytes_per_second)
            gbs = f"{best.bytes_per_second / 1e9:.1f}"
            assert f"| best {family} | `{best.name}` | {gbs} |" in section


def test_run_health_marks_affected_benchmarks(tmp_path):
    from conftest import iteration, write_gb

    context = {"date": "2026-01-01", "gmb_flavor": "default", "gpu_peak_gbs": "4814.3",
               "health_nvml": "on", "health_start_sm_mhz": "1980",
               "health_start_other_pids": "4242"}
    write_gb(tmp_path / "default.json", [
        iteration("copy/f32x4/ilp:1/grid:full", 2.7e12, 0, health_flags=1),
        iteration("copy/f32x4/ilp:1/grid:full", 1.6e12, 1, health_flags=0),
        iteration("ref/memcpy_d2d", 2.8e12, 0, health_flags=0),
    ], context)
    text = write_summary(tmp_path).path.read_text()
    assert "- default: watched through NVML, **1 benchmark(s) affected**" in text
    assert "- `copy/f32x4/ilp:1/grid:full`: another process on the GPU" in text
    assert "`copy/f32x4/ilp:1/grid:full` ⚠ another process on the GPU" in text
    assert "`ref/memcpy_d2d` ⚠" not in text
    assert "other processes: 4242" in text


def test_quiet_run_and_runs_without_health(tmp_path):
    from conftest import iteration, write_gb

    write_gb(tmp_path / "default.json", [iteration("ref/memset", 4.5e12, 0, health_flags=0)],
             {"date": "2026-01-01", "gmb_flavor": "default", "health_nvml": "on"})
    write_gb(tmp_path / "ca.json", [iteration("ref/memset", 4.5e12)],
             {"date": "2026-01-01", "gmb_flavor": "ca"})
    text = write_summary(tmp_path).path.read_text()
    assert "- default: watched through NVML, no benchmark affected" in text
    assert "- ca: not recorded" in text
    assert "⚠" not in text


def test_debug_google_benchmark_is_explained(tmp_path):
    from conftest import iteration, write_gb

    write_gb(tmp_path / "default.json", [iteration("ref/memset", 4.5e12)],
             {"date": "2026-01-01", "gmb_flavor": "default", "library_build_type": "debug"})
    text = write_summary(tmp_path).path.read_text()
    assert "does not apply here, every time is a CUDA-event time" in text
    write_gb(tmp_path / "default.json", [iteration("ref/memset", 4.5e12)],
             {"date": "2026-01-01", "gmb_flavor": "default", "library_build_type": "release"})
    assert "CUDA-event time" not in write_summary(tmp_path).path.read_text()


def test_the_largest_cv_leaves_latency_families_out(tmp_path):
    from conftest import iteration, write_gb

    # A chase's bytes per second swing with its latency (12% cv); it is no bandwidth.
    write_gb(tmp_path / "default.json", [
        iteration("ref/memset", 4.50e12, 0), iteration("ref/memset", 4.52e12, 1),
        iteration("latency/loaded/load:read/sms:64", 1.0e7, 0, latency_ns=400.0),
        iteration("latency/loaded/load:read/sms:64", 1.3e7, 1, latency_ns=500.0),
        iteration("tlb/chase/step:4096/span:2097152", 1.0e7, 0, latency_ns=145.0),
        iteration("tlb/chase/step:4096/span:2097152", 1.2e7, 1, latency_ns=146.0),
    ], {"date": "2026-01-01", "gmb_flavor": "default"})
    default = flavor_section(write_summary(tmp_path).path.read_text(), "default")
    assert "- largest cv of a bandwidth: 0.3 % (`ref/memset`)" in default


def test_a_folder_not_made_by_gmb_run_points_to_its_notes(folder):
    assert "Build preset and commands: (not recorded)" in write_summary(folder).path.read_text()
    (folder / "NOTES.md").write_text("# How this folder was made\n")
    text = write_summary(folder).path.read_text()
    assert "Build preset and commands: not recorded by `gmb run`; see [NOTES.md](NOTES.md)." \
        in text
