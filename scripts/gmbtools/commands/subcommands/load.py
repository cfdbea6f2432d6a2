"""`gmb load`: JSON files as one table, described or written as CSV."""

import argparse
import sys
from pathlib import Path

from gmbtools.commands.repo import refuse_tracked
from gmbtools.commands.subcommands.options import force_argument, no_extra, plotting_module
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

    loaded = []
    for path in args.files:
        if path.is_dir():  # a results folder: its flavor files (plain or .gz)
            for value in results.load_folder(path).values():
                if isinstance(value, str):
                    print(f"gmb: warning: {value}", file=sys.stderr)
                elif value is not None:
                    loaded.append(value)
            continue
        try:
            loaded.append(results.load(path))
        except GmbError as err:
            if len(args.files) == 1:
                raise
            print(f"gmb: warning: {err}", file=sys.stderr)
    if not loaded:
        raise GmbError("none of the files could be read")
    table = frame.rows_frame(loaded)
    if args.csv is None:
        print("\n".join(frame.describe(table)))
    else:
        table.to_csv(args.csv, index=False)
        print(args.csv)
    return 0
