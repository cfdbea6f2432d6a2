"""`gmb summary`: summary.md (or a node's) written again."""

import argparse

from gmbtools.commands.subcommands.options import no_extra
from gmbtools.errors import GmbError


def summary_handler(args: argparse.Namespace, extra: list[str], argv: list[str]) -> int:
    from gmbtools.present import summary

    no_extra(extra)
    from gmbtools.data import node as node_record
    from gmbtools.present import node_summary

    if node_record.is_node(args.results_dir):
        print(node_summary.write(args.results_dir))
        return 0
    written = summary.rewrite(args.results_dir)
    print(written.path)
    if written.unreadable:
        raise GmbError("; ".join(written.unreadable) + f" (summary written to {written.path})")
    return 0
