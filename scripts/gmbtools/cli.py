"""The `gmb` command line: one argparse parser with a subcommand per job.

Every error a user can cause ends as one `gmb: error: ...` line on stderr and a non-zero exit
status, argparse's own usage errors included. Subcommands import what they need, so `gmb run`,
`gmb summary` and `gmb compare` work with the standard library alone; `load`, `plot` and
`report` need pandas and matplotlib and say so in one line where they are missing.
"""

import argparse
import importlib
import os
import shlex
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from .errors import GmbError
from .repo import find_repo
from .flavors import FLAVORS


class _Parser(argparse.ArgumentParser):
    """argparse prints usage plus an error and exits 2; we want our one-line form instead."""

    def error(self, message: str) -> None:  # type: ignore[override]
        raise GmbError(message, 2)


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(
        prog="gmb",
        description="Run gmembench; summarise, tabulate and plot its Google Benchmark JSON.",
        allow_abbrev=False,
    )
    commands = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)

    run = _command(
        commands, "run", _run,
        "set up, build and run every flavor; write a new results folder",
        "Set up, build, query the device, run each flavor, and write "
        "results/<gpu_slug>/<YYYYmmdd-HHMMSS>/ with default/ca/cg.json.gz, run_info.json, "
        "summary.md and (with pandas and matplotlib) figures/ and report.md. Extra "
        "--benchmark_*=VALUE and --gmb_*=VALUE options are passed to every benchmark binary.",
    )
    which = run.add_mutually_exclusive_group()
    which.add_argument("--device", type=_non_negative, default=0, metavar="N",
                       help="CUDA device index, numbered as nvidia-smi does (default 0)")
    which.add_argument("--devices", metavar="all|LIST",
                       help="a node run: every GPU (all) or the listed ones (0,2), each into "
                            "gpu<index>-<uuid>/ of one folder, with a summary across them")
    run.add_argument("--concurrent", action="store_true",
                     help="with --devices: run the GPUs' local families all at once, as a "
                          "loaded node runs, then the peer family one GPU at a time")
    run.add_argument("--flavors", default=",".join(FLAVORS), metavar="LIST",
                     help=f"comma-separated flavors to run (default {','.join(FLAVORS)})")
    _build_and_results_options(run, repetitions=5)

    peers = _command(
        commands, "peers", _peers,
        "measure every ordered pair of GPUs, one pair at a time; write a peer matrix",
        "Build the default flavor and run, for every ordered pair (i, j) of the GPUs, "
        "gmembench on GPU i with --gmb_peer=only --gmb_peer_partner=j (peer reads, writes, "
        "kernel copies and the copy engine, pull, push and both at once), one pair at a time. "
        "Writes results/<gpu_slug>/<YYYYmmdd-HHMMSS>-peers/ with each pair's JSON (gzip), "
        "matrix.json, matrix.md (an N x N table per measurement) and matrix.png. One GPU: says "
        "there is no pair and exits 0. Exits non-zero when a pair has no numbers (the others "
        "are still measured). Extra --benchmark_*=VALUE and --gmb_*=VALUE options go to every "
        "run.",
    )
    peers.add_argument("--devices", default="all", metavar="all|LIST",
                       help="every GPU (all, the default) or the listed ones (0,2)")
    _build_and_results_options(peers, repetitions=3)

    _command(
        commands, "summary", _summary,
        "re-write summary.md of an existing results folder",
        "Re-write RESULTS_DIR/summary.md from the JSON files in it.",
    ).add_argument("results_dir", type=Path, metavar="RESULTS_DIR")

    load = _command(
        commands, "load", _load,
        "load JSON files into one table; describe it or write it as CSV",
        "Load Google Benchmark JSON files into one tidy table (a row per repetition and "
        "aggregate; name split into family, variant, type, op and params; flavor and GPU from "
        "the context). A results folder stands for its default/ca/cg files (plain or .gz). "
        "Prints what it holds, or writes it with --csv.",
    )
    load.add_argument("files", type=Path, nargs="+", metavar="FILE_OR_RESULTS_DIR")
    load.add_argument("--csv", type=Path, metavar="OUT", help="write the table to OUT as CSV")

    plot = _command(
        commands, "plot", _plot,
        "draw the figures of a results folder (PNG; SVG with --svg)",
        "Draw every figure RESULTS_DIR has data for (stride, offset, flavors, reuse, aos_soa, "
        "word_ilp, working_set), as PNG (and SVG with --svg); a figure whose benchmarks are "
        "absent is skipped with a message.",
    )
    plot.add_argument("results_dir", type=Path, metavar="RESULTS_DIR")
    plot.add_argument("--out", type=Path, metavar="DIR",
                      help="where to write the figures (default RESULTS_DIR/figures)")
    plot.add_argument("--svg", action="store_true", help="also write each figure as SVG")

    report = _command(
        commands, "report", _report,
        "draw the figures and write RESULTS_DIR/report.md",
        "Draw the figures into RESULTS_DIR/figures and write RESULTS_DIR/report.md: the "
        "headline numbers, every figure with what it shows, errors and the run's context.",
    )
    report.add_argument("results_dir", type=Path, metavar="RESULTS_DIR")
    report.add_argument("--svg", action="store_true", help="also write each figure as SVG")

    compare = _command(
        commands, "compare", _compare,
        "tabulate bandwidth ratios B/A of two runs, or of the flavors of one run",
        "Pair the benchmarks of A.json and B.json by name and print a markdown table of their "
        "median GB/s, the ratio B/A, each side's cv (spread of the repetitions) and a flag `*` "
        "where |B/A - 1| > max(3 x sqrt(cvA^2 + cvB^2), 0.5 %). Only flagged rows are listed "
        "(largest difference first) unless --all; names in one file only and errored "
        "benchmarks are listed by name. --flavors RESULTS_DIR compares default.json, ca.json "
        "and cg.json of one run: ca/default, cg/default and cg/ca.",
    )
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

    ncu = _command(
        commands, "ncu", _ncu,
        "profile benchmarks once each under Nsight Compute; model beside hardware",
        "Run the benchmarks matching --filter once each under Nsight Compute (clocks left "
        "alone) and write, per benchmark name, the measured L1 sectors per request (loads, "
        "stores) and DRAM bytes beside the traffic model's predictions, as JSON. Needs a built "
        "binary (scripts/gmb run builds them). Extra --gmb_*=VALUE options go to the binary.",
    )
    ncu.add_argument("--filter", required=True, metavar="REGEX",
                     help="Google Benchmark filter, e.g. '^(offset|stride|aos)/'")
    ncu.add_argument("--out", type=Path, required=True, metavar="FILE", help="JSON to write")
    ncu.add_argument("--device", type=_non_negative, default=0, metavar="N")
    ncu.add_argument("--flavor", choices=FLAVORS, default="default")
    ncu.add_argument("--preset", metavar="NAME",
                     help="CMake preset whose build to use (default: release with a GPU)")
    _fleet_commands(commands)
    return parser


