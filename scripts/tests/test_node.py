"""gmb run --devices: choosing the GPUs, and the node's summary on results from real GPUs."""

import json
import re
from pathlib import Path

import pytest
from conftest import SCREEN_RUNS

from gmbtools.data import node as node_record
from gmbtools.present import node_summary
from gmbtools.commands import binaries
from gmbtools.commands.cli import main
from gmbtools.errors import GmbError

REPO = Path(__file__).resolve().parents[2]
# Four lent H200s as the four GPUs of one node: their default runs cut to the screening
# benchmarks (fixtures/README.md), and an H100.
H200_RUNS, H100_RUN = SCREEN_RUNS[:4], SCREEN_RUNS[4]


def test_devices_are_a_list_or_all():
    assert binaries.resolve_devices("0,2,2", {}) == [0, 2]
    for bad in ("a", "", "-1", "0,x"):
        with pytest.raises(GmbError, match="is not 'all' or a list like 0,2"):
            binaries.resolve_devices(bad, {})


def test_all_devices_without_nvidia_smi_is_a_one_line_error(tmp_path: Path):
    with pytest.raises(GmbError, match="nvidia-smi not found; name the devices"):
        binaries.resolve_devices("all", {"PATH": str(tmp_path)})


def test_concurrent_needs_devices(capsys):
    assert main(["run", "--concurrent"]) == 2
    assert "--concurrent needs --devices" in capsys.readouterr().err


def make_node(folder: Path, slow_read: float | None = None,
              runs: tuple[Path, ...] = tuple(H200_RUNS), facts: str | None = None) -> Path:
    """A node folder of real runs' default files; with `slow_read`, GPU 3's reads are divided
    by it, as a GPU with a slow memory would show; with `facts`, the context's gpu_facts."""
    devices = []
    for index, run in enumerate(runs):
        doc = json.loads((run / "default.json").read_text())
        if facts:
            doc["context"]["gpu_facts"] = facts
        uuid = doc["context"]["gpu_uuid"]
        sub = folder / f"gpu{index}-{uuid}"
        sub.mkdir(parents=True)
        if slow_read and index == 3:
            for b in doc["benchmarks"]:
                if b["name"].startswith("read/") and "bytes_per_second" in b:
                    b["bytes_per_second"] /= slow_read
        (sub / "default.json").write_text(json.dumps(doc))
        devices.append(node_record.NodeDevice(index, uuid, doc["context"]["gpu_name"],
                                               sub.name))
    node_record.save_node(folder, node_record.Node("scripts/gmb run --devices all", False,
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
    text = node_summary.write(folder)[0].read_text()
    flags = text.split("## Flags")[1]
    found = re.search(r"- GPU 3 \(default · NVIDIA H200\): best read [0-9.]+ GB/s, "
                      r"([0-9.]+) of the median", flags)
    assert found and 0.90 <= float(found.group(1)) <= 0.92  # 1/1.1 of its own, against a median
    assert flags.count("\n- ") == 1


def test_gpus_of_different_models_are_compared_within_their_model(tmp_path: Path):
    folder = make_node(tmp_path / "node", runs=(*H200_RUNS, H100_RUN))
    text = node_summary.write(folder)[0].read_text()
    assert "## Flags\n\n- none" in text  # the H100 is not an H200 below the median
    assert text.count("| median |") == 2  # one per model


def test_a_node_of_gpus_the_suite_was_not_measured_on_says_so_first(tmp_path: Path):
    facts = ("Blackwell, sm_100 not measured by gmembench: L1 size and carve-out from the "
             "Blackwell Tuning Guide; the model's DRAM granule is Hopper's (64 B)")
    text = node_summary.write(make_node(tmp_path / "node", facts=facts))[0].read_text()
    assert text.splitlines()[2] == f"> **Unverified on this GPU:** {facts} (see `docs/gpus.md`)."
    measured = node_summary.write(make_node(tmp_path / "other"))[0].read_text()
    assert "Unverified" not in measured
