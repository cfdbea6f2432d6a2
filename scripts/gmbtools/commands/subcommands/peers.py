"""`gmb peers`: its options and its handler (commands/peers.py measures the pairs)."""

import argparse
import shlex

from gmbtools.commands.subcommands.options import build_and_results_options


def peers_arguments(peers: argparse.ArgumentParser) -> None:
    peers.add_argument("--devices", default="all", metavar="all|LIST",
                       help="every GPU (all, the default) or the listed ones (0,2)")
    build_and_results_options(peers, repetitions=3)


def peers_handler(args: argparse.Namespace, extra: list[str], argv: list[str]) -> int:
    from gmbtools.commands import peers as peer_matrix

    options = peer_matrix.Options(
        devices=args.devices, repetitions=args.repetitions, preset=args.preset, out=args.out,
        passthrough=peer_matrix.check_passthrough(extra),
        gmb_command=shlex.join(["scripts/gmb", *argv]), cuda_archs=args.cuda_archs)
    peer_matrix.measure(options)
    return 0
