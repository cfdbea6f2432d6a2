"""How a results folder was produced: build preset, exact commands, exit codes, wall times and
the GPU's health at the start and the end of each flavor (NVML, via the binaries). `gmb run` saves it as `run_info.json` next to the benchmark JSON files so
that `gmb summary` can re-write summary.md later without losing what only the run knew.
"""

import json
from dataclasses import asdict, dataclass, field
from pathlib import Path

from gmbtools.data.files import write_whole
from typing import Any

from gmbtools.errors import GmbError

RUN_INFO_FILE = "run_info.json"


@dataclass(frozen=True)
class FlavorRun:
    """One benchmark binary's run: the exact command line, its exit code and its wall time;
    how it ended when not by itself (a stop signal, the watchdog) and the longest time its
    file did not grow."""

    flavor: str
    command: str
    exit_code: int
    wall_s: float
    interrupted: str = ""  # the stop signal's name ("SIGTERM") when a stop ended it
    stalled: list[str] = field(default_factory=list)  # the benchmark the watchdog ended
    longest_silence_s: float | None = None


@dataclass(frozen=True)
class Part:
    """One `gmb run` command that wrote into the folder: the run, then each --resume."""

    command: str
    started: str  # ISO time
    gpu_uuid: str
    git_sha: str


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
    # The options --resume repeats (run.RECORDED), and every command that wrote the folder.
    options: dict[str, Any] = field(default_factory=dict)
    parts: list[Part] = field(default_factory=list)
    interrupted: str = ""  # the stop signal's name when the last part was stopped


def save(info: RunInfo, folder: Path) -> Path:
    """Written beside and renamed over the old record: whole at every moment."""
    return write_whole(folder / RUN_INFO_FILE, json.dumps(asdict(info), indent=2) + "\n")


def load(folder: Path) -> RunInfo | None:
    """The folder's run info, or None for folders not made by `gmb run` (e.g. copied files)."""
    path = folder / RUN_INFO_FILE
    if not path.exists():
        return None
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        runs = [FlavorRun(**run) for run in data.pop("flavor_runs")]
        peer_runs = [FlavorRun(**run) for run in data.pop("peer_runs", [])]
        parts = [Part(**part) for part in data.pop("parts", [])]
        return RunInfo(flavor_runs=runs, peer_runs=peer_runs, parts=parts, **data)
    except (OSError, ValueError, TypeError, KeyError, AttributeError) as err:
        raise GmbError(f"{path}: unreadable run record ({err}); remove it to summarise without it")
