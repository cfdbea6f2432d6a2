"""`gmb run` and `gmb peers` compress their JSON (packing.pack): every reader takes the
compressed files as it takes the plain ones, with the same result."""

import gzip
import json
import re
import shutil
from pathlib import Path

from conftest import CACHING_RUN, SCREEN_RUNS

from gmbtools.data import fleet_folder
from gmbtools.data import node as node_record
from gmbtools.present import fleet_report, node_summary
from gmbtools.data import packing
from gmbtools.commands.cli import main


def packed_copy(source: Path, to: Path) -> Path:
    """`source`'s JSON files, each compressed as gmb run leaves them."""
    to.mkdir(parents=True)
    for path in source.glob("*.json"):
        shutil.copy(path, to / path.name)
        if path.name != "run_info.json":
            packing.pack(to / path.name)
    return to


def test_pack_replaces_the_file_with_the_same_bytes_compressed(tmp_path):
    text = json.dumps({"context": {}, "benchmarks": []})
    for name in ("a.json", "b.json"):
        (tmp_path / name).write_text(text)
    a, b = packing.pack(tmp_path / "a.json"), packing.pack(tmp_path / "b.json")
    assert a == tmp_path / "a.json.gz" and not (tmp_path / "a.json").exists()
    with gzip.open(a, "rt") as file:
        assert file.read() == text
    assert a.read_bytes() == b.read_bytes()  # no timestamp or name inside


def test_summary_load_compare_and_report_read_a_packed_run(tmp_path, capsys):
    plain = tmp_path / "plain"
    shutil.copytree(CACHING_RUN, plain)
    packed = packed_copy(CACHING_RUN, tmp_path / "packed")
    assert sorted(p.name for p in packed.iterdir()) == [
        "ca.json.gz", "cg.json.gz", "default.json.gz", "run_info.json"]
    outputs = {}
    for folder in (plain, packed):
        capsys.readouterr()
        assert main(["summary", str(folder)]) == 0
        assert main(["load", str(folder)]) == 0
        assert main(["compare", "--flavors", str(folder), "--all"]) == 0
        outputs[folder] = capsys.readouterr().out.replace(str(folder), "RUN")
    assert outputs[packed] != outputs[plain]  # the file names differ, nothing else
    assert outputs[packed].replace(".json.gz", ".json") == outputs[plain]
    summary = (packed / "summary.md").read_text()
    assert "| default | `default.json.gz` |" in summary
    assert "## Flavor `default` (`default.json.gz`)" in summary  # the file's name, as the table's
    assert summary.replace(".json.gz`", ".json`") == (plain / "summary.md").read_text()
    assert main(["compare", str(packed / "default.json.gz"), str(plain / "cg.json")]) == 0
    assert capsys.readouterr().out.startswith("## cg/default\n")
    assert main(["compare", str(packed / "default.json.gz"), str(plain / "default.json")]) == 0
    assert "default (packed)" in capsys.readouterr().out
    assert main(["report", str(packed)]) == 0
    report = (packed / "report.md").read_text()
    assert re.search(r"!\[.*\]\(figures/\w+\.png\)", report)
    assert "(`default.json.gz`, `ca.json.gz`, `cg.json.gz`)" in report  # the files' own names


def test_node_summary_and_fleet_report_read_packed_files(tmp_path):
    node = tmp_path / "node"
    devices = []
    for index, run in enumerate(SCREEN_RUNS[:2]):
        uuid = json.loads((run / "default.json").read_text())["context"]["gpu_uuid"]
        packed_copy(run, node / f"gpu{index}-{uuid}")
        devices.append(node_record.NodeDevice(index, uuid, "NVIDIA H200", f"gpu{index}-{uuid}"))
    node_record.save_node(node, node_record.Node("scripts/gmb run --devices 0,1", False,
                                                   devices))
    text = node_summary.write(node)[0].read_text()
    assert len([line for line in text.splitlines() if line.startswith("| 0 |")
                or line.startswith("| 1 |")]) == 2

    job = tmp_path / "fleet"
    job.mkdir()
    fleet_folder.save_manifest(job, fleet_folder.Manifest(
        created="2026-11-23T12:00:00", nodes=1, tasks_per_node=1, tasks=1,
        binary="gmembench", repetitions=5, task_timeout_s=180, time_limit="00:15:00",
        launcher=["sbatch"], job_id="1"))
    doc = json.loads((SCREEN_RUNS[0] / "default.json").read_text())
    where = job / "node0" / doc["context"]["gpu_uuid"]
    where.mkdir(parents=True)
    (where / fleet_folder.STATUS).write_text(json.dumps({
        "host": "node0", "rank": 0, "state": "ok", "error": None,
        "gpu_uuid": doc["context"]["gpu_uuid"], "gpu_name": doc["context"]["gpu_name"]}))
    (where / fleet_folder.SCREEN_JSON).write_text(json.dumps(doc))
    packing.pack(where / fleet_folder.SCREEN_JSON)
    _, data = fleet_report.write(job)
    assert not data.problems
