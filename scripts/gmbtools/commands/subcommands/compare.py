"""`gmb compare`: two runs, or the flavors of one, paired by name."""

import argparse
from pathlib import Path

from gmbtools.commands.repo import refuse_tracked
from gmbtools.commands.subcommands.options import force_argument, no_extra, partly_read
from gmbtools.errors import GmbError


def compare_arguments(compare: argparse.ArgumentParser) -> None:
    compare.add_argument("files", type=Path, nargs="*", metavar="FILE",
                         help="A.json B.json (ratios are B/A)")
    compare.add_argument("--flavors", type=Path, metavar="RESULTS_DIR",
                         help="compare the flavor files of one run instead of two files")
    compare.add_argument("--csv", type=Path, metavar="OUT",
                         help="also write every pair to OUT as CSV (numbers unrounded)")
    compare.add_argument("--md", type=Path, metavar="OUT",
                         help="also write the printed markdown to OUT")
    compare.add_argument("--filter", metavar="REGEX",
                         help="only benchmarks whose name REGEX matches (re.search)")
    compare.add_argument("--all", action="store_true",
                         help="list every pair, not only the flagged ones")
    force_argument(compare)


def compare_handler(args: argparse.Namespace, extra: list[str], argv: list[str]) -> int:
    import re

    from gmbtools.present import compare

    # parse_known_args leaves positionals that follow an option (`A.json --all B.json`) in extra.
    files = [*args.files, *(Path(arg) for arg in extra if not arg.startswith("-"))]
    no_extra([arg for arg in extra if arg.startswith("-")])
    if args.flavors is not None and files:
        raise GmbError("give either two files or --flavors RESULTS_DIR, not both", 2)
    if args.flavors is None and len(files) != 2:
        raise GmbError(f"compare takes two files A.json B.json or --flavors RESULTS_DIR, "
                       f"got {len(files)} file{'' if len(files) == 1 else 's'}", 2)
    refuse_tracked([p for p in (args.csv, args.md) if p], args.force, "another --csv/--md OUT")
    try:
        name_filter = re.compile(args.filter) if args.filter is not None else None
    except re.error as err:
        raise GmbError(f"--filter: not a regular expression ({err})", 2) from None

    for path in files:
        if path.is_dir():
            raise GmbError(f"{path}: is a folder, not a JSON file (--flavors {path} compares "
                           "the flavor files of a results folder)")
    if args.flavors is not None:
        comparisons, preamble, unread = compare.compare_flavors(args.flavors, name_filter)
    else:
        comparisons, preamble, unread = (
            compare.compare_files(files[0], files[1], name_filter), [], [])
    status = partly_read(unread)
    text = compare.markdown(comparisons, preamble, args.all, name_filter)
    if args.csv is not None:
        compare.write_csv(comparisons, args.csv)
    if args.md is not None:
        args.md.write_text(text, encoding="utf-8")
    print(text, end="")
    return status
