import shutil
import subprocess

import pytest
from conftest import GMB, SYNTHETIC_CA, SYNTHETIC_DEFAULT, assert_one_line_error, gmb


def test_summary_of_a_missing_folder():
    # Run as a user would: the executable script itself, found through its shebang.
    proc = subprocess.run([str(GMB), "summary", "/nonexistent"], capture_output=True, text=True)
    assert_one_line_error(proc, "/nonexistent: no such folder")
    assert proc.returncode == 1


def test_summary_of_a_truncated_file(tmp_path):
    (tmp_path / "default.json").write_text(SYNTHETIC_DEFAULT.read_text()[:1000])
    proc = gmb("summary", str(tmp_path))
    assert_one_line_error(proc, "default.json: truncated or corrupt JSON")
    assert "summary written to" in proc.stderr
    assert "unreadable:" in (tmp_path / "summary.md").read_text()


def test_summary_writes_and_prints_its_path(tmp_path):
    shutil.copy(SYNTHETIC_CA, tmp_path / "ca.json")
    proc = gmb("summary", str(tmp_path))
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == str(tmp_path / "summary.md")
    assert "| best read | `read/f32x4` | 2990.0 |" in (tmp_path / "summary.md").read_text()


@pytest.mark.parametrize(
    ("args", "fragment"),
    [
        ((), "required: COMMAND"),
        (("frob",), "invalid choice: 'frob'"),
        (("summary",), "required: RESULTS_DIR"),
        (("summary", "/tmp", "--benchmark_filter=x"),
         "unrecognized argument '--benchmark_filter=x'"),
        # Rejected before anything runs (no setup, no build).
        (("run", "--bogus"), "unrecognized argument '--bogus'"),
        (("run", "--dev", "1"), "unrecognized argument '--dev'"),  # no abbreviations
        (("run", "--device", "-1"), "--device: must be at least 0"),
        (("run", "--repetitions", "x"), "--repetitions: expected an integer"),
        (("run", "--flavors", "ca,xx"), "unknown flavor xx"),
        (("run", "--benchmark_out=x.json"), "--benchmark_out is set by gmb run"),
    ],
)
def test_usage_errors_are_one_line(args, fragment):
    proc = gmb(*args)
    assert_one_line_error(proc, fragment)
    assert proc.returncode == 2


def test_help_lists_the_subcommands():
    proc = gmb("--help")
    assert proc.returncode == 0 and "run" in proc.stdout and "summary" in proc.stdout


def test_load_takes_a_results_folder_with_compressed_files(tmp_path):
    import gzip
    import shutil

    from conftest import SYNTHETIC_CA, SYNTHETIC_DEFAULT, gmb

    shutil.copy(SYNTHETIC_DEFAULT, tmp_path / "default.json")
    (tmp_path / "ca.json.gz").write_bytes(gzip.compress(SYNTHETIC_CA.read_bytes()))
    (tmp_path / "run_info.json").write_text("{}")
    proc = gmb("load", str(tmp_path), "--csv", str(tmp_path / "all.csv"))
    assert proc.returncode == 0, proc.stderr
    assert "warning" not in proc.stderr
    text = (tmp_path / "all.csv").read_text()
    assert ",default," in text and ",ca," in text
