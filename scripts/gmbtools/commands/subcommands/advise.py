"""`gmb advise`: its options and its handler (commands/advise.py reads or profiles)."""

import argparse
import shlex
from pathlib import Path

from gmbtools.commands.subcommands.options import non_negative, unrecognized
from gmbtools.errors import GmbError


def advise_arguments(advise: argparse.ArgumentParser) -> None:
    advise.add_argument("report", nargs="?", type=Path, metavar="REPORT",
                        help="an Nsight Compute report (.ncu-rep) with source counters, or "
                             "its source page as CSV (ncu --import REPORT --page source --csv "
                             "--print-source sass); or, after --, an application to profile")
    advise.add_argument("--kernel", metavar="REGEX",
                        help="only the kernels whose names match (also what is profiled)")
    advise.add_argument("--results", type=Path, metavar="DIR",
                        help="a results folder of the same GPU: the GB/s of each matched "
                             "built-in (default: the newest run of that GPU in results/ that "
                             "holds them, else a short run of just them)")
    advise.add_argument("--no-measure", dest="measure", action="store_false",
                        help="without results of the GPU, do not run the built-ins (no GB/s, "
                             "no time with a fix)")
    advise.add_argument("--device", type=non_negative, default=0, metavar="N",
                        help="the GPU of that short run, numbered as nvidia-smi does "
                             "(default 0)")
    advise.add_argument("--keep", type=Path, metavar="FILE",
                        help="with -- APP: where to keep the report (default "
                             "advise-<YYYYmmdd-HHMMSS>.ncu-rep here, never overwritten)")
    advise.add_argument("--json", action="store_true", help="print JSON instead of text")
    advise.add_argument("--save", action="store_true",
                        help="also write results/<gpu_slug>/<YYYYmmdd-HHMMSS>-advise/ with the "
                             "report, advice.md, advice.json and advice.png")
    advise.add_argument("--out", type=Path, metavar="ROOT",
                        help="with --save: the results root (default: the repository's "
                             "results/)")


def advise_handler(args: argparse.Namespace, extra: list[str], argv: list[str]) -> int:
    from gmbtools.commands import advise

    app: tuple[str, ...] = ()
    report = args.report
    if "--" in argv:
        app = tuple(argv[argv.index("--") + 1:])
        report = None
        if not app:
            raise GmbError("nothing after --: give the application to profile and its "
                           "arguments")
        if args.report is not None and args.report != Path(app[0]):
            raise GmbError("give a report or an application after --, not both")
    elif extra:
        raise GmbError(unrecognized(extra), 2)
    if args.keep is not None and not app:
        raise GmbError("--keep names where to keep the report of an application profiled "
                       "after --")
    if args.keep is not None and args.keep.exists():
        raise GmbError(f"{args.keep}: exists; --keep never overwrites a report")
    if args.out is not None and not args.save:
        raise GmbError("--out names where --save writes; add --save")
    return advise.run(advise.Options(report=report, app=app, kernel=args.kernel,
                                     results=args.results, json=args.json, keep=args.keep,
                                     save=args.save, out=args.out, measure=args.measure,
                                     device=args.device,
                                     command=shlex.join(["scripts/gmb", *argv])))
