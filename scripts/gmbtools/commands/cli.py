"""The `gmb` command line: one table of subcommands (COMMANDS, FLEET_STEPS), one parser.

Every error a user can cause ends as one `gmb: error: ...` line on stderr and a non-zero exit
status, argparse's own usage errors included; a reader that closes the pipe early (`| head`)
ends the command quietly with status 0, as it would end a Unix tool. What each subcommand takes
and does lives in subcommands/; `load`, `plot` and `report` need pandas and matplotlib and say
so in one line where they are missing.
"""

import argparse
import os
import sys
from collections.abc import Callable
from dataclasses import dataclass

from gmbtools.commands.subcommands import (advise, compare, fleet, load, ncu, pattern, peers,
                                           plot, report, run, summary)
from gmbtools.commands.subcommands.options import fleet_dir_argument
from gmbtools.errors import GmbError, os_error_line
from gmbtools.present import figure_names


@dataclass(frozen=True)
class Command:
    """One subcommand: its line in `gmb --help`, its `--help` text, its options, its handler."""

    name: str
    summary: str
    description: str
    arguments: Callable[[argparse.ArgumentParser], None]
    handler: Callable[[argparse.Namespace, list[str], list[str]], int]


COMMANDS = (
    Command(
        "run", "set up, build and run every flavor; write a new results folder",
        "Set up, build, query the device, run each flavor, and write "
        "results/<gpu_slug>/<YYYYmmdd-HHMMSS>/ with default/ca/cg.json.gz, run_info.json, "
        "summary.md and (with pandas and matplotlib) figures/ and report.md. Extra "
        "--benchmark_*=VALUE and --gmb_*=VALUE options are passed to every benchmark binary.",
        run.run_arguments, run.run_handler),
    Command(
        "peers", "measure every ordered pair of GPUs, one pair at a time; write a peer matrix",
        "Build the default flavor and run, for every ordered pair (i, j) of the GPUs, "
        "gmembench on GPU i with --gmb_peer=only --gmb_peer_partner=j (peer reads, writes, "
        "kernel copies and the copy engine, pull, push and both at once), one pair at a time. "
        "Writes results/<gpu_slug>/<YYYYmmdd-HHMMSS>-peers/ with each pair's JSON (gzip), "
        "matrix.json, matrix.md (an N x N table per measurement) and matrix.png. One GPU: says "
        "there is no pair and exits 0. Exits non-zero when a pair has no numbers (the others "
        "are still measured). Extra --benchmark_*=VALUE and --gmb_*=VALUE options go to every "
        "run.",
        peers.peers_arguments, peers.peers_handler),
    Command(
        "pattern", "measure your own index expressions; explain what they cost",
        "Build the flavor and run it once with each EXPR as a benchmark (--gmb_pattern=EXPR: "
        "the element thread i touches, compiled by NVRTC), beside the driver's copy and fill, "
        "the DRAM chase and (--compare, the default) the built-ins they may behave like. "
        "Prints, per expression, the measured and predicted GB/s, the access class, the "
        "built-in it behaves like and a fix where one is known; --json prints the same as "
        "JSON. --save writes results/<gpu_slug>/<YYYYmmdd-HHMMSS>-pattern/ with pattern.json.gz, "
        "explanation.md and (two expressions or more) pattern.png. Extra --benchmark_*=VALUE "
        "and --gmb_*=VALUE options go to the binary.",
        pattern.pattern_arguments, pattern.pattern_handler),
    Command(
        "summary", "re-write summary.md of an existing results folder",
        "Re-write RESULTS_DIR/summary.md from the JSON files in it.",
        summary.summary_arguments, summary.summary_handler),
    Command(
        "load", "load JSON files into one table; describe it or write it as CSV",
        "Load Google Benchmark JSON files into one tidy table (a row per repetition and "
        "aggregate; name split into family, variant, type, op and params; flavor and GPU from "
        "the context). A results folder stands for its default/ca/cg files (plain or .gz). "
        "Prints what it holds, or writes it with --csv.",
        load.load_arguments, load.load_handler),
    Command(
        "plot", "draw the figures of a results folder (PNG; SVG with --svg)",
        f"Draw every figure RESULTS_DIR has data for ({', '.join(figure_names.STEMS)}), as "
        "PNG (and SVG with --svg); a figure whose benchmarks are absent is skipped with a "
        "message.",
        plot.plot_arguments, plot.plot_handler),
    Command(
        "report", "draw the figures and write RESULTS_DIR/report.md",
        "Draw the figures into RESULTS_DIR/figures and write RESULTS_DIR/report.md: the "
        "headline numbers, every figure with what it shows, errors and the run's context.",
        report.report_arguments, report.report_handler),
    Command(
        "compare", "tabulate bandwidth ratios B/A of two runs, or of the flavors of one run",
        "Pair the benchmarks of A.json and B.json by name and print a markdown table of their "
        "median GB/s, the ratio B/A, each side's cv (spread of the repetitions) and a flag `*` "
        "where |B/A - 1| > max(3 x sqrt(cvA^2 + cvB^2), 0.5 %). Only flagged rows are listed "
        "(largest difference first) unless --all; names in one file only and errored "
        "benchmarks are listed by name. --flavors RESULTS_DIR compares default.json, ca.json "
        "and cg.json of one run: ca/default, cg/default and cg/ca.",
        compare.compare_arguments, compare.compare_handler),
    Command(
        "ncu", "profile benchmarks once each under Nsight Compute; model beside hardware",
        "Run the benchmarks matching --filter once each under Nsight Compute (clocks left "
        "alone) and write, per benchmark name, the measured L1 sectors per request (loads, "
        "stores) and DRAM bytes beside the traffic model's predictions, as JSON. Needs a built "
        "binary (scripts/gmb run builds them). Extra --gmb_*=VALUE options go to the binary.",
        ncu.ncu_arguments, ncu.ncu_handler),
    Command(
        "advise", "your own kernel: each global load and store matched to the catalog",
        "Read an Nsight Compute report (REPORT.ncu-rep, profiled with --section "
        "SourceCounters; or its source page as CSV), or profile an application with it "
        "(gmb advise [options] -- APP ARGS: the source counters only, clocks left alone, the "
        "report kept), and print per kernel each global load and store: its sectors and "
        "128-B lines per request, its share of the kernel's sectors, its class (coalesced, "
        "misaligned, strided with its stride, every lane its own line, scattered), the "
        "built-in benchmark it behaves like (its GB/s from --results DIR), the known fix and "
        "the sectors fixing it saves. --json prints the same as JSON.",
        advise.advise_arguments, advise.advise_handler),
)

