"""`gmb load`: JSON files as one table, described or written as CSV."""

import argparse
from pathlib import Path

from gmbtools.commands.repo import refuse_tracked
from gmbtools.commands.subcommands.options import (force_argument, no_extra, partly_read,
                                                   plotting_module)
from gmbtools.errors import GmbError


def load_arguments(load: argparse.ArgumentParser) -> None:
    load.add_argument("files", type=Path, nargs="+", metavar="FILE_OR_RESULTS_DIR")
    load.add_argument("--csv", type=Path, metavar="OUT", help="write the table to OUT as CSV")
    force_argument(load)


def load_handler(args: argparse.Namespace, extra: list[str], argv: list[str]) -> int:
    no_extra(extra)
    refuse_tracked([args.csv] if args.csv else [], args.force, "another --csv OUT")
    frame = plotting_module("analysis.frame")
    from gmbtools.data import results

    loaded: list[results.Results] = []
    problems: list[str] = []  # one line per input that gave nothing
    for path in args.files:
        if path.is_dir():  # a results folder: its flavor files (plain or .gz)
            found = results.load_folder(path)
            if all(value is None for value in found.values()):
                problems.append(results.no_flavor_file(path))
            problems += results.problems(found)
            loaded += results.readable(found).values()
            continue
        try:
            value = results.load(path)
        except GmbError as err:
            problems.append(str(err))
            continue
        why = results.problem(value)
        problems += [why] if why is not None else []
        loaded += [value] if why is None else []
    if not loaded:
        raise GmbError("; ".join(problems))
    status = partly_read(problems)
    table = frame.rows_frame(loaded)
    if args.csv is None:
        print("\n".join(frame.describe(table)))
    else:
        table.to_csv(args.csv, index=False)
        print(args.csv)
    return status
