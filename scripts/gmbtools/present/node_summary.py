"""The summary of a node run (`gmb run --devices`): every GPU's headline numbers side by side,
per flavor and GPU model the median and spread, and any GPU more than 5% below that median
flagged.

A node folder holds `node.json` (the GPUs, the command and, for a concurrent run of several
GPUs, the wall time of each phase) and a `gpu<index>-<uuid>/` results folder per GPU, each with
its own summary.md. Standard library only, like `gmb run`.
"""

import statistics
from pathlib import Path

from gmbtools.analysis import arch
from gmbtools.analysis.headlines import MEMCPY, MEMSET, headline_picks
from gmbtools.data.flavors import FLAVORS
from gmbtools.data.node import NodeDevice, NodePhase, load_node
from gmbtools.data.results import Results, load_folder, median_by_name, problem

FLAG_BELOW = 0.95  # a GPU this far under its model's median (a node's, a fleet's) is flagged
LABELS = ("best read", "best write", "best copy", MEMCPY, MEMSET)


def headlines(results: Results) -> dict[str, float]:
    """GB/s of the best read, write and copy and of the references in one file."""
    medians = median_by_name(results.records)
    names = {label: name for name, label in headline_picks(medians).items()}
    names |= {MEMCPY: MEMCPY, MEMSET: MEMSET}
    values = {}
    for label, name in names.items():
        m = medians.get(name)
        if m is not None and m.error is None and m.bytes_per_second:
            values[label] = m.bytes_per_second / 1e9
    return values


def write(folder: Path, out: Path | None = None) -> tuple[Path, list[str]]:
    """summary.md of a node folder, from node.json and the GPUs' result files, into `out`
    (default `folder`): the same text either way, its links relative to `folder`; and the files
    that gave nothing (unreadable or without benchmarks), one line each."""
    node = load_node(folder)
    how = "all at once" if node.concurrent else "one after another"
    lines = [
        "# gmembench node summary", "",
        f"{len(node.devices)} GPU(s), run {how}: `{node.gmb_command}`. Each GPU's own summary "
        f"is in its folder; a ⚠ marks a headline more than {100 * (1 - FLAG_BELOW):.0f}% below "
        "the median of the node's GPUs of its model.", "",
    ]
    flagged: list[str] = []
    unread: list[str] = []
    contexts: dict[str, dict] = {}  # for the line on architectures the suite did not measure
    for flavor in FLAVORS:
        table = {}
        for d in node.devices:
            loaded = load_folder(folder / d.folder).get(flavor)
            unread += [why] if (why := problem(loaded)) is not None else []
            if isinstance(loaded, Results):
                table[d] = headlines(loaded)
                contexts[f"{d.folder}/{flavor}"] = loaded.context
                for key, what in (("gmb_stalled", "stalled, ended by the watchdog"),
                                  ("gmb_interrupted", "interrupted")):
                    if loaded.context.get(key):
                        flagged.append(f"GPU {d.index} ({flavor}): {what}: "
                                       f"{loaded.context[key]}")
            elif isinstance(loaded, str):
                flagged.append(f"GPU {d.index} ({flavor}): {loaded}")
        for model in sorted({d.name for d in table}):  # GPUs are compared within a model
            group = {d: v for d, v in table.items() if d.name == model}
            lines += _flavor_table(f"{flavor} · {model}", group, flagged)
    lines[2:2] = arch.facts_lines(contexts)
    lines += _phase_lines(node.phases)
    lines += ["## Flags", ""] + ([f"- {f}" for f in flagged] or ["- none"]) + [""]
    path = (folder if out is None else out) / "summary.md"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("\n".join(lines))
    return path, unread


def _phase_lines(phases: list[NodePhase]) -> list[str]:
    """How long each phase of a concurrent run took; what the peer part added."""
    if not phases:
        return []
    lines = ["## Phases", "",
             "The local families ran on every GPU at once (`--gmb_peer=skip`); then the peer "
             "family ran on one GPU at a time (`--gmb_peer=only`), so no two peer benchmarks "
             "shared a link. Each GPU's JSON holds both parts.", "",
             "| phase | GPUs | wall time |", "|---|---|---:|"]
    lines += [f"| {p.label()} | {', '.join(map(str, p.devices))} | {p.wall_s:.1f} s |"
              for p in phases]
    peer = sum(p.wall_s for p in phases if p.kind == "peer")
    lines += ["", f"The peer part added {peer:.1f} s of wall time.", ""]
    return lines


def _flavor_table(flavor: str, table: dict[NodeDevice, dict[str, float]],
                  flagged: list[str]) -> list[str]:
    medians = {label: statistics.median(v[label] for v in table.values() if label in v)
               for label in LABELS if any(label in v for v in table.values())}
    lines = [f"## {flavor}", "",
             "| GPU | model | folder | " + " | ".join(medians) + " |",
             "|---|---|---|" + "---:|" * len(medians)]
    for d, values in sorted(table.items(), key=lambda item: item[0].index):
        cells = []
        for label, median in medians.items():
            value = values.get(label)
            low = value is not None and value < FLAG_BELOW * median
            if low:
                flagged.append(f"GPU {d.index} ({flavor}): {label} {value:.1f} GB/s, "
                               f"{value / median:.3f} of the median")
            cells.append("" if value is None else f"{value:.1f}" + (" ⚠" if low else ""))
        lines.append(f"| {d.index} | {d.name} | [{d.folder}]({d.folder}/summary.md) | "
                     + " | ".join(cells) + " |")
    lines.append("| median | | | " + " | ".join(f"{m:.1f}" for m in medians.values()) + " |")
    spreads = []
    for label in medians:
        values = [v[label] for v in table.values() if label in v]
        spreads.append(f"{100 * (max(values) / min(values) - 1):.1f}%")
    lines += ["| spread (max / min − 1) | | | " + " | ".join(spreads) + " |", ""]
    return lines
