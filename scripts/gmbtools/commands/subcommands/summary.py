"""`gmb summary`: summary.md (or a node's) written again."""

import argparse
from pathlib import Path

from gmbtools.commands.repo import refuse_tracked
from gmbtools.commands.subcommands.options import (force_argument, no_extra, partly_read,
                                                   results_dir_argument)
from gmbtools.errors import GmbError


def summary_arguments(summary: argparse.ArgumentParser) -> None:
    results_dir_argument(summary)
    summary.add_argument("--out", type=Path, metavar="DIR",
                         help="write DIR/summary.md instead (the same text; default RESULTS_DIR)")
    force_argument(summary)


def summary_handler(args: argparse.Namespace, extra: list[str], argv: list[str]) -> int:
    from gmbtools.present import summary

    no_extra(extra)
    from gmbtools.data import node as node_record
    from gmbtools.present import node_summary, peer_summary

    out = args.results_dir if args.out is None else args.out
    refuse_tracked([out / summary.SUMMARY_FILE], args.force)
    if peer_summary.is_peer_matrix(args.results_dir):
        print(peer_summary.write(args.results_dir, args.out))
        return 0
    if node_record.is_node(args.results_dir):
        path, problems = node_summary.write(args.results_dir, args.out)
        status = partly_read(problems)
        print(path)
        return status
    written = summary.rewrite(args.results_dir, args.out)
    if written.unreadable and not written.readable:  # a page of "unreadable" rows, no numbers
        raise GmbError("; ".join(written.unreadable) + f" (summary written to {written.path})")
    status = partly_read(written.unreadable)
    print(written.path)
    return status
