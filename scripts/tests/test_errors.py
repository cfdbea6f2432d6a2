"""Bad inputs of the analysis commands, run as a user runs them (docs/usage.md, "Exit status"):
each gets one stderr line naming the path or flag at fault and what it is, never a traceback;
a folder read in part gets a warning per file that gave nothing and status 3; a closed pipe
ends the command quietly with status 0."""

import gzip
import json
import os
import shlex
import shutil
import subprocess
import sys

import pytest
from conftest import GMB, H200_RUN, SYNTHETIC_CA, assert_one_line_error, gmb

PARTLY_READ = 3
GOOD = ("default.json", "ca.json")  # H200_RUN's files


def good_run(folder):
    """A copy of H200_RUN (default and ca) in `folder`."""
    folder.mkdir(parents=True, exist_ok=True)
    for name in GOOD:
        shutil.copy(H200_RUN / name, folder / name)
    return folder


def no_benchmarks(path):
    path.write_text(json.dumps({"context": {"gmb_flavor": "cg"}, "benchmarks": []}))
    return path


def assert_one_warning(proc, path, fragment):
    """Status 3, and stderr is exactly one warning line naming `path`."""
    assert proc.returncode == PARTLY_READ, proc.stderr
    assert "Traceback" not in proc.stderr
    lines = proc.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"gmb: warning: {path}: "), proc.stderr
    assert fragment in lines[0]


# --- one folder, one bad file among good ones: the same rule in every command ------------------

FOLDER_COMMANDS = {
    "summary": lambda run, tmp: ["summary", str(run)],
    "load": lambda run, tmp: ["load", str(run)],
    "plot": lambda run, tmp: ["plot", str(run), "--out", str(tmp / "figures")],
    "report": lambda run, tmp: ["report", str(run)],
    "compare": lambda run, tmp: ["compare", "--flavors", str(run)],
}


@pytest.mark.parametrize("command", FOLDER_COMMANDS)
@pytest.mark.parametrize(("bad", "fragment"), [
    ('{"context": {}, "benchmarks": [{"na', "truncated or corrupt JSON"),
    (None, "holds no benchmarks"),
])
def test_a_bad_flavor_file_among_good_ones(tmp_path, command, bad, fragment):
    run = good_run(tmp_path / "run")
    cg = run / "cg.json"
    no_benchmarks(cg) if bad is None else cg.write_text(bad)
    proc = gmb(*FOLDER_COMMANDS[command](run, tmp_path))
    assert_one_warning(proc, cg, fragment)
    assert proc.stdout  # the work was done from default.json and ca.json


@pytest.mark.parametrize("command", FOLDER_COMMANDS)
def test_a_folder_that_lacks_a_flavor_is_read_whole(tmp_path, command):
    run = good_run(tmp_path / "run")  # no cg.json: a run of two flavors, not a problem
    proc = gmb(*FOLDER_COMMANDS[command](run, tmp_path))
    assert proc.returncode == 0 and proc.stderr == "", proc.stderr


@pytest.mark.parametrize("command", FOLDER_COMMANDS)
def test_a_folder_with_no_flavor_file(tmp_path, command):
    empty = tmp_path / "empty"
    empty.mkdir()
    (empty / "notes.txt").write_text("not a flavor file")
    proc = gmb(*FOLDER_COMMANDS[command](empty, tmp_path))
    assert_one_line_error(proc, f"{empty}: no flavor file in this folder (default.json, ca.json")
    assert proc.returncode == 1


@pytest.mark.parametrize("command", FOLDER_COMMANDS)
def test_a_missing_folder(tmp_path, command):
    missing = tmp_path / "missing"
    proc = gmb(*FOLDER_COMMANDS[command](missing, tmp_path))
    assert_one_line_error(proc, f"{missing}: no such ")
    assert proc.returncode == 1


@pytest.mark.parametrize("command", [c for c in FOLDER_COMMANDS if c != "load"])
def test_a_file_where_a_folder_is_wanted(tmp_path, command):
    packed = tmp_path / "default.json.gz"
    packed.write_bytes(gzip.compress((H200_RUN / "default.json").read_bytes()))
    proc = gmb(*FOLDER_COMMANDS[command](packed, tmp_path))
    assert_one_line_error(proc, f"{packed}: is a file, not a results folder")
    assert proc.returncode == 1


def test_every_flavor_file_unreadable(tmp_path):
    (tmp_path / "default.json").write_text("")
    (tmp_path / "ca.json").write_text("[1, 2]")
    proc = gmb("load", str(tmp_path))
    assert_one_line_error(proc, f"{tmp_path / 'default.json'}: file is empty")
    assert f"{tmp_path / 'ca.json'}: not Google Benchmark JSON" in proc.stderr
    assert proc.returncode == 1


# --- files given one by one ---------------------------------------------------------------------

