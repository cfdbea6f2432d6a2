"""`gmb run`: set up, build, run each flavor on one GPU, and leave a new, self-describing results
folder (`results/<gpu_slug>/<YYYYmmdd-HHMMSS>/`) with the JSON files (gzip-compressed at the
end), run_info.json, summary.md and, where pandas and matplotlib are installed, figures/ and
report.md.

A node run with --concurrent runs each GPU's local families at once (`--gmb_peer=skip`), then
the peer family GPU by GPU (`--gmb_peer=only`), so no two peer benchmarks share a link; the
peer part's benchmarks are merged into each flavor's file.

A run survives the real world (stopping.py, partial.py): a stop signal is passed on to the
binary, which closes its file; gmb then writes run_info.json and summary.md saying so and exits
128 + N; `--resume DIR` runs what is missing. A binary whose file has not grown for
--stall-timeout seconds is ended, its benchmark named as stalled, and the flavor goes on with
the next one.

Standard library only: GPU machines may have no network and no pandas.
"""

import dataclasses
import sys
from datetime import datetime
from pathlib import Path
from typing import Any

from gmbtools.commands import run_state, stopping
from gmbtools.commands.binaries import (build, device_env, device_info, list_benchmarks,
                                        make_run_dir, resolve_devices)
from gmbtools.commands.flavor_files import fold_continuations
from gmbtools.commands.flavor_runs import run_device, start_record
from gmbtools.commands.node_run import partner_flag, partners, run_node
from gmbtools.commands.repo import find_repo, tracked
from gmbtools.commands.run_options import Options, check_node_options
from gmbtools.data import node as node_record
from gmbtools.data import files, partial, results, runinfo
from gmbtools.data.flavors import BINARIES, json_name
from gmbtools.data.runinfo import RunInfo
from gmbtools.errors import GmbError
from gmbtools.present import node_summary


def run(options: Options, repo: Path | None = None) -> Path:
    """Do the whole run; return the results folder. Raises GmbError after writing the summary
    when a flavor failed or the run was stopped, so the shell sees a non-zero status."""
    repo = repo or find_repo()
    if options.resume:
        try:
            return resume(options, repo)
        except OSError as err:  # the folder's files, rewritten before the binaries run
            if not files.is_full(err):
                raise
            raise GmbError(f"{files.write_error(err, Path(options.resume))}: every file of the "
                           "folder is whole; make room and resume again",
                           run_state.WRITE_FAULT_STATUS) from None
    check_node_options(options)
    env = device_env()
    devices = resolve_devices(options.devices, env) if options.devices else [options.device]
    preset = build(repo, env, options.preset, options.cuda_archs,
                   [BINARIES[flavor] for flavor in options.flavors])
    binaries = {flavor: f"build/{preset}/{BINARIES[flavor]}" for flavor in options.flavors}
    infos = {d: device_info(binaries[options.flavors[0]], d, repo, env) for d in devices}
    results_root = (options.out or repo / "results").resolve()
    folder = make_run_dir(results_root, infos[devices[0]]["gpu_slug"], datetime.now())
    print(f"gmb: results folder {folder}", flush=True)
    with stopping.Stopper() as run_state.stopper:
        if not options.devices:
            record = start_record(options, preset, infos[options.device])
            runinfo.save(record, folder)
            problems = run_device(folder, options.device, binaries, options, preset, repo, env,
                                   sys.stderr.isatty(), record)
        else:
            problems = run_node(folder, devices, infos, binaries, options, preset, repo, env)
    return _ended(folder, problems)


def _ended(folder: Path, problems: list[str]) -> Path:
    """The last line names the folder; a stop or a problem becomes gmb's exit status."""
    print(folder, flush=True)
    faults, stopper = run_state.write_faults, run_state.stopper
    if faults:
        raise GmbError(f"{faults[0]}: every benchmark finished before is kept in {folder} "
                       f"(make room, then scripts/gmb run --resume {folder})",
                       run_state.WRITE_FAULT_STATUS)
    if stopper.stopped:
        raise GmbError(f"interrupted by {stopper.name}: the finished benchmarks are in {folder}"
                       f" (scripts/gmb run --resume {folder} runs the rest)",
                       128 + stopper.signal)
    if problems:
        raise GmbError(f"{'; '.join(problems)} (results in {folder})")
    return folder


