"""`gmb plot`: the figures of a results folder."""

import argparse
from pathlib import Path

from gmbtools.commands.repo import refuse_tracked
from gmbtools.commands.subcommands.options import (force_argument, no_extra, partly_read,
                                                   plotting_module,
                                                   results_dir_argument)
from gmbtools.errors import GmbError


def plot_arguments(plot: argparse.ArgumentParser) -> None:
    results_dir_argument(plot)
    plot.add_argument("--out", type=Path, metavar="DIR",
                      help="where to write the figures (default RESULTS_DIR/figures)")
    plot.add_argument("--svg", action="store_true", help="also write each figure as SVG")
    force_argument(plot)


def plot_handler(args: argparse.Namespace, extra: list[str], argv: list[str]) -> int:
    no_extra(extra)
    plot = plotting_module("present.plot")
    out = args.results_dir / plot.FIGURES_DIR if args.out is None else args.out
    refuse_tracked(plot.figure_paths(out, args.svg), args.force)
    plotted = plot.plot_folder(args.results_dir, out, args.svg)
    status = partly_read(plotted.unreadable)
    plotted.say()
    if not plotted.written:
        raise GmbError(f"{args.results_dir}: no figure could be drawn from this run")
    return status
