"""A fleet folder's files (`gmb fleet submit` makes it): `fleet.json`, the job as submitted,
and per task `<host>/<gpu-uuid>/status.json` (how the task ended) and `screen.json` (its
screening run)."""

import json
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from gmbtools.data.files import write_whole
from gmbtools.errors import GmbError

MANIFEST = "fleet.json"
STATUS = "status.json"
SCREEN_JSON = "screen.json"


@dataclass
class Manifest:
    """fleet.json: the job as submitted; the report's list of expected tasks comes from it."""

    created: str
    nodes: int
    tasks_per_node: int
    tasks: int
    binary: str
    repetitions: int
    task_timeout_s: int
    time_limit: str
    launcher: list[str]
    job_id: str | None = None
    extra: dict[str, Any] = field(default_factory=dict)


def save_manifest(folder: Path, manifest: Manifest) -> None:
    write_json(folder / MANIFEST, asdict(manifest))


def load_manifest(folder: Path) -> Manifest:
    path = folder / MANIFEST
    if not folder.is_dir():
        what = "is a file, not a fleet folder" if folder.exists() else "no such folder"
        raise GmbError(f"{folder}: {what} (gmb fleet submit makes one, with {MANIFEST})")
    if not path.is_file():
        raise GmbError(f"{folder}: not a fleet folder (no {MANIFEST}; gmb fleet submit makes it)")
    try:
        manifest = Manifest(**json.loads(path.read_text()))
    except (json.JSONDecodeError, TypeError) as err:
        raise GmbError(f"{path}: not a fleet manifest ({err})") from None
    counts = (manifest.nodes, manifest.tasks_per_node, manifest.tasks, manifest.repetitions,
              manifest.task_timeout_s)
    if not all(isinstance(n, int) and not isinstance(n, bool) and n > 0 for n in counts) \
            or not isinstance(manifest.binary, str):
        raise GmbError(f"{path}: not a fleet manifest (counts must be positive integers)")
    return manifest


def write_json(path: Path, data: Any) -> None:
    """Whole or not at all: a reader never sees half a file."""
    write_whole(path, json.dumps(data, indent=2) + "\n")
