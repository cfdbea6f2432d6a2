"""How a results folder was produced: build preset, exact commands, exit codes, wall times and
the GPU's health at the start and the end of each flavor (NVML, via the binaries). `gmb run` saves it as `run_info.json` next to the benchmark JSON files so
that `gmb summary` can re-write summary.md later without losing what only the run knew.
"""

import json
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from .errors import GmbError

RUN_INFO_FILE = "run_info.json"


@dataclass(frozen=True)
class FlavorRun:
    """One benchmark binary's run: the exact command line, its exit code and its wall time."""

    flavor: str
    command: str
    exit_code: int
    wall_s: float


@dataclass(frozen=True)
class RunInfo:
    """Everything `gmb run` knows that the JSON files do not. Commands ran from the repo root."""

    gmb_command: str  # the `scripts/gmb run ...` invocation itself
    preset: str
    flavor_runs: list[FlavorRun] = field(default_factory=list)
    # flavor -> the binary's --gmb_health_out document (state at start and end, flagged names)
    health: dict[str, Any] = field(default_factory=dict)
    # Runs from before NVML health: nvidia-smi's readings, kept so old folders still load.
    nvidia_smi_before: list[str] = field(default_factory=list)
    nvidia_smi_after: list[str] = field(default_factory=list)
    # A concurrent node run's second process per flavor: its peer family alone (merged JSON).
    peer_runs: list[FlavorRun] = field(default_factory=list)


def save(info: RunInfo, folder: Path) -> Path:
    path = folder / RUN_INFO_FILE
    path.write_text(json.dumps(asdict(info), indent=2) + "\n", encoding="utf-8")
    return path


def load(folder: Path) -> RunInfo | None:
    """The folder's run info, or None for folders not made by `gmb run` (e.g. copied files)."""
    path = folder / RUN_INFO_FILE
    if not path.exists():
        return None
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        runs = [FlavorRun(**run) for run in data.pop("flavor_runs")]
        peer_runs = [FlavorRun(**run) for run in data.pop("peer_runs", [])]
        return RunInfo(flavor_runs=runs, peer_runs=peer_runs, **data)
    except (OSError, ValueError, TypeError, KeyError, AttributeError) as err:
        raise GmbError(f"{path}: unreadable run record ({err}); remove it to summarise without it")
