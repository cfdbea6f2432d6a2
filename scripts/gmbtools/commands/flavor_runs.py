"""One GPU's part of a run: each flavor's binary run under the stall watchdog and the stop (a
stalled binary's file closed and the flavor continued after the benchmark that hung; a stopped
one's closed), the parts merged into one file per flavor, then run_info.json, summary.md and,
with pandas and matplotlib, the figures and report.md. Standard library only."""

import dataclasses
import shlex
import sys
import time
from datetime import datetime
from pathlib import Path
from typing import Any

from gmbtools.analysis import health
from gmbtools.commands import run_state, stopping
from gmbtools.commands.binaries import DEVICE_ENV, benchmark_command, list_benchmarks, shown_path
from gmbtools.commands.flavor_files import (CONTINUED, PEER_PART, close_cut_file, continuation,
                                            merge_into, note_stalled)
from gmbtools.commands.run_options import RECORDED, Options
from gmbtools.data import files, packing, runinfo
from gmbtools.data.flavors import json_name
from gmbtools.data.runinfo import FlavorRun, RunInfo
from gmbtools.errors import GmbError
from gmbtools.present import summary

# Benchmarks that touch another GPU (the naming contract): what --gmb_peer=skip|only splits.
PEER_PREFIXES = ("peer/", "ref/memcpy_peer")




def run_device(folder: Path, device: int, binaries: dict[str, str], options: Options,
                preset: str, repo: Path, env: dict[str, str], interactive: bool,
                record: RunInfo, done: dict[str, set[str]] | None = None) -> list[str]:
    """Every flavor on one GPU into `folder`, then run_info.json, summary.md and the figures;
    returns what went wrong. On a terminal, a progress line per flavor replaces Google
    Benchmark's table (kept in <flavor>.log). `done`: per flavor, what a resume need not run."""
    runs = run_flavors(folder, device, binaries, options, repo, env, interactive, done=done)
    return finish_device(folder, runs, options, preset, record=record)


def run_flavors(folder: Path, device: int, binaries: dict[str, str], options: Options,
                 repo: Path, env: dict[str, str], interactive: bool,
                 to_logs: bool = False, part: tuple[str, ...] = (),
                 done: dict[str, set[str]] | None = None) -> list[FlavorRun]:
    """The flavors, in order, until a stop; `to_logs` keeps every table in its <flavor>.log
    (GPUs running at once)."""
    runs: list[FlavorRun] = []
    for k, flavor in enumerate(options.flavors, start=1):
        if run_state.stopper.stopped or run_state.write_faults:
            break
        if done is not None and flavor not in done:
            continue  # a resume: this flavor is complete
        runs += run_flavor(flavor, binaries[flavor], folder, device, options, repo, env,
                            f"{flavor} {k}/{len(options.flavors)}" if interactive else None,
                            to_logs, part, done=(done or {}).get(flavor, set()))
    return runs


def finish_device(folder: Path, runs: list[FlavorRun], options: Options, preset: str,
                   peer_runs: tuple[FlavorRun, ...] = (), record: RunInfo | None = None
                   ) -> list[str]:
    """Compress the JSON files, then run_info.json, summary.md and (unless stopped) the
    figures of one GPU's folder; what went wrong. A failed write names its file."""
    for flavor in options.flavors:
        if (folder / json_name(flavor)).is_file():
            try:
                packing.pack(folder / json_name(flavor))
            except OSError as err:  # the JSON stays as it is: readable, resumable
                run_state.write_faults.append(files.write_error(err, folder))
    try:
        parts = [*options.flavors, *(f"{run.flavor}{PEER_PART}" for run in peer_runs)]
        states = {part: health.load_state(folder, part) for part in parts}
        record = record or RunInfo(gmb_command=options.gmb_command, preset=preset)
        record = dataclasses.replace(
            record, flavor_runs=[*record.flavor_runs, *runs],
            health={**record.health,
                    **{part: state for part, state in states.items() if state is not None}},
            peer_runs=[*record.peer_runs, *peer_runs],
            interrupted=run_state.stopper.name if run_state.stopper.stopped else "")
        runinfo.save(record, folder)
        written = summary.write_summary(folder, record)
    except OSError as err:
        run_state.write_faults.append(files.write_error(err, folder))
    if run_state.write_faults:
        return []  # _ended says it in one line
    print(f"gmb: wrote {written.path}", flush=True)
    # else --resume or gmb report draws them
    if not run_state.stopper.stopped and not run_state.write_faults:
        figures_and_report(folder)
    stopped = {r.flavor for r in [*runs, *peer_runs] if r.interrupted}
    problems = [f"{r.flavor} exited with {r.exit_code}" for r in runs
                if r.exit_code != 0 and not r.stalled and r.flavor not in stopped]
    problems += [f"the peer part of {r.flavor} exited with {r.exit_code}"
                 for r in peer_runs if r.exit_code != 0 and not r.interrupted]
    problems += [f"{r.flavor}: {name} stalled (no output for {options.stall_timeout:.0f} s)"
                 for r in [*runs, *peer_runs] for name in r.stalled]
    return problems + written.unreadable


