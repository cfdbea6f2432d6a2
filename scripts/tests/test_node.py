"""gmb run --devices: choosing the GPUs, and the node's summary on results from real GPUs."""

import gzip
import json
import shutil
from pathlib import Path

import pytest

from gmbtools import node_summary, run
from gmbtools.cli import main
from gmbtools.errors import GmbError

REPO = Path(__file__).resolve().parents[2]
# Four lent H200s, each one's default run, as the four GPUs of one node.
H200_RUNS = ["20261123-091332", "20261123-092452", "20261123-105448", "20261123-121406"]


def test_devices_are_a_list_or_all():
    assert run.resolve_devices("0,2,2", {}) == [0, 2]
    for bad in ("a", "", "-1", "0,x"):
        with pytest.raises(GmbError, match="is not 'all' or a list like 0,2"):
            run.resolve_devices(bad, {})


def test_all_devices_without_nvidia_smi_is_a_one_line_error(tmp_path: Path):
    with pytest.raises(GmbError, match="nvidia-smi not found; name the devices"):
        run.resolve_devices("all", {"PATH": str(tmp_path)})


def test_concurrent_needs_devices(capsys):
    assert main(["run", "--concurrent"]) == 2
    assert "--concurrent needs --devices" in capsys.readouterr().err


def make_node(folder: Path, slow_read: float | None = None) -> Path:
    """A node folder of the four real runs' default files; with `slow_read`, GPU 3's best
    reads are divided by it, as a GPU with a slow memory would show."""
    devices = []
    for index, stamp in enumerate(H200_RUNS):
        source = REPO / "results" / "nvidia-h200" / stamp / "default.json.gz"
        doc = json.loads(gzip.open(source, "rt").read())
        uuid = doc["context"]["gpu_uuid"]
        sub = folder / f"gpu{index}-{uuid}"
        sub.mkdir(parents=True)
        if slow_read and index == 3:
            for b in doc["benchmarks"]:
                if b["name"].startswith("read/") and "bytes_per_second" in b:
                    b["bytes_per_second"] /= slow_read
            (sub / "default.json").write_text(json.dumps(doc))
        else:
            shutil.copy(source, sub / "default.json.gz")
        devices.append(node_summary.NodeDevice(index, uuid, doc["context"]["gpu_name"],
                                               sub.name))
    node_summary.save_node(folder, node_summary.Node("scripts/gmb run --devices all", False,
                                                     devices))
    return folder


def test_node_summary_tabulates_every_gpu_with_median_and_spread(tmp_path: Path, capsys):
    folder = make_node(tmp_path / "node")
    assert main(["summary", str(folder)]) == 0
    text = (folder / "summary.md").read_text()
    assert "4 GPU(s), run one after another" in text
    rows = [line for line in text.splitlines() if line.startswith("| ") and "gpu" in line]
    assert len(rows) == 4
    assert "| median |" in text and "| spread (max / min − 1) |" in text
    assert "## Flags\n\n- none" in text  # four real H200s within 5% of each other


def test_a_gpu_below_the_nodes_median_is_flagged(tmp_path: Path):
    folder = make_node(tmp_path / "node", slow_read=1.1)
    text = (node_summary.write(folder)).read_text()
    flags = text.split("## Flags")[1]
    assert "GPU 3 (default): best read" in flags and "0.909 of the node's median" in flags
    assert flags.count("\n- ") == 1