def _build_and_results_options(parser: argparse.ArgumentParser, repetitions: int) -> None:
    """What every command that builds, runs and writes a results folder takes."""
    parser.add_argument("--repetitions", type=_positive, default=repetitions, metavar="R",
                        help=f"Google Benchmark repetitions per benchmark (default {repetitions})")
    parser.add_argument("--preset", metavar="NAME",
                        help="CMake preset (default: release with a GPU, else sm90)")
    parser.add_argument("--out", type=Path, metavar="DIR",
                        help="results root instead of <repo>/results")
    parser.add_argument("--cuda-archs", metavar="LIST",
                        help="build for these compute capabilities, e.g. '80;90' (CMake's "
                             "CMAKE_CUDA_ARCHITECTURES; default: the preset's, native with a "
                             "GPU)")


def _fleet_commands(commands: Any) -> None:
    """`gmb fleet submit|task|report`: the screening sweep on every GPU of a Slurm job."""
    fleet = commands.add_parser(
        "fleet", allow_abbrev=False, help="screen every GPU of a Slurm job; report the outliers",
        description="Run the screening sweep (--gmb_sweep=screen, one flavor) on every GPU of "
                    "a Slurm job and compare each GPU with the others of its model.")
    steps = fleet.add_subparsers(dest="fleet_command", metavar="STEP", required=True)
    submit = _command(
        steps, "submit", _fleet_submit,
        "write results/fleet/<timestamp>/ and submit the job (srun inside an allocation)",
        "Build the default flavor (unless --binary), write results/fleet/<YYYYmmdd-HHMMSS>/ "
        "with fleet.json and job.sbatch (one task per GPU on every node), and submit it with "
        "sbatch; inside an allocation (SLURM_JOB_ID set) run the tasks with srun instead. Each "
        "task writes <host>/<gpu-uuid>/ with status.json and screen.json. Extra --sbatch-arg "
        "values go into the batch script.")
    submit.add_argument("--nodes", type=_positive, default=1, metavar="N")
    submit.add_argument("--gpus-per-node", type=_positive, default=1, metavar="G",
                        help="tasks per node, one per GPU (default 1)")
    submit.add_argument("--no-gpu-request", action="store_true",
                        help="do not ask Slurm for a GPU per task (clusters without GPU GRES: "
                             "task k of a node then uses device k)")
    submit.add_argument("--partition", metavar="NAME")
    submit.add_argument("--time", default="00:15:00", metavar="LIMIT",
                        help="the job's Slurm time limit (default 00:15:00)")
    submit.add_argument("--task-timeout", type=_positive, default=180, metavar="S",
                        help="seconds one task may take before it is stopped and reported as a "
                             "timeout (default 180)")
    submit.add_argument("--repetitions", type=_positive, default=3, metavar="R")
    submit.add_argument("--binary", type=Path, metavar="PATH",
                        help="a built gmembench to run (default: build the default flavor)")
    submit.add_argument("--preset", metavar="NAME", help="CMake preset for the build")
    submit.add_argument("--cuda-archs", metavar="LIST",
                        help="build for these compute capabilities, e.g. '80;90'")
    submit.add_argument("--out", type=Path, metavar="DIR",
                        help="results root instead of <repo>/results")
    submit.add_argument("--wait", action="store_true",
                        help="wait for the job to end, then write the report")
    submit.add_argument("--sbatch-arg", action="append", default=[], metavar="ARG",
                        help="one more #SBATCH line, e.g. --sbatch-arg=--account=ops")
    _command(steps, "task", _fleet_task, "(run by Slurm) screen this task's GPU",
             "Run by each Slurm task of the job: screen the task's GPU into "
             "DIR/<host>/<gpu-uuid>/ and write status.json however it ends.",
             ).add_argument("fleet_dir", type=Path, metavar="DIR")
    _command(steps, "report", _fleet_report,
             "merge a fleet folder's tasks: report.md, fleet.csv, fleet.png",
             "Merge every task of DIR into report.md, fleet.csv and fleet.png: each GPU's ratio "
             "to the median of the job's GPUs of its model per screening benchmark, GPUs more "
             "than 5% below it flagged, failed, unfinished, missing and corrupt tasks listed "
             "with their reason. Exits non-zero when any task did not screen its GPU.",
             ).add_argument("fleet_dir", type=Path, metavar="DIR")


