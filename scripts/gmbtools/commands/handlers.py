"""What each `gmb` subcommand takes and does: `<name>_arguments(parser)` adds its options,
`<name>_handler(args, extra, argv)` runs it and returns the exit status. The table that names
them is cli.COMMANDS. Handlers import what they need, so `run`, `summary` and `compare` work
with the standard library alone."""

import argparse
import importlib
import os
import shlex
import sys
from pathlib import Path
from typing import Any

from gmbtools.commands import stopping
from gmbtools.errors import GmbError
from gmbtools.data.flavors import FLAVORS
from gmbtools.commands.repo import find_repo


def run_arguments(run: argparse.ArgumentParser) -> None:
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
    run.add_argument("--stall-timeout", type=_non_negative_seconds, metavar="S",
                     help="end a benchmark binary whose results file has not grown for S "
                          "seconds, name its benchmark as stalled and go on with the next "
                          f"(default {stopping.DEFAULT_STALL_TIMEOUT_S:.0f}, with --resume the "
                          "run's; 0: never)")
    run.add_argument("--resume", type=Path, metavar="DIR",
                     help="run only what the stopped run in DIR (a results or node folder) did "
                          "not finish, with the options it recorded, and write its summary")
    run.add_argument("--force", action="store_true",
                     help="with --resume: resume on another GPU or with another build")
    _build_and_results_options(run, repetitions=5)


def peers_arguments(peers: argparse.ArgumentParser) -> None:
    peers.add_argument("--devices", default="all", metavar="all|LIST",
                       help="every GPU (all, the default) or the listed ones (0,2)")
    _build_and_results_options(peers, repetitions=3)


