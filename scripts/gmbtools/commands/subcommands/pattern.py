"""`gmb pattern`: its options and its handler (commands/pattern.py measures the expressions)."""

import argparse
import shlex
from pathlib import Path

from gmbtools.commands.subcommands.options import (build_and_results_options, non_negative,
                                                   plotting_module, positive)
from gmbtools.data.flavors import FLAVORS


def pattern_arguments(pattern: argparse.ArgumentParser) -> None:
    pattern.add_argument("expressions", nargs="+", metavar="EXPR",
                         help="the element thread i touches, a C++ expression over i lane warp "
                              "tid block k n, e.g. '(i%%32)*32+i/32' (quote it for the shell)")
    pattern.add_argument("--op", choices=("read", "write", "copy", "gather", "scatter"),
                         help="read (default), write, copy, gather (read the pattern, write "
                              "coalesced) or scatter (the reverse)")
    pattern.add_argument("--word", metavar="WORD",
                         help="f32 (default), f64, f32x2, f32x4, or sN: a structure of N bytes")
    pattern.add_argument("--k", type=positive, metavar="K",
                         help="elements per thread (default 1)")
    pattern.add_argument("--block", type=positive, metavar="B",
                         help="threads per block (default 256)")
    size = pattern.add_mutually_exclusive_group()
    size.add_argument("--n", type=positive, metavar="N", help="elements in the array")
    size.add_argument("--bytes", metavar="SIZE", help="bytes in the array, e.g. 1G")
    pattern.add_argument("--threads", type=positive, metavar="T",
                         help="threads to run (default n / K)")
    pattern.add_argument("--flavor", choices=FLAVORS, default="default",
                         help="the build to run (default: default)")
    pattern.add_argument("--device", type=non_negative, default=0, metavar="N",
                         help="CUDA device index, numbered as nvidia-smi does (default 0)")
    pattern.add_argument("--compare", action=argparse.BooleanOptionalAction, default=True,
                         help="also measure the built-ins the patterns may behave like "
                              "(default; --no-compare: only the references)")
    pattern.add_argument("--json", action="store_true",
                         help="print the explanations as JSON instead of text")
    pattern.add_argument("--save", action="store_true",
                         help="write results/<gpu_slug>/<YYYYmmdd-HHMMSS>-pattern/ with the "
                              "JSON, explanation.md and pattern.png")
    pattern.add_argument("--binary", type=Path, metavar="PATH",
                         help="a built gmembench[-ca|-cg] to run instead of building one")
    build_and_results_options(pattern, repetitions=3)


def pattern_handler(args: argparse.Namespace, extra: list[str], argv: list[str]) -> int:
    pattern = plotting_module("commands.pattern")  # its model: numpy and pandas

    # parse_known_args leaves expressions that follow an unknown option in extra.
    expressions = [*args.expressions, *(arg for arg in extra if not arg.startswith("-"))]
    options = pattern.Options(
        expressions=tuple(expressions), op=args.op, word=args.word, k=args.k, block=args.block,
        n=args.n, bytes=args.bytes, threads=args.threads, flavor=args.flavor,
        device=args.device, repetitions=args.repetitions, compare=args.compare, json=args.json,
        save=args.save, binary=args.binary, preset=args.preset, cuda_archs=args.cuda_archs,
        out=args.out,
        passthrough=pattern.check_passthrough([arg for arg in extra if arg.startswith("-")]),
        gmb_command=shlex.join(["scripts/gmb", *argv]))
    return pattern.measure(options)