def _command(commands: Any, name: str, handler: Callable[..., int], summary: str,
             description: str) -> argparse.ArgumentParser:
    """One subcommand: no abbreviated options, `handler(args, extra, argv)` runs it."""
    parser: argparse.ArgumentParser = commands.add_parser(
        name, allow_abbrev=False, help=summary, description=description)
    parser.set_defaults(handler=handler)
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
        cuda_archs=args.cuda_archs,
        devices=args.devices,
        concurrent=args.concurrent,
    )
    if args.concurrent and not args.devices:
        raise GmbError("--concurrent needs --devices (all, or a list like 0,1)", 2)
    run.run(options)
    return 0


def _peers(args: argparse.Namespace, extra: list[str], argv: list[str]) -> int:
    from . import peer_matrix

    options = peer_matrix.Options(
        devices=args.devices, repetitions=args.repetitions, preset=args.preset, out=args.out,
        passthrough=peer_matrix.check_passthrough(extra),
        gmb_command=shlex.join(["scripts/gmb", *argv]), cuda_archs=args.cuda_archs)
    peer_matrix.measure(options)
    return 0


def _summary(args: argparse.Namespace, extra: list[str], argv: list[str]) -> int:
    from . import summary

    _no_extra(extra)
    from . import node_summary

    if node_summary.is_node(args.results_dir):
        print(node_summary.write(args.results_dir))
        return 0
    written = summary.rewrite(args.results_dir)
    print(written.path)
    if written.unreadable:
        raise GmbError("; ".join(written.unreadable) + f" (summary written to {written.path})")
    return 0


def _load(args: argparse.Namespace, extra: list[str], argv: list[str]) -> int:
    _no_extra(extra)
    frame = _plotting_module("frame")
    from . import results

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


def _plot(args: argparse.Namespace, extra: list[str], argv: list[str]) -> int:
    _no_extra(extra)
    plotted = _plotting_module("plot").plot_folder(args.results_dir, args.out, args.svg)
    plotted.say()
    if not plotted.written:
        raise GmbError(f"{args.results_dir}: no figure could be drawn from this run")
    return 0


