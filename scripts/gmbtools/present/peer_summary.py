"""summary.md of a `gmb peers` folder: how the matrix was made (command, GPUs, driver, CUDA,
commit, link) and each pair's exit, time and file, from matrix.json and the pairs' JSON
context. The numbers themselves are matrix.md's."""

import json
from pathlib import Path
from typing import Any

from gmbtools.data.files import write_whole
from gmbtools.data.results import load, read_text
from gmbtools.errors import GmbError

MATRIX_FILE = "matrix.json"
CONTEXT_ROWS = (("NVIDIA driver", "nvidia_driver"), ("CUDA driver API", "driver"),
                ("CUDA runtime", "cuda_runtime"), ("git sha", "git_sha"), ("flavor", "gmb_flavor"),
                ("link", "gpu_peer_link"), ("link rate one way (GB/s)", "gpu_peer_link_gbs"))


def is_peer_matrix(folder: Path) -> bool:
    return (folder / MATRIX_FILE).is_file()


def write(folder: Path, out: Path | None = None) -> Path:
    """summary.md of a peer-matrix folder into `out` (default `folder`)."""
    try:
        doc = json.loads(read_text(folder / MATRIX_FILE))
    except json.JSONDecodeError as err:
        raise GmbError(f"{folder / MATRIX_FILE}: not JSON ({err.msg})") from None
    path = (out or folder) / "summary.md"
    write_whole(path, markdown(doc, context_of(folder, doc)))
    return path


def markdown(doc: dict[str, Any], context: dict[str, Any]) -> str:
    names = sorted({d["name"] for d in doc["devices"]})
    gpus = f"{len(doc['devices'])} × {names[0]}" if len(names) == 1 else \
        f"{len(doc['devices'])} GPUs ({', '.join(names)})"
    lines = ["# gmembench peer matrix: summary", "",
             f"`{doc['gmb_command']}` on {gpus}, {context.get('date', 'date not recorded')}; the "
             "tables are in [matrix.md](matrix.md), the figure is [matrix.png](matrix.png), how "
             "the run was made is in [NOTES.md](NOTES.md).", "", "| | |", "|---|---|"]
    lines += [f"| {label} | {context.get(key, 'not recorded')} |" for label, key in CONTEXT_ROWS]
    uuids = {d["index"]: d["uuid"] for d in doc["devices"]}
    lines += ["", "## Pairs", "", "| GPU | uuid | partner | exit code | wall time | file |",
              "|---:|---|---:|---:|---:|---|"]
    for p in doc["pairs"]:
        wall = f"{p['wall_s']:.1f} s" if p.get("wall_s") is not None else ""
        lines.append(f"| {p['device']} | {uuids.get(p['device'], '')} | {p['partner']} | "
                     f"{p['exit_code']} | {wall} | {p['file']} |")
    lines += [f"- pair ({p['device']}, {p['partner']}): {p['error']}"
              for p in doc["pairs"] if p.get("error")]
    lines += ["", "Commands, run from the repository root:", "", "```sh", doc["gmb_command"],
              *(p["command"] for p in doc["pairs"]), "```", ""]
    return "\n".join(lines)


def context_of(folder: Path, doc: dict[str, Any]) -> dict[str, Any]:
    """The context of the first pair whose file reads ({} where none does)."""
    for p in doc["pairs"]:
        try:
            return load(folder / p["file"]).context
        except (GmbError, KeyError, TypeError):
            continue
    return {}