def resume(options: Options, repo: Path) -> Path:
    """`gmb run --resume DIR`: run what a stopped run (or node run) did not finish, with the
    options it recorded, into the same folder, GPU by GPU; then its summary and figures as if
    it had not stopped. Refuses another GPU or build unless --force."""
    folder = Path(options.resume or ".").resolve()
    if not folder.is_dir():
        raise GmbError(f"--resume: {folder}: no such folder", 2)
    committed = tracked(p for sub in (folder, *folder.glob("gpu*")) for p in sub.iterdir())
    if committed:  # committed results are what the docs cite: never rewritten in place
        raise GmbError(f"--resume: {folder} is committed to git ({committed[0].name} is "
                       f"tracked): resume a copy of it (cp -r {folder} /tmp/) instead", 2)
    node = node_record.load_node(folder) if (folder / node_record.NODE_FILE).exists() else None
    subfolders = [(d.index, folder / d.folder) for d in node.devices] if node else [(None, folder)]
    records = {sub: runinfo.load(sub) for _, sub in subfolders}
    first = records[subfolders[0][1]]
    if first is None or not first.options:
        raise GmbError(f"--resume: {subfolders[0][1]} has no run_info.json with the options of "
                       "its run (not made by this gmb run); start a new run instead", 2)
    recorded = first.options
    resumed = dataclasses.replace(
        options, resume=None, flavors=tuple(recorded["flavors"]),
        repetitions=int(recorded["repetitions"]), passthrough=tuple(recorded["passthrough"]),
        cuda_archs=recorded.get("cuda_archs"), device=int(recorded["device"]),
        stall_timeout=options.stall_timeout if options.stall_timeout is not None
        else float(recorded.get("stall_timeout") or 0), concurrent=False)
    env = device_env()
    preset = build(repo, env, first.preset, resumed.cuda_archs,
                   [BINARIES[flavor] for flavor in resumed.flavors])
    binaries = {flavor: f"build/{preset}/{BINARIES[flavor]}" for flavor in resumed.flavors}
    print(f"gmb: resuming {folder}", flush=True)
    problems = []
    with stopping.Stopper() as run_state.stopper:
        for index, sub in subfolders:
            if run_state.stopper.stopped:
                break
            device = resumed.device if index is None else index
            info = device_info(binaries[resumed.flavors[0]], device, repo, env)
            record = records[sub]
            if record is None:
                raise GmbError(f"--resume: {sub} has no run_info.json", 2)
            _check_same(sub, record, info, options.force)
            ours = resumed
            if node and node.concurrent and len(node.devices) > 1:  # that run's partners
                pairs = partners([d.index for d in node.devices])
                ours = dataclasses.replace(resumed, passthrough=(
                    *resumed.passthrough, *partner_flag(resumed, pairs[device])))
            done = _missing(sub, device, binaries, ours, repo, env)
            record = start_record(ours, preset, info, record)
            runinfo.save(record, sub)
            found = run_device(sub, device, binaries, ours, preset, repo, env,
                                sys.stderr.isatty(), record, done=done)
            problems += [f"GPU {index}: {p}" for p in found] if node else found
        if node:
            print(f"gmb: wrote {node_summary.write(folder)[0]}", flush=True)
    return _ended(folder, problems)


def _check_same(folder: Path, record: RunInfo, info: dict[str, Any], force: bool) -> None:
    """A resume measures on the GPU and with the build of the run it completes."""
    if not record.parts or force:
        return
    last = record.parts[-1]
    for what, was, now in (("GPU", last.gpu_uuid, str(info.get("gpu_uuid", "unknown"))),
                           ("build (git sha)", last.git_sha, str(info.get("git_sha", "unknown")))):
        if was != now:
            raise GmbError(f"--resume: {folder} was measured with {what} {was}, this is {now}: "
                           "its numbers would not be one run's; pass --force to resume anyway", 2)


def _missing(folder: Path, device: int, binaries: dict[str, str], options: Options,
             repo: Path, env: dict[str, str]) -> dict[str, set[str]]:
    """Per flavor that is not complete, the benchmarks its file holds finished (what the
    resume skips); its file rewritten, uncompressed, without the errored and cut-off ones."""
    done: dict[str, set[str]] = {}
    for flavor in options.flavors:
        fold_continuations(folder, flavor)
        path = results.stored(folder / json_name(flavor))
        finished: set[str] = set()
        if path.exists():
            doc, _ = partial.read(path)
            finished = set(partial.finished(doc))
            listed = set(list_benchmarks(binaries[flavor], device, options.passthrough, repo, env))
            if listed and listed <= finished:  # a stop during its last benchmark: complete too
                if doc["context"].pop(partial.INTERRUPTED, None) is not None:
                    partial.write(doc, folder / json_name(flavor))
                    if path.name.endswith(".gz"):
                        path.unlink()
                print(f"gmb: {folder.name}: {flavor} is complete ({len(finished)} benchmarks)",
                      flush=True)
                continue
            doc = partial.without(doc, set(partial.names(doc)) - finished)
            doc["context"].pop(partial.STALLED, None)
            partial.write(doc, folder / json_name(flavor))
            if path.name.endswith(".gz"):
                path.unlink()
        print(f"gmb: {folder.name}: {flavor}: {len(finished)} benchmarks kept, running the rest",
              flush=True)
        done[flavor] = finished
    return done


