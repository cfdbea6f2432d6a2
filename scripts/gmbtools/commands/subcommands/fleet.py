"""`gmb fleet submit|task|report`: options and handlers (commands/fleet.py talks to Slurm)."""

import argparse
import os
from pathlib import Path

from gmbtools.commands.repo import refuse_tracked
from gmbtools.commands.subcommands.options import (fleet_dir_argument, force_argument, no_extra,
                                                   positive)
from gmbtools.errors import GmbError


def fleet_submit_arguments(submit: argparse.ArgumentParser) -> None:
    submit.add_argument("--nodes", type=positive, default=1, metavar="N")
    submit.add_argument("--gpus-per-node", type=positive, default=1, metavar="G",
                        help="tasks per node, one per GPU (default 1)")
    submit.add_argument("--no-gpu-request", action="store_true",
                        help="do not ask Slurm for a GPU per task (clusters without GPU GRES: "
                             "task k of a node then uses device k)")
    submit.add_argument("--partition", metavar="NAME")
    submit.add_argument("--time", default="00:15:00", metavar="LIMIT",
                        help="the job's Slurm time limit (default 00:15:00)")
    submit.add_argument("--task-timeout", type=positive, default=180, metavar="S",
                        help="seconds one task may take before it is stopped and reported as a "
                             "timeout (default 180)")
    submit.add_argument("--repetitions", type=positive, default=3, metavar="R")
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


def fleet_submit_handler(args: argparse.Namespace, extra: list[str], argv: list[str]) -> int:
    from gmbtools.commands import fleet

    no_extra(extra)
    options = fleet.SubmitOptions(
        nodes=args.nodes, gpus_per_node=args.gpus_per_node,
        request_gpus=not args.no_gpu_request, partition=args.partition, time_limit=args.time,
        task_timeout_s=args.task_timeout, repetitions=args.repetitions, binary=args.binary,
        preset=args.preset, cuda_archs=args.cuda_archs, out=args.out, wait=args.wait,
        sbatch_args=tuple(args.sbatch_arg),
    )
    folder = fleet.submit(options)
    if args.wait or "SLURM_JOB_ID" in os.environ:
        return fleet_report_handler(argparse.Namespace(fleet_dir=folder, force=False), [], argv)
    print(folder)
    return 0


def fleet_task_handler(args: argparse.Namespace, extra: list[str], argv: list[str]) -> int:
    from gmbtools.commands import fleet_task

    no_extra(extra)
    return fleet_task.task(args.fleet_dir)


def fleet_report_arguments(report: argparse.ArgumentParser) -> None:
    fleet_dir_argument(report)
    force_argument(report)


def fleet_report_handler(args: argparse.Namespace, extra: list[str], argv: list[str]) -> int:
    from gmbtools.present import fleet_report

    no_extra(extra)
    refuse_tracked([args.fleet_dir / name for name in fleet_report.OUTPUTS],
                   args.force, "a copy of the folder")
    path, data = fleet_report.write(args.fleet_dir)
    print(path)
    if data.problems:
        raise GmbError(f"{len(data.problems)} of {data.manifest.tasks} task(s) did not screen "
                       f"their GPU (see {path})")
    return 0