def figures_and_report(folder: Path) -> None:
    """`gmb report` on the new folder (figures/ and report.md). Optional: without pandas or
    matplotlib, or with nothing to draw, say so in one line and let the run succeed."""
    try:
        from gmbtools.present import report
    except ImportError as err:
        print(f"gmb: no figures or report.md: {err} (python3 -m pip install -r"
              " scripts/requirements.txt, then scripts/gmb report the folder)", flush=True)
        return
    try:
        path, plotted = report.write_report(folder)
    except GmbError as err:
        print(f"gmb: no figures or report.md: {err}", file=sys.stderr, flush=True)
        return
    except OSError as err:  # e.g. a folder we may not write figures/ into
        where = f"{err.filename}: " if err.filename else ""
        print(f"gmb: no figures or report.md: {where}{err.strerror or err}", file=sys.stderr,
              flush=True)
        return
    plotted.say()
    print(f"gmb: wrote {path}", flush=True)


def run_flavor(
    flavor: str, binary: str, folder: Path, device: int, options: Options, repo: Path,
    env: dict[str, str], progress: str | None, to_log: bool = False,
    part: tuple[str, ...] = (), suffix: str = "", done: set[str] | frozenset = frozenset(),
) -> list[FlavorRun]:
    """Run one flavor (`part` of it, into files named <flavor><suffix>; not the benchmarks in
    `done`); a failure is recorded, not raised, so the other flavors still run. A benchmark
    the watchdog ends is named as stalled and the flavor goes on after it, into a continuation
    file merged into the flavor's. With `progress` (a terminal) the binary draws its progress
    line on stderr and its table goes to <flavor><suffix>.log, as with `to_log`; otherwise its
    output streams as it comes."""
    stem = f"{flavor}{suffix}"
    target = folder / f"{stem}.json"
    skip, runs = set(done), []
    while not run_state.stopper.stopped:
        into = continuation(folder, stem) if target.exists() else target
        skip_args = skip_list(folder, stem, skip, repo)
        run, ran, stalled = run_binary(flavor, binary, folder, into, device, options, repo,
                                        env, progress, to_log or progress is not None,
                                        (*part, *skip_args))
        go_on = False
        if stalled:  # the watchdog: which benchmark was running, and what is left
            left = [n for n in list_benchmarks(binary, device,
                                               (*part, *skip_args, *options.passthrough), repo, env)
                    if n not in ran]
            name = left[0] if left else "(unknown: it had written every benchmark)"
            run = dataclasses.replace(run, stalled=[name])
            print(f"gmb: {flavor} on GPU {device}: {name} stalled (no output for "
                  f"{options.stall_timeout:.0f} s); going on with the next "
                  f"benchmark", file=sys.stderr, flush=True)
            skip |= set(ran) | {name}
            go_on = len(left) > 1  # nothing after it: the flavor is done
        if into != target:
            problem = merge_into(target, into, adds_up=False)
            if problem:
                print(f"gmb: {problem}", file=sys.stderr, flush=True)
            health.merge_states(folder, stem, into.stem)
        if run.stalled:
            note_stalled(target, run.stalled[0], options.stall_timeout)
        runs.append(run)
        if not go_on:
            break
    return runs