# `gmb fleet submit|task|report`: the screening sweep on every GPU of a Slurm job.
FLEET = ("fleet", "screen every GPU of a Slurm job; report the outliers",
         "Run the screening sweep (--gmb_sweep=screen, one flavor) on every GPU of a Slurm job "
         "and compare each GPU with the others of its model.")
FLEET_STEPS = (
    Command(
        "submit",
        "write results/fleet/<timestamp>/ and submit the job (srun inside an allocation)",
        "Build the default flavor (unless --binary), write results/fleet/<YYYYmmdd-HHMMSS>/ "
        "with fleet.json and job.sbatch (one task per GPU on every node), and submit it with "
        "sbatch; inside an allocation (SLURM_JOB_ID set) run the tasks with srun instead. Each "
        "task writes <host>/<gpu-uuid>/ with status.json and screen.json. Extra --sbatch-arg "
        "values go into the batch script. --partition, --time and --sbatch-arg are checked "
        "first: a control character (newline, tab, ...), a time Slurm would not parse or an "
        "--sbatch-arg that is not an option is refused before anything is built, written or "
        "submitted. The job asks Slurm for SIGTERM 120 s before its time limit (--signal; a "
        "quarter of a limit under 8 minutes), so each task stops its screen and reports it as "
        "interrupted.",
        fleet.fleet_submit_arguments, fleet.fleet_submit_handler),
    Command(
        "task", "(run by Slurm) screen this task's GPU",
        "Run by each Slurm task of the job: screen the task's GPU into "
        "DIR/<host>/<gpu-uuid>/ and write status.json however it ends.",
        fleet_dir_argument, fleet.fleet_task_handler),
    Command(
        "report", "merge a fleet folder's tasks: report.md, fleet.csv, fleet.png",
        "Merge every task of DIR into report.md, fleet.csv and fleet.png: each GPU's ratio "
        "to the median of the job's GPUs of its model per screening benchmark, GPUs more "
        "than 5% below it flagged, failed, unfinished, missing and corrupt tasks listed "
        "with their reason. Exits non-zero when any task did not screen its GPU.",
        fleet.fleet_report_arguments, fleet.fleet_report_handler),
)


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
    _add_commands(commands, COMMANDS)
    name, summary, description = FLEET
    fleet = commands.add_parser(name, allow_abbrev=False, help=summary, description=description)
    steps = fleet.add_subparsers(dest="fleet_command", metavar="STEP", required=True)
    _add_commands(steps, FLEET_STEPS)
    return parser


def _add_commands(subparsers: argparse._SubParsersAction, table: tuple[Command, ...]) -> None:
    """One parser per row: no abbreviated options, `handler(args, extra, argv)` runs it."""
    for command in table:
        parser = subparsers.add_parser(command.name, allow_abbrev=False, help=command.summary,
                                       description=command.description)
        command.arguments(parser)
        parser.set_defaults(handler=command.handler)


def _options_before_command(argv: list[str]) -> None:
    """`gmb --bogus` (or `gmb fleet --bogus`): argparse would only say that COMMAND is
    missing; name the option instead. gmb and fleet themselves take only --help."""
    for index, arg in enumerate(argv):
        if arg in ("-h", "--help"):
            return
        if arg.startswith("-"):
            raise GmbError(f"unrecognized argument {arg!r} (only --help goes before the "
                           "command; a command's own options go after it)", 2)
        if arg != "fleet" or index > 0:
            return


def main(argv: list[str] | None = None) -> int:
    """Entry point for scripts/gmb; returns the process exit status."""
    argv = sys.argv[1:] if argv is None else argv
    try:
        _options_before_command(argv)
        args, extra = build_parser().parse_known_args(argv)
        status: int = args.handler(args, extra, argv)
        sys.stdout.flush()  # here, where a closed pipe is caught, not at exit
        return status
    except GmbError as err:
        print(f"gmb: error: {err}", file=sys.stderr)
        return err.exit_code
    except BrokenPipeError:  # the reader of our stdout is gone: nothing left to say
        _quiet_stdout()
        return 0
    except OSError as err:  # e.g. a results folder we may not write to
        print(f"gmb: error: {os_error_line(err)}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print("gmb: error: interrupted", file=sys.stderr)
        return 130


def _quiet_stdout() -> None:
    """Point stdout at /dev/null, so that Python's flush at exit does not fail on the closed
    pipe again and print "Exception ignored ... BrokenPipeError"."""
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, sys.stdout.fileno())
    os.close(devnull)