def _report(args: argparse.Namespace, extra: list[str], argv: list[str]) -> int:
    _no_extra(extra)
    path, plotted = _plotting_module("report").write_report(args.results_dir, args.svg)
    plotted.say()
    print(path)
    return 0


def _compare(args: argparse.Namespace, extra: list[str], argv: list[str]) -> int:
    import re

    from . import compare

    # parse_known_args leaves positionals that follow an option (`A.json --all B.json`) in extra.
    files = [*args.files, *(Path(arg) for arg in extra if not arg.startswith("-"))]
    _no_extra([arg for arg in extra if arg.startswith("-")])
    if args.flavors is not None and files:
        raise GmbError("give either two files or --flavors RESULTS_DIR, not both", 2)
    if args.flavors is None and len(files) != 2:
        raise GmbError(f"compare takes two files A.json B.json or --flavors RESULTS_DIR, "
                       f"got {len(files)} file{'' if len(files) == 1 else 's'}", 2)
    try:
        name_filter = re.compile(args.filter) if args.filter is not None else None
    except re.error as err:
        raise GmbError(f"--filter: not a regular expression ({err})", 2) from None

    if args.flavors is not None:
        comparisons, preamble = compare.compare_flavors(args.flavors, name_filter)
    else:
        comparisons, preamble = compare.compare_files(files[0], files[1], name_filter), []
    text = compare.markdown(comparisons, preamble, args.all, name_filter)
    if args.csv is not None:
        compare.write_csv(comparisons, args.csv)
    if args.md is not None:
        args.md.write_text(text, encoding="utf-8")
    print(text, end="")
    return 0


def _ncu(args: argparse.Namespace, extra: list[str], argv: list[str]) -> int:
    from . import ncu, run
    from .flavors import BINARIES

    binary = Path("build") / run.choose_preset(args.preset) / BINARIES[args.flavor]
    if not (find_repo() / binary).is_file():
        raise GmbError(f"{binary} is not built: run scripts/gmb run (or cmake --build) first")
    if any(not arg.startswith("--gmb_") for arg in extra):
        raise GmbError(f"unrecognized arguments: {' '.join(extra)}", 2)
    options = ncu.Options(binary=str(find_repo() / binary), device=args.device,
                          benchmark_filter=args.filter, out=args.out, passthrough=tuple(extra))
    print(ncu.run(options))
    return 0


def _fleet_submit(args: argparse.Namespace, extra: list[str], argv: list[str]) -> int:
    from . import fleet

    _no_extra(extra)
    options = fleet.SubmitOptions(
        nodes=args.nodes, gpus_per_node=args.gpus_per_node,
        request_gpus=not args.no_gpu_request, partition=args.partition, time_limit=args.time,
        task_timeout_s=args.task_timeout, repetitions=args.repetitions, binary=args.binary,
        preset=args.preset, cuda_archs=args.cuda_archs, out=args.out, wait=args.wait,
        sbatch_args=tuple(args.sbatch_arg),
    )
    folder = fleet.submit(options)
    if args.wait or "SLURM_JOB_ID" in os.environ:
        return _fleet_report(argparse.Namespace(fleet_dir=folder), [], argv)
    print(folder)
    return 0


def _fleet_task(args: argparse.Namespace, extra: list[str], argv: list[str]) -> int:
    from . import fleet

    _no_extra(extra)
    return fleet.task(args.fleet_dir)


def _fleet_report(args: argparse.Namespace, extra: list[str], argv: list[str]) -> int:
    from . import fleet_report

    _no_extra(extra)
    path, data = fleet_report.write(args.fleet_dir)
    print(path)
    if data.problems:
        raise GmbError(f"{len(data.problems)} of {data.manifest.tasks} task(s) did not screen "
                       f"their GPU (see {path})")
    return 0


def _plotting_module(name: str) -> Any:
    """gmbtools.<name>, which needs pandas and matplotlib: a one-line error without them."""
    try:
        return importlib.import_module(f"{__package__}.{name}")
    except ImportError as err:
        raise GmbError(f"this command needs pandas and matplotlib ({err}); install them with"
                       " python3 -m pip install -r scripts/requirements.txt") from None


def _no_extra(extra: list[str]) -> None:
    if extra:
        raise GmbError(f"unrecognized arguments: {' '.join(extra)}", 2)


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
