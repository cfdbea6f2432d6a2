"""advice.png of a saved `gmb advise`: per kernel, a bar per access (its share of the kernel's
sectors, coloured by class, the twin's measured GB/s beside it) and, where the profile has the
kernel's time, its measured time beside the coalesced floor and the predicted time with each
group fixed."""

from pathlib import Path

from gmbtools.analysis.advise_match import Advice
from gmbtools.analysis.advise_whatif import KernelWhatIf
from gmbtools.present import plotkit
from gmbtools.present.advise_text import alike, short_name

CLASS_COLORS = {"coalesced": "tab:green", "misaligned": "tab:olive", "strided": "tab:orange",
                "column walk": "tab:red", "own line": "tab:red", "scattered": "tab:purple"}
MAX_KERNELS = 8


def draw(folder: Path, advice: list[Advice], whatifs: list[KernelWhatIf]) -> Path:
    """folder/advice.png; raises ImportError without matplotlib."""
    kernels = list(dict.fromkeys(a.access.kernel for a in advice))[:MAX_KERNELS]
    timed = {w.kernel: w for w in whatifs}
    body, axes = plotkit.new_figure(len(kernels), 2, (6.4, 2.6), sharey=False)
    for row, kernel in enumerate(kernels):
        rows = alike([a for a in advice if a.access.kernel == kernel])
        _shares(axes[row][0], kernel, rows)
        if kernel in timed:
            _times(axes[row][1], timed[kernel])
        else:
            axes[row][1].set_axis_off()
            axes[row][1].text(0.5, 0.5, "no time in this profile", ha="center", va="center")
    body.suptitle("Your kernels' global loads and stores (gmb advise)", fontsize=11)
    plotkit.footnote(body, "Left: each load or store (those of one line that behave alike "
                     "together), its share of the kernel's 32-B sectors between the L2 and the "
                     "SMs, coloured by class; beside it the built-in it behaves like and that "
                     "built-in's median GB/s in the results folder. Right: a launch's measured "
                     "time, the same bytes at the best coalesced kernel of the GPU, and the "
                     "predicted time with each group of accesses fixed (advice.md says how).")
    return plotkit.save(body, folder / "advice")[0]


def _shares(ax, kernel: str, rows: list[list[Advice]]) -> None:
    labels, shares, colors, notes = [], [], [], []
    for same in rows:
        a = same[0]
        op = "load" if a.access.operation == "Load" else "store"
        labels.append(f"{a.access.where} {op}" + (f" x{len(same)}" if len(same) > 1 else ""))
        shares.append(100 * sum(x.share for x in same))
        colors.append(CLASS_COLORS.get(a.kind, "tab:gray"))
        gbs = f", {a.twin_gbs:.0f} GB/s" if a.twin_gbs is not None else ""
        notes.append(f"{a.kind}: {a.twin or '-'}{gbs}")
    ys = range(len(rows))
    ax.barh(ys, shares, color=colors)
    for y, share, note in zip(ys, shares, notes):
        ax.text(share + 1, y, note, va="center", fontsize=7)
    ax.set_yticks(list(ys), labels, fontsize=7)
    ax.invert_yaxis()
    ax.set_xlim(0, 200)  # room for the notes right of the bars
    ax.set_xticks([0, 25, 50, 75, 100])
    ax.set_xlabel("share of the kernel's sectors (%)", fontsize=8)
    ax.set_title(short_name(kernel), fontsize=9)


def _times(ax, w: KernelWhatIf) -> None:
    labels = ["measured"]
    values = [w.time.seconds * 1e3]
    if w.floor_seconds is not None:
        labels.append("coalesced")
        values.append(w.floor_seconds * 1e3)
    for fix in w.fixes:
        labels.append(f"fixed: {fix.label}")
        values.append(fix.seconds * 1e3)
    ys = range(len(values))
    ax.barh(ys, values, color=["tab:blue", "tab:gray"] + ["tab:green"] * (len(values) - 2))
    for y, value in zip(ys, values):
        ax.text(value, y, f" {value:.3f} ms", va="center", fontsize=7)
    ax.set_yticks(list(ys), labels, fontsize=7)
    ax.invert_yaxis()
    ax.set_xlim(0, max(values) * 1.35)
    ax.set_xlabel("time of a launch (ms)", fontsize=8)
