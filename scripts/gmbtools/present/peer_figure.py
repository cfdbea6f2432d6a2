"""matrix.png of a `gmb peers` folder: a heat map per table of matrix.md (rows: the GPU that
runs the kernel, columns: its partner), GB/s panels on one colour scale, the kernel / copy
engine ratios on their own. Cells without a number are grey and say why."""

import json
import math
import textwrap
from pathlib import Path

import numpy as np
from matplotlib.colors import Normalize

from gmbtools.analysis.peer_table import table
from gmbtools.present import plotkit

COLUMNS = 4


def draw(folder: Path) -> Path:
    """Draw matrix.json of `folder` into folder/matrix.png; return its path."""
    doc = json.loads((folder / "matrix.json").read_text(encoding="utf-8"))
    indices = [d["index"] for d in doc["devices"]]
    panels = [(m["key"], m["title"], "GB/s") for m in doc["measurements"]]
    panels += [(r["key"], f"kernel / copy engine, {r['key'].removeprefix('ratio_')}", "ratio")
               for r in doc["ratios"]]
    grids = {key: table(doc, key) for key, _, _ in panels}
    gbs = [v for key, _, unit in panels if unit == "GB/s" for row in grids[key] for v in row
           if isinstance(v, float)]
    scales = {"GB/s": Normalize(0, max(gbs, default=1.0)), "ratio": Normalize(0, 1.2)}
    side = max(3.2, 0.45 * len(indices) + 1.2)
    rows = math.ceil(len(panels) / COLUMNS)
    body, axes = plotkit.new_figure(rows, COLUMNS, (side, side + 0.4), sharey=False)
    names = ", ".join(sorted({str(d["name"]) for d in doc["devices"]}))
    body.suptitle(f"Peer matrix: {len(indices)} GPUs ({names})\nrow: the GPU that runs the "
                  "kernel or copy · column: its partner · GB/s = 10⁹ B/s read + written",
                  fontsize=11)
    for ax, (key, title, unit) in zip(axes.flat, panels):
        _panel(ax, grids[key], indices, textwrap.fill(f"{title} ({unit})", int(side * 11)),
               unit, scales[unit])
    for ax in list(axes.flat)[len(panels):]:
        ax.set_visible(False)
    plotkit.footnote(body, "Each pair ran alone (gmembench --gmb_peer=only "
                     "--gmb_peer_partner=J); a kernel cell is the best of its variants, named in "
                     "matrix.json. Grey: no number (failed pair, errored benchmark, or none run); "
                     "the diagonal is not a pair.")
    return plotkit.save(body, folder / "matrix")[0]


def _panel(ax, grid, indices, title, unit, scale) -> None:
    values = np.array([[v if isinstance(v, float) else np.nan for v in row] for row in grid])
    ax.imshow(np.ma.masked_invalid(values), cmap="viridis", norm=scale)
    ax.set_facecolor("lightgray")
    ax.set_title(title, fontsize=8.5)
    ax.set_xticks(range(len(indices)), [str(i) for i in indices])
    ax.set_yticks(range(len(indices)), [str(i) for i in indices])
    ax.set_xlabel("partner GPU", fontsize=8)
    ax.set_ylabel("GPU running it", fontsize=8)
    size = 7 if len(indices) <= 4 else 5.5
    for r, row in enumerate(grid):
        for c, v in enumerate(row):
            if isinstance(v, float):
                text = f"{v:.0f}" if unit == "GB/s" else f"{v:.2f}"
                light = scale(v) < 0.6
                ax.text(c, r, text, ha="center", va="center", fontsize=size,
                        color="white" if light else "black")
            else:
                ax.text(c, r, v or "", ha="center", va="center", fontsize=size, color="dimgray")