def pattern_arguments(pattern: argparse.ArgumentParser) -> None:
    pattern.add_argument("expressions", nargs="+", metavar="EXPR",
                         help="the element thread i touches, a C++ expression over i lane warp "
                              "tid block k n, e.g. '(i%%32)*32+i/32' (quote it for the shell)")
    pattern.add_argument("--op", choices=("read", "write", "copy", "gather", "scatter"),
                         help="read (default), write, copy, gather (read the pattern, write "
                              "coalesced) or scatter (the reverse)")
    pattern.add_argument("--word", metavar="WORD",
                         help="f32 (default), f64, f32x2, f32x4, or sN: a structure of N bytes")
    pattern.add_argument("--k", type=_positive, metavar="K",
                         help="elements per thread (default 1)")
    pattern.add_argument("--block", type=_positive, metavar="B",
                         help="threads per block (default 256)")
    size = pattern.add_mutually_exclusive_group()
    size.add_argument("--n", type=_positive, metavar="N", help="elements in the array")
    size.add_argument("--bytes", metavar="SIZE", help="bytes in the array, e.g. 1G")
    pattern.add_argument("--threads", type=_positive, metavar="T",
                         help="threads to run (default n / K)")
    pattern.add_argument("--flavor", choices=FLAVORS, default="default",
                         help="the build to run (default: default)")
    pattern.add_argument("--device", type=_non_negative, default=0, metavar="N",
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
    _build_and_results_options(pattern, repetitions=3)


def results_dir_argument(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("results_dir", type=Path, metavar="RESULTS_DIR")


def fleet_dir_argument(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("fleet_dir", type=Path, metavar="DIR")


def load_arguments(load: argparse.ArgumentParser) -> None:
    load.add_argument("files", type=Path, nargs="+", metavar="FILE_OR_RESULTS_DIR")
    load.add_argument("--csv", type=Path, metavar="OUT", help="write the table to OUT as CSV")


def plot_arguments(plot: argparse.ArgumentParser) -> None:
    results_dir_argument(plot)
    plot.add_argument("--out", type=Path, metavar="DIR",
                      help="where to write the figures (default RESULTS_DIR/figures)")
    plot.add_argument("--svg", action="store_true", help="also write each figure as SVG")


def report_arguments(report: argparse.ArgumentParser) -> None:
    results_dir_argument(report)
    report.add_argument("--svg", action="store_true", help="also write each figure as SVG")


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


def ncu_arguments(ncu: argparse.ArgumentParser) -> None:
    ncu.add_argument("--filter", required=True, metavar="REGEX",
                     help="Google Benchmark filter, e.g. '^(offset|stride|aos)/'")
    ncu.add_argument("--out", type=Path, required=True, metavar="FILE", help="JSON to write")
    ncu.add_argument("--device", type=_non_negative, default=0, metavar="N")
    ncu.add_argument("--flavor", choices=FLAVORS, default="default")
    ncu.add_argument("--preset", metavar="NAME",
                     help="CMake preset whose build to use (default: release with a GPU)")


def fleet_submit_arguments(submit: argparse.ArgumentParser) -> None:
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


def run_handler(args: argparse.Namespace, extra: list[str], argv: list[str]) -> int:
    from gmbtools.commands import run

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
        stall_timeout=args.stall_timeout if args.stall_timeout is not None or args.resume
        else stopping.DEFAULT_STALL_TIMEOUT_S,
        resume=args.resume,
        force=args.force,
    )
    if args.concurrent and not args.devices:
        raise GmbError("--concurrent needs --devices (all, or a list like 0,1)", 2)
    run.run(options)
    return 0


def peers_handler(args: argparse.Namespace, extra: list[str], argv: list[str]) -> int:
    from gmbtools.commands import peers as peer_matrix

    options = peer_matrix.Options(
        devices=args.devices, repetitions=args.repetitions, preset=args.preset, out=args.out,
        passthrough=peer_matrix.check_passthrough(extra),
        gmb_command=shlex.join(["scripts/gmb", *argv]), cuda_archs=args.cuda_archs)
    peer_matrix.measure(options)
    return 0


def pattern_handler(args: argparse.Namespace, extra: list[str], argv: list[str]) -> int:
    from gmbtools.commands import pattern

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


def summary_handler(args: argparse.Namespace, extra: list[str], argv: list[str]) -> int:
    from gmbtools.present import summary

    _no_extra(extra)
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


def load_handler(args: argparse.Namespace, extra: list[str], argv: list[str]) -> int:
    _no_extra(extra)
    frame = _plotting_module("analysis.frame")
    from gmbtools.data import results

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


def plot_handler(args: argparse.Namespace, extra: list[str], argv: list[str]) -> int:
    _no_extra(extra)
    plotted = _plotting_module("present.plot").plot_folder(args.results_dir, args.out, args.svg)
    plotted.say()
    if not plotted.written:
        raise GmbError(f"{args.results_dir}: no figure could be drawn from this run")
    return 0


def report_handler(args: argparse.Namespace, extra: list[str], argv: list[str]) -> int:
    _no_extra(extra)
    path, plotted = _plotting_module("present.report").write_report(args.results_dir, args.svg)
    plotted.say()
    print(path)
    return 0


def compare_handler(args: argparse.Namespace, extra: list[str], argv: list[str]) -> int:
    import re

    from gmbtools.present import compare

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


def ncu_handler(args: argparse.Namespace, extra: list[str], argv: list[str]) -> int:
    from gmbtools.commands import ncu, run
    from gmbtools.data.flavors import BINARIES

    binary = Path("build") / run.choose_preset(args.preset) / BINARIES[args.flavor]
    if not (find_repo() / binary).is_file():
        raise GmbError(f"{binary} is not built: run scripts/gmb run (or cmake --build) first")
    if any(not arg.startswith("--gmb_") for arg in extra):
        raise GmbError(f"unrecognized arguments: {' '.join(extra)}", 2)
    options = ncu.Options(binary=str(find_repo() / binary), device=args.device,
                          benchmark_filter=args.filter, out=args.out, passthrough=tuple(extra))
    print(ncu.run(options))
    return 0


def fleet_submit_handler(args: argparse.Namespace, extra: list[str], argv: list[str]) -> int:
    from gmbtools.commands import fleet

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
        return fleet_report_handler(argparse.Namespace(fleet_dir=folder), [], argv)
    print(folder)
    return 0


def fleet_task_handler(args: argparse.Namespace, extra: list[str], argv: list[str]) -> int:
    from gmbtools.commands import fleet

    _no_extra(extra)
    return fleet.task(args.fleet_dir)


def fleet_report_handler(args: argparse.Namespace, extra: list[str], argv: list[str]) -> int:
    from gmbtools.present import fleet_report

    _no_extra(extra)
    path, data = fleet_report.write(args.fleet_dir)
    print(path)
    if data.problems:
        raise GmbError(f"{len(data.problems)} of {data.manifest.tasks} task(s) did not screen "
                       f"their GPU (see {path})")
    return 0


def _plotting_module(name: str) -> Any:
    """gmbtools.<layer>.<name>, which needs pandas and matplotlib: a one-line error without
    them. `name` is "analysis.frame", "present.plot", ..."""
    try:
        return importlib.import_module(f"gmbtools.{name}")
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


def _non_negative_seconds(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected seconds, got {text!r}") from None
    if not value >= 0 or value == float("inf"):
        raise argparse.ArgumentTypeError(f"must be 0 or more seconds, got {text}")
    return value


def _int_at_least(text: str, minimum: int) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected an integer, got {text!r}") from None
    if value < minimum:
        raise argparse.ArgumentTypeError(f"must be at least {minimum}, got {value}")
    return value
