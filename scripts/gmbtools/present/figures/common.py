"""What several figure modules share: the spread columns every figure's data carries, the
panel grid walked row by row, and the ratio or value written inside a bar."""

from matplotlib.axes import Axes

SPREAD = ["gbs", "gbs_lo", "gbs_hi", "error", "name"]


def _grid(first: list, second: list):
    """(i, a), (j, b) for every pair, row by row."""
    for i, a in enumerate(first):
        for j, b in enumerate(second):
            yield (i, a), (j, b)


def _bar_label(ax: Axes, x: float, gbs: float, text: str, top: float, room: float = 0.25,
               **font) -> None:
    """Text written upwards inside the top of its bar, above a bar shorter than `room` x top."""
    inside = gbs > room * top
    ax.text(x, gbs - top * 0.015 if inside else gbs + top * 0.015, text, rotation=90,
            ha="center", va="top" if inside else "bottom", fontsize=font.pop("fontsize", 7),
            color="white" if inside else "black", **font)
