"""`gmb summary`: summary.md (or a node's) written again."""

import argparse

from gmbtools.commands.subcommands.options import no_extra, partly_read
from gmbtools.errors import GmbError


def summary_handler(args: argparse.Namespace, extra: list[str], argv: list[str]) -> int:
    from gmbtools.present import summary

    no_extra(extra)
    from gmbtools.data import node as node_record
    from gmbtools.present import node_summary

    if node_record.is_node(args.results_dir):
        path, problems = node_summary.write(args.results_dir)
        status = partly_read(problems)
        print(path)
        return status
    written = summary.rewrite(args.results_dir)
    if written.unreadable and not written.readable:  # a page of "unreadable" rows, no numbers
        raise GmbError("; ".join(written.unreadable) + f" (summary written to {written.path})")
    status = partly_read(written.unreadable)
    print(written.path)
    return status
