"""`gmb plot`: draw every figure a results folder has data for, as PNG (and SVG on request).

A figure whose family the run lacks is skipped with a one-line reason; a flavor file that
cannot be read or holds no benchmarks is in `Plotted.unreadable` (for the command's warnings)
and the others are drawn. Only a folder with nothing readable is an error (`GmbError`);
`Plotted.written` empty means no figure applied.
"""

import concurrent.futures
import multiprocessing
import multiprocessing.forkserver
import os
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd

from gmbtools.analysis import frame
from gmbtools.data import results
from gmbtools.data.results import Results
from gmbtools.present import figure_names, figures, plotkit
from gmbtools.present.plotkit import Drawn, Skip

FIGURES_DIR = "figures"


@dataclass(frozen=True)
class FigureSpec:
    stem: str  # file name without extension
    heading: str
    draw: Callable[[pd.DataFrame], Drawn]


# Each figure's function (present/figures); the order and headings are figure_names.FIGURES.
_DRAW = {
    "stride": figures.stride, "offset": figures.offset, "flavors": figures.flavors,
    "reuse": figures.reuse, "readonly": figures.readonly, "paths": figures.paths,
    "aos_soa": figures.aos_soa, "word_ilp": figures.word_ilp,
    "working_set": figures.working_set, "latency": figures.latency,
    "inflight": figures.inflight, "ladder_transpose": figures.transpose_ladder,
    "ladder_reduce": figures.reduce_ladder, "model": figures.model,
    "peer_stride": figures.peer_stride,
}
FIGURES = tuple(FigureSpec(stem, heading, _DRAW[stem]) for stem, heading in figure_names.FIGURES)


@dataclass
class Plotted:
    """What `plot_folder` did: the loaded files, the medians drawn from, and per figure either
    its files, caption and the values it shows, or the reason it was skipped."""

    loaded: dict[str, Results | str | None]
    medians: pd.DataFrame
    written: dict[str, list[Path]] = field(default_factory=dict)
    captions: dict[str, str] = field(default_factory=dict)
    data: dict[str, pd.DataFrame] = field(default_factory=dict)
    skipped: dict[str, str] = field(default_factory=dict)

    @property
    def unreadable(self) -> list[str]:
        """The flavor files that gave nothing, one line each (`results.problems`)."""
        return results.problems(self.loaded)

    def messages(self) -> list[str]:
        """One line per figure written and figure skipped."""
        lines = [f"wrote {paths[0]}" + (" (+ .svg)" if len(paths) > 1 else "")
                 for paths in self.written.values()]
        lines += [f"skipped {stem}: {why}" for stem, why in self.skipped.items()]
        return lines

    def say(self) -> None:
        """Print `messages()` as `gmb: ...` lines on stdout (the warnings are the command's)."""
        for line in self.messages():
            print(f"gmb: {line}", flush=True)


def plot_folder(folder: Path, out: Path | None = None, svg: bool = False) -> Plotted:
    """Draw every figure of FIGURES from folder's default/ca/cg.json into `out`
    (default folder/figures) as PNG, and as SVG too with `svg`."""
    context = start_workers()  # their imports overlap the loading below
    loaded = results.load_folder(folder)
    plotted = Plotted(loaded, frame.readable_medians(folder, loaded))
    return draw(plotted, out if out is not None else folder / FIGURES_DIR, svg, context)


def figure_paths(out: Path, svg: bool) -> list[Path]:
    """Every file `draw` may write into `out`."""
    return [out / f"{spec.stem}.{ext}" for spec in FIGURES
            for ext in ("png", "svg") if ext == "png" or svg]


def draw(plotted: Plotted, out: Path, svg: bool, context: Any) -> Plotted:
    """Every figure of plotted.medians into `out`; fills plotted's written, captions, data
    and skipped, and returns it. `context`: start_workers()'s."""
    out.mkdir(parents=True, exist_ok=True)
    outcomes = _draw_all(context, plotted.medians, out, svg)
    for spec, outcome in zip(FIGURES, outcomes):
        if isinstance(outcome, str):
            plotted.skipped[spec.stem] = outcome
        else:
            plotted.written[spec.stem], plotted.captions[spec.stem], plotted.data[spec.stem] = (
                outcome)
    return plotted


def start_workers() -> Any:
    """Where the figure workers start from, or None to draw in this process. Never fork(): the
    caller may run threads (a node run does), and a forked child can inherit a lock one of them
    holds. A forkserver (or spawn) starts its workers from a clean process; the forkserver
    imports this module once, started now so that it does while the caller loads the data."""
    methods = multiprocessing.get_all_start_methods()
    method = next((m for m in ("forkserver", "spawn") if m in methods), None)
    if method is None or (os.cpu_count() or 1) < 2:
        return None
    context = multiprocessing.get_context(method)
    if method == "forkserver":
        context.set_forkserver_preload([__name__])  # pandas, matplotlib, figures: once
        multiprocessing.forkserver.ensure_running()
    return context


def _draw_all(context: Any, medians: pd.DataFrame, out: Path, svg: bool) -> list:
    """Every figure's outcome, in FIGURES order. Drawing and saving dominate `gmb run`'s
    report: one worker process per figure, each given the frame (pickled) when it starts."""
    workers = min(len(FIGURES), os.cpu_count() or 1)
    if context is not None:
        try:
            with concurrent.futures.ProcessPoolExecutor(workers, mp_context=context,
                                                        initializer=_receive,
                                                        initargs=(medians,)) as pool:
                return list(pool.map(_draw_one, range(len(FIGURES)), [out] * len(FIGURES),
                                     [svg] * len(FIGURES)))
        except concurrent.futures.process.BrokenProcessPool:
            pass  # workers that could not start (e.g. a __main__ read from stdin): draw here
    _receive(medians)
    try:
        return [_draw_one(i, out, svg) for i in range(len(FIGURES))]
    finally:
        _receive(None)


_MEDIANS: pd.DataFrame | None = None  # the frame a figure worker draws from


def _receive(medians: pd.DataFrame | None) -> None:
    global _MEDIANS
    _MEDIANS = medians


def _draw_one(index: int, out: Path, svg: bool):
    """FIGURES[index] drawn and saved: (paths, caption, data), or why it was skipped."""
    spec = FIGURES[index]
    try:
        drawn = spec.draw(_MEDIANS)
    except Skip as why:
        return str(why)
    paths = plotkit.save(drawn.figure, out / spec.stem, svg)
    return paths, drawn.caption, drawn.data
