"""`gmb run`: its options and its handler (commands/run.py does the run)."""

import argparse
import shlex
from pathlib import Path

from gmbtools.commands import stopping
from gmbtools.commands.subcommands.options import (build_and_results_options, non_negative,
                                                   non_negative_seconds)
from gmbtools.data.flavors import FLAVORS
from gmbtools.errors import GmbError


def run_arguments(run: argparse.ArgumentParser) -> None:
    which = run.add_mutually_exclusive_group()
    which.add_argument("--device", type=non_negative, default=0, metavar="N",
                       help="CUDA device index, numbered as nvidia-smi does (default 0)")
    which.add_argument("--devices", metavar="all|LIST",
                       help="a node run: every GPU (all) or the listed ones (0,2), each into "
                            "gpu<index>-<uuid>/ of one folder, with a summary across them")
    run.add_argument("--concurrent", action="store_true",
                     help="with --devices: run the GPUs' local families all at once, as a "
                          "loaded node runs, then the peer family one GPU at a time")
    run.add_argument("--flavors", default=",".join(FLAVORS), metavar="LIST",
                     help=f"comma-separated flavors to run (default {','.join(FLAVORS)})")
    run.add_argument("--stall-timeout", type=non_negative_seconds, metavar="S",
                     help="end a benchmark binary whose results file has not grown for S "
                          "seconds, name its benchmark as stalled and go on with the next "
                          f"(default {stopping.DEFAULT_STALL_TIMEOUT_S:.0f}, with --resume the "
                          "run's; 0: never)")
    run.add_argument("--resume", type=Path, metavar="DIR",
                     help="run only what the stopped run in DIR (a results or node folder) did "
                          "not finish, with the options it recorded, and write its summary")
    run.add_argument("--force", action="store_true",
                     help="with --resume: resume on another GPU or with another build")
    build_and_results_options(run, repetitions=5)


def run_handler(args: argparse.Namespace, extra: list[str], argv: list[str]) -> int:
    from gmbtools.commands import run, run_options

    if args.resume is not None:
        given = [flag for flag, value in (
            ("--device", args.device != 0), ("--devices", args.devices),
            ("--concurrent", args.concurrent), ("--flavors", args.flavors != ",".join(FLAVORS)),
            ("--repetitions", args.repetitions != 5), ("--preset", args.preset),
            ("--out", args.out), ("--cuda-archs", args.cuda_archs), ("options", extra)) if value]
        if given:
            raise GmbError(f"--resume runs with the options the run recorded; leave out "
                           f"{', '.join(given)}", 2)
    elif args.force:
        raise GmbError("--force goes with --resume", 2)
    options = run_options.Options(
        device=args.device,
        flavors=run_options.parse_flavors(args.flavors),
        repetitions=args.repetitions,
        preset=args.preset,
        out=args.out,
        passthrough=run_options.passthrough_args(extra),
        gmb_command=shlex.join(["scripts/gmb", *argv]),
        cuda_archs=args.cuda_archs,
        devices=args.devices,
        concurrent=args.concurrent,
        stall_timeout=args.stall_timeout if args.stall_timeout is not None or args.resume
        else stopping.DEFAULT_STALL_TIMEOUT_S,
        resume=args.resume,
        force=args.force,
    )
    if args.concurrent and not args.devices:
        raise GmbError("--concurrent needs --devices (all, or a list like 0,1)", 2)
    run.run(options)
    return 0
