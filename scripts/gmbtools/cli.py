"""The `gmb` command line: one argparse parser with a subcommand per job.

Every error a user can cause ends as one `gmb: error: ...` line on stderr and a non-zero exit
status, argparse's own usage errors included. Subcommands import what they need, so `gmb run`
and `gmb summary` work with the standard library alone.
"""

import argparse
import shlex
import sys
from pathlib import Path

from .errors import GmbError
from .flavors import FLAVORS


class _Parser(argparse.ArgumentParser):
    """argparse prints usage plus an error and exits 2; we want our one-line form instead."""

    def error(self, message: str) -> None:  # type: ignore[override]
        raise GmbError(message, 2)


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(
        prog="gmb",
        description="Run gmembench and summarise its Google Benchmark JSON results.",
        allow_abbrev=False,
    )
    commands = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)

    run = commands.add_parser(
        "run",
        allow_abbrev=False,
        help="set up, build and run every flavor; write a new results folder",
        description=(
            "Set up, build, query the device, run each flavor, and write "
            "results/<gpu_slug>/<YYYYmmdd-HHMMSS>/ with default/ca/cg.json, run_info.json and "
            "summary.md. Extra --benchmark_*=VALUE and --gmb_*=VALUE options are passed to "
            "every benchmark binary."
        ),
    )
    run.add_argument("--device", type=_non_negative, default=0, metavar="N",
                     help="CUDA device index, numbered as nvidia-smi does (default 0)")
    run.add_argument("--flavors", default=",".join(FLAVORS), metavar="LIST",
                     help=f"comma-separated flavors to run (default {','.join(FLAVORS)})")
    run.add_argument("--repetitions", type=_positive, default=5, metavar="R",
                     help="Google Benchmark repetitions per benchmark (default 5)")
    run.add_argument("--preset", metavar="NAME",
                     help="CMake preset (default: release with a GPU, else sm90)")
    run.add_argument("--out", type=Path, metavar="DIR",
                     help="results root instead of <repo>/results")
    run.set_defaults(handler=_run)

    summarise = commands.add_parser(
        "summary",
        allow_abbrev=False,
        help="re-write summary.md of an existing results folder",
        description="Re-write RESULTS_DIR/summary.md from the JSON files in it.",
    )
    summarise.add_argument("results_dir", type=Path, metavar="RESULTS_DIR")
    summarise.set_defaults(handler=_summary)
    return parser


def main(argv: list[str] | None = None) -> int:
    """Entry point for scripts/gmb; returns the process exit status."""
    argv = sys.argv[1:] if argv is None else argv
    try:
        args, extra = build_parser().parse_known_args(argv)
        status: int = args.handler(args, extra, argv)
        return status
    except GmbError as err:
        print(f"gmb: error: {err}", file=sys.stderr)
        return err.exit_code
    except OSError as err:  # e.g. a results folder we may not write to
        where = f"{err.filename}: " if err.filename else ""
        print(f"gmb: error: {where}{err.strerror or err}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print("gmb: error: interrupted", file=sys.stderr)
        return 130


def _run(args: argparse.Namespace, extra: list[str], argv: list[str]) -> int:
    from . import run

    options = run.Options(
        device=args.device,
        flavors=run.parse_flavors(args.flavors),
        repetitions=args.repetitions,
        preset=args.preset,
        out=args.out,
        passthrough=run.passthrough_args(extra),
        gmb_command=shlex.join(["scripts/gmb", *argv]),
    )
    run.run(options)
    return 0


def _summary(args: argparse.Namespace, extra: list[str], argv: list[str]) -> int:
    from . import summary

    if extra:
        raise GmbError(f"unrecognized arguments: {' '.join(extra)}", 2)
    written = summary.rewrite(args.results_dir)
    print(written.path)
    if written.unreadable:
        raise GmbError("; ".join(written.unreadable) + f" (summary written to {written.path})")
    return 0


def _non_negative(text: str) -> int:
    return _int_at_least(text, 0)


def _positive(text: str) -> int:
    return _int_at_least(text, 1)


def _int_at_least(text: str, minimum: int) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected an integer, got {text!r}") from None
    if value < minimum:
        raise argparse.ArgumentTypeError(f"must be at least {minimum}, got {value}")
    return value
