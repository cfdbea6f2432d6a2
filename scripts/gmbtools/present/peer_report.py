"""matrix.md and matrix.png of a `gmb peers` folder, from its matrix.json."""

from pathlib import Path
from typing import Any

from gmbtools.analysis.peer_table import table


def markdown(doc: dict[str, Any]) -> str:
    indices = [d["index"] for d in doc["devices"]]
    lines = ["# gmembench peer matrix", "",
             f"`{doc['gmb_command']}`: every ordered pair of {len(indices)} GPUs measured alone, "
             "one pair at a time. Rows: the GPU that runs the kernel (or the copy); columns: its "
             "partner. GB/s = 10⁹ B/s of bytes read + written, medians of the repetitions; a "
             "kernel cell is the best of its variants (matrix.json names it). `-`: a GPU is not "
             "its own peer; `failed`: the pair has no numbers (below); `error`: the benchmark "
             "errored; blank: the run had no such benchmark.", "",
             "| GPU | name | uuid |", "|---:|---|---|"]
    lines += [f"| {d['index']} | {d['name']} | {d['uuid']} |" for d in doc["devices"]]
    lines.append("")
    titles = [(m["key"], m["title"], "GB/s", "{:.1f}") for m in doc["measurements"]]
    titles += [(r["key"], f"kernel / copy engine, {r['key'].removeprefix('ratio_')}", "ratio",
                "{:.3f}") for r in doc["ratios"]]
    for key, title, unit, number in titles:
        lines += [f"## {title} ({unit})", "",
                  "| GPU \\ partner | " + " | ".join(map(str, indices)) + " |",
                  "|---:|" + "---:|" * len(indices)]
        for i, row in zip(indices, table(doc, key)):
            shown = [number.format(v) if isinstance(v, float) else (v or "") for v in row]
            lines.append(f"| {i} | " + " | ".join(shown) + " |")
        lines.append("")
    failed = [p for p in doc["pairs"] if p["error"]]
    lines += ["## Pairs", "", "| GPU | partner | exit code | wall time | file | problem |",
              "|---:|---:|---:|---:|---|---|"]
    for p in doc["pairs"]:
        wall = f"{p['wall_s']:.1f} s" if p["wall_s"] is not None else ""
        problem = (p["error"] or "").replace("|", "\\|")
        lines.append(f"| {p['device']} | {p['partner']} | {p['exit_code']} | {wall} | "
                     f"{p['file']} | {problem} |")
    lines += ["", f"{len(failed)} of {len(doc['pairs'])} pairs failed." if failed
              else "Every pair measured.", "", "Commands, run from the repository root:", "",
              "```sh", *(p["command"] for p in doc["pairs"]), "```", ""]
    return "\n".join(lines)


def _figure(folder: Path) -> None:
    """matrix.png where matplotlib is installed; one line where it is not."""
    try:
        from gmbtools.present import peer_figure
    except ImportError as err:
        print(f"gmb: no matrix.png: {err} (python3 -m pip install -r scripts/requirements.txt)",
              flush=True)
        return
    path = peer_figure.draw(folder)
    print(f"gmb: wrote {path}", flush=True)
