"""`gmb report`: the figures and report.md of a results folder."""

import argparse
from pathlib import Path

from gmbtools.commands.repo import refuse_tracked
from gmbtools.commands.subcommands.options import (force_argument, no_extra, partly_read,
                                                   plotting_module,
                                                   results_dir_argument)


def report_arguments(report: argparse.ArgumentParser) -> None:
    results_dir_argument(report)
    report.add_argument("--out", type=Path, metavar="DIR",
                        help="write DIR/report.md and DIR/figures/ instead (default RESULTS_DIR)")
    report.add_argument("--svg", action="store_true", help="also write each figure as SVG")
    force_argument(report)


def report_handler(args: argparse.Namespace, extra: list[str], argv: list[str]) -> int:
    no_extra(extra)
    report = plotting_module("present.report")
    out = args.results_dir if args.out is None else args.out
    refuse_tracked(report.outputs(out, args.svg), args.force)
    path, plotted = report.write_report(args.results_dir, args.svg, out)
    status = partly_read(plotted.unreadable)
    plotted.say()
    print(path)
    return status
