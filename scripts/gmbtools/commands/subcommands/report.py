"""`gmb report`: the figures and report.md of a results folder."""

import argparse

from gmbtools.commands.subcommands.options import (no_extra, partly_read, plotting_module,
                                                   results_dir_argument)


def report_arguments(report: argparse.ArgumentParser) -> None:
    results_dir_argument(report)
    report.add_argument("--svg", action="store_true", help="also write each figure as SVG")


def report_handler(args: argparse.Namespace, extra: list[str], argv: list[str]) -> int:
    no_extra(extra)
    path, plotted = plotting_module("present.report").write_report(args.results_dir, args.svg)
    status = partly_read(plotted.unreadable)
    plotted.say()
    print(path)
    return status