def skip_list(folder: Path, stem: str, names: set[str], repo: Path) -> tuple[str, ...]:
    """--gmb_skip_list=FILE naming what this binary need not run (kept in the folder: the
    recorded command refers to it)."""
    if not names:
        return ()
    path = folder / f"skip-{stem}.txt"
    path.write_text("".join(f"{name}\n" for name in sorted(names)), encoding="utf-8")
    return (f"--gmb_skip_list={shown_path(path, repo)}",)


def run_binary(flavor: str, binary: str, folder: Path, out: Path, device: int,
                options: Options, repo: Path, env: dict[str, str], progress: str | None,
                to_log: bool, part: tuple[str, ...]) -> tuple[FlavorRun, list[str], bool]:
    """One binary, watched; its file closed if it was cut short. Returns the record, the
    benchmarks the file holds and whether the watchdog ended it."""
    stem = out.name.removesuffix(".json")
    out_json = shown_path(out, repo)
    health_json = shown_path(folder / health.health_file(stem), repo)
    command = benchmark_command(
        binary, device, options.repetitions, out_json, options.passthrough,
        health_json, progress, part,
    )
    shown = " ".join(f"{var}={shlex.quote(env[var])}" for var in DEVICE_ENV if var in env)
    shown = f"{shown} {shlex.join(command)}".strip()
    print(f"gmb: {shown}", flush=True)
    start = time.monotonic()
    watched_files = [out]
    try:
        if to_log:
            log_path = folder / f"{CONTINUED.sub('', stem)}.log"
            with open(log_path, "a", encoding="utf-8") as log:
                watched = stopping.run_watched(
                    command, cwd=repo, env=env, stdout=log, progress=[*watched_files, log_path],
                    stall_timeout=options.stall_timeout, stopper=run_state.stopper)
        else:
            watched = stopping.run_watched(
                command, cwd=repo, env=env, stdout=None, progress=watched_files,
                stall_timeout=options.stall_timeout, stopper=run_state.stopper)
        returncode = watched.returncode
    except OSError as err:
        print(f"gmb: cannot run {binary}: {err.strerror}", file=sys.stderr, flush=True)
        watched, returncode = stopping.Watched(127), 127
    wall_s = round(time.monotonic() - start, 3)
    interrupted = run_state.stopper.name if run_state.stopper.stopped else ""
    if returncode == run_state.WRITE_FAULT_STATUS:  # first: closing the file may fail the same way
        free = files.free_space(out)
        run_state.write_faults.append(f"cannot write {out_json} (the binary's line above says "
                                      f"why{'; ' + free if free else ''})")
    ran = close_cut_file(out, interrupted)
    if returncode not in (0, run_state.WRITE_FAULT_STATUS) and not interrupted \
            and watched.stalled_s is None:
        print(f"gmb: flavor {flavor} on GPU {device} failed with exit code {returncode}; going on",
              file=sys.stderr, flush=True)
    return FlavorRun(flavor=flavor, command=shown, exit_code=returncode, wall_s=wall_s,
                     interrupted=interrupted, longest_silence_s=watched.longest_silence_s), \
        ran, watched.stalled_s is not None


def start_record(options: Options, preset: str, info: dict[str, Any],
                  record: RunInfo | None = None) -> RunInfo:
    """The run record as a run (or a resume) starts: written before any benchmark runs, so
    even a run killed outright can be resumed with its own options."""
    part = runinfo.Part(command=options.gmb_command, started=datetime.now().isoformat(
        timespec="seconds"), gpu_uuid=str(info.get("gpu_uuid", "unknown")),
        git_sha=str(info.get("git_sha", "unknown")))
    if record is not None:
        return dataclasses.replace(record, parts=[*record.parts, part])
    recorded = {key: getattr(options, key) for key in RECORDED}
    recorded["flavors"] = list(options.flavors)
    recorded["passthrough"] = list(options.passthrough)
    return RunInfo(gmb_command=options.gmb_command, preset=preset, options=recorded,
                   parts=[part])