def test_load_of_a_file_with_no_benchmarks(tmp_path):
    empty = no_benchmarks(tmp_path / "empty.json")
    proc = gmb("load", str(empty))
    assert_one_line_error(proc, f"{empty}: holds no benchmarks")
    assert proc.returncode == 1
    proc = gmb("load", str(empty), str(SYNTHETIC_CA))
    assert_one_warning(proc, empty, "holds no benchmarks")
    assert "from 1 file(s)" in proc.stdout


def damaged_gzip(path):
    data = bytearray(gzip.compress((H200_RUN / "default.json").read_bytes()))
    data[200:260] = b"x" * 60
    path.write_bytes(bytes(data))


@pytest.mark.parametrize(("name", "make", "fragment"), [
    ("missing.json", lambda p: None, "no such file or folder"),
    ("empty.json", lambda p: p.write_text(""), "file is empty"),
    ("plain.json.gz", lambda p: p.write_text("{}"), "not a gzip file"),
    ("cut.json.gz", lambda p: p.write_bytes(gzip.compress(b"{}" * 1000)[:-30]), "gzip file cut short"),
    ("damaged.json.gz", damaged_gzip, "corrupt gzip data"),
    ("binary.json", lambda p: p.write_bytes(bytes(range(256))), "not a text file"),
    ("other.json", lambda p: p.write_text('{"kernels": []}'), "not Google Benchmark JSON"),
])
@pytest.mark.parametrize("command", ["load", "compare"])
def test_a_bad_file(tmp_path, command, name, make, fragment):
    path = tmp_path / name
    make(path)
    proc = gmb(*(["load", str(path)] if command == "load"
                 else ["compare", str(SYNTHETIC_CA), str(path)]))
    assert_one_line_error(proc, f"{path}: {fragment}")
    assert proc.returncode == 1


def test_compare_of_a_folder(tmp_path):
    run = good_run(tmp_path / "run")
    proc = gmb("compare", str(run / "default.json"), str(run))
    assert_one_line_error(proc, f"{run}: is a folder, not a JSON file (--flavors {run}")
    assert proc.returncode == 1


@pytest.mark.parametrize(("args", "fragment"), [
    (lambda run, tmp: ["load", str(run), "--csv", str(tmp)], "{tmp}: is a folder, not a file"),
    (lambda run, tmp: ["compare", "--flavors", str(run), "--md", str(tmp)],
     "{tmp}: is a folder, not a file"),
    (lambda run, tmp: ["plot", str(run), "--out", str(run / "ca.json")],
     "{run}/ca.json: exists and is not a folder"),
])
def test_an_output_where_it_cannot_go(tmp_path, args, fragment):
    run = good_run(tmp_path / "run")
    proc = gmb(*args(run, tmp_path))
    assert_one_line_error(proc, fragment.format(run=run, tmp=tmp_path))
    assert proc.returncode == 1


@pytest.mark.parametrize("make", [lambda p: None, lambda p: p.write_text("{}")],
                         ids=["missing", "file"])
def test_fleet_report_of_no_fleet_folder(tmp_path, make):
    path = tmp_path / "fleet"
    make(path)
    proc = gmb("fleet", "report", str(path))
    assert_one_line_error(proc, f"{path}: {'is a file' if path.exists() else 'no such folder'}")
    assert proc.returncode == 1


# --- options -----------------------------------------------------------------------------------

@pytest.mark.parametrize("args", [("--bogus",), ("--bogus", "load", "x"), ("fleet", "--bogus"),
                                  ("load", str(H200_RUN), "--bogus")])
def test_an_unknown_option_is_named(args):
    proc = gmb(*args)
    assert_one_line_error(proc, "unrecognized argument '--bogus'")
    assert proc.returncode == 2


# --- a closed pipe -----------------------------------------------------------------------------

@pytest.mark.parametrize("args", [["load", str(H200_RUN)], ["--help"],
                                  ["compare", "--flavors", str(H200_RUN), "--all"]])
def test_head_ends_the_command_quietly(args):
    """Through a real shell pipe; pipefail makes the pipeline's status gmb's own."""
    command = f"set -o pipefail; {shlex.join([sys.executable, str(GMB), *args])} | head -1"
    proc = subprocess.run(["bash", "-c", command], capture_output=True, text=True)
    assert proc.returncode == 0 and proc.stderr == "", proc.stderr
    assert len(proc.stdout.splitlines()) == 1


@pytest.mark.parametrize("args", [["load", str(H200_RUN)], ["summary", str(H200_RUN)],
                                  ["compare", "--flavors", str(H200_RUN)]])
def test_a_pipe_closed_before_the_first_line(tmp_path, args):
    """Every write fails (the reader is gone before gmb starts): still status 0, no words."""
    if args[0] == "summary":  # it writes summary.md beside the files: use a copy
        args = ["summary", str(good_run(tmp_path / "run"))]
    read, write = os.pipe()
    os.close(read)
    try:
        proc = subprocess.run([sys.executable, str(GMB), *args], stdout=write,
                              stderr=subprocess.PIPE, text=True)
    finally:
        os.close(write)
    assert proc.returncode == 0 and proc.stderr == "", proc.stderr
