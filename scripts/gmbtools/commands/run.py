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
import json
import os
import re
import shlex
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

from gmbtools.analysis import health
from gmbtools.data import node as node_record
from gmbtools.present import node_summary, summary
from gmbtools.data import packing, partial, results, runinfo
from gmbtools.commands import stopping
from gmbtools.errors import GmbError
from gmbtools.data.flavors import BINARIES, FLAVORS, json_name
from gmbtools.commands.repo import find_repo
from gmbtools.data.runinfo import FlavorRun, RunInfo

PASSTHROUGH_PREFIXES = ("--benchmark_", "--gmb_")

# Options gmb run sets itself. Google Benchmark lets the last copy of a flag win, so a user's
# copy would silently move or reshape the output the summary reads: refuse it, saying what to do.
_RESERVED = {
    "--benchmark_out": "gmb run names the output files; use --out DIR for the results root",
    "--benchmark_out_format": "gmb run writes JSON",
    "--benchmark_repetitions": "use --repetitions N",
    "--gmb_info": "gmb run queries the device itself",
    "--gmb_health_out": "gmb run keeps each flavor's health-<flavor>.json in the results folder",
    "--gmb_progress": "gmb run shows progress itself on a terminal",
    "--benchmark_report_aggregates_only": "gmb run keeps every repetition (the summary's run"
                                          " health and cv are read from them)",
    "--gmb_skip_list": "gmb run --resume and the watchdog pass it; use --benchmark_filter",
    "--benchmark_enable_random_interleaving": "a stop must find each benchmark's repetitions "
                                              "all run or all skipped",
}

# gpu_slug becomes a directory name: keep it to one plain path component.
SLUG = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]*")  # a gpu_slug: one plain path component

# Variables that decide which GPU `--device=N` is; recorded in front of each command.
_DEVICE_ENV = ("CUDA_DEVICE_ORDER", "CUDA_VISIBLE_DEVICES")

# Benchmarks that touch another GPU (the naming contract): what --gmb_peer=skip|only splits.
PEER_PREFIXES = ("peer/", "ref/memcpy_peer")
PEER_PART = "-peer"  # <flavor>-peer.json: the peer part of a concurrent node run, until merged
CONTINUATION = "-continued"  # <flavor>-continued.json: after a stall or for --resume, until merged


@dataclass(frozen=True)
class Options:
    """What the user asked `gmb run` for (see cli.py for the flags)."""

    device: int = 0
    flavors: tuple[str, ...] = FLAVORS
    repetitions: int = 5
    preset: str | None = None
    out: Path | None = None  # results root; default <repo>/results
    passthrough: tuple[str, ...] = ()
    gmb_command: str = "scripts/gmb run"
    cuda_archs: str | None = None  # e.g. "80;90": CMAKE_CUDA_ARCHITECTURES instead of the preset's
    devices: str | None = None  # "all" or "0,2": every named GPU, a folder each (a node run)
    concurrent: bool = False  # the node's GPUs all at once, as a loaded node runs
    stall_timeout: float | None = stopping.DEFAULT_STALL_TIMEOUT_S  # 0: no watchdog; None:
    # the recorded one (--resume) or the default
    resume: Path | None = None  # a stopped run's folder: run only what it misses
    force: bool = False  # resume on another GPU or build


# What --resume takes from the stopped run's run_info.json (the rest is the new command's).
RECORDED = ("device", "flavors", "repetitions", "preset", "passthrough", "cuda_archs", "devices",
            "concurrent", "stall_timeout")

# The stop of this gmb process: its signals are caught while benchmarks run (run()).
_stopper = stopping.Stopper()
# gmembench's exit status when it cannot write its file (EX_IOERR): the folder is full or
# gone, so the run stops there; _write_faults names the files.
WRITE_FAULT_STATUS = 74
_write_faults: list[str] = []


def parse_flavors(text: str) -> tuple[str, ...]:
    """`"default,cg"` -> ("default", "cg"), in the given order, without duplicates."""
    names = [name.strip() for name in text.split(",") if name.strip()]
    unknown = [name for name in names if name not in FLAVORS]
    if unknown or not names:
        shown = ", ".join(unknown) or repr(text)
        raise GmbError(f"--flavors: unknown flavor {shown}; choose from {','.join(FLAVORS)}", 2)
    return tuple(dict.fromkeys(names))


def passthrough_args(extra: list[str]) -> tuple[str, ...]:
    """Validate the arguments argparse did not know: only `--benchmark_*` and `--gmb_*` options
    go to the benchmark binaries; anything else is a user mistake, reported as such."""
    for arg in extra:
        if not arg.startswith(PASSTHROUGH_PREFIXES):
            raise GmbError(
                f"unrecognized argument {arg!r} (only --benchmark_*=VALUE and --gmb_*=VALUE"
                " options are passed on to the benchmarks)",
                2,
            )
        name = arg.split("=", 1)[0]
        if name in _RESERVED:
            raise GmbError(f"{name} is set by gmb run: {_RESERVED[name]}", 2)
    return tuple(extra)


def benchmark_command(
    binary: str, device: int, repetitions: int, out_json: str, passthrough: tuple[str, ...],
    health_json: str | None = None, progress: str | None = None, part: tuple[str, ...] = (),
) -> list[str]:
    """The exact command line for one flavor (`part`: which of its benchmarks, e.g.
    --gmb_peer=skip); the user's options come last."""
    return [
        binary,
        f"--device={device}",
        f"--benchmark_repetitions={repetitions}",
        "--benchmark_display_aggregates_only=true",
        f"--benchmark_out={out_json}",
        "--benchmark_out_format=json",
        *([f"--gmb_health_out={health_json}"] if health_json else []),
        *([f"--gmb_progress={progress}"] if progress else []),
        *part,
        *passthrough,
    ]


def check_node_options(options: Options) -> None:
    """A concurrent node run splits each flavor with --gmb_peer itself: a user's copy would
    put peer benchmarks of several GPUs on the links at once."""
    if options.concurrent and any(a.split("=", 1)[0] == "--gmb_peer" for a in options.passthrough):
        raise GmbError("--gmb_peer is set by gmb run --concurrent (the local families on every "
                       "GPU at once, then the peer family GPU by GPU); leave it out", 2)


def configure_command(preset: str, cuda_archs: str | None) -> list[str]:
    """`cmake --preset P`, with the user's CUDA architectures instead of the preset's."""
    command = ["cmake", "--preset", preset]
    if cuda_archs:
        command.append(f"-DCMAKE_CUDA_ARCHITECTURES={cuda_archs}")
    return command


def make_run_dir(results_root: Path, slug: str, now: datetime, suffix: str = "") -> Path:
    """Create and return a new `results_root/slug/YYYYmmdd-HHMMSS<suffix>` folder, adding -2,
    -3, ... when that name is taken. mkdir is the existence test, so even two runs started in
    the same second never share (or overwrite) a folder."""
    parent = results_root / slug
    parent.mkdir(parents=True, exist_ok=True)
    stamp = now.strftime("%Y%m%d-%H%M%S") + suffix
    folder, n = parent / stamp, 1
    while True:
        try:
            folder.mkdir()
            return folder
        except FileExistsError:
            n += 1
            folder = parent / f"{stamp}-{n}"


def choose_preset(override: str | None) -> str:
    """`release` (native architecture) where nvidia-smi lists a GPU, else `sm90`, which builds
    without one, so the no-GPU path still builds and then stops with the binary's message."""
    if override:
        return override
    try:
        listed = subprocess.run(["nvidia-smi", "-L"], capture_output=True, text=True, timeout=60)
    except (OSError, subprocess.TimeoutExpired):
        return "sm90"
    has_gpu = any(line.startswith("GPU ") for line in listed.stdout.splitlines())
    return "release" if has_gpu else "sm90"


def run(options: Options, repo: Path | None = None) -> Path:
    """Do the whole run; return the results folder. Raises GmbError after writing the summary
    when a flavor failed or the run was stopped, so the shell sees a non-zero status."""
    global _stopper
    repo = repo or find_repo()
    if options.resume:
        return resume(options, repo)
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
    with stopping.Stopper() as _stopper:
        if not options.devices:
            record = _start_record(options, preset, infos[options.device])
            runinfo.save(record, folder)
            problems = _run_device(folder, options.device, binaries, options, preset, repo, env,
                                   sys.stderr.isatty(), record)
        else:
            problems = _run_node(folder, devices, infos, binaries, options, preset, repo, env)
    return _ended(folder, problems)


def _ended(folder: Path, problems: list[str]) -> Path:
    """The last line names the folder; a stop or a problem becomes gmb's exit status."""
    print(folder, flush=True)
    if _write_faults:
        raise GmbError(f"cannot write {', '.join(_write_faults)} (the disk is full or the folder "
                       f"is gone; the binary's line above says which); every file written "
                       f"before is kept in {folder}")
    if _stopper.stopped:
        raise GmbError(f"interrupted by {_stopper.name}: the finished benchmarks are in {folder}"
                       f" (scripts/gmb run --resume {folder} runs the rest)",
                       128 + _stopper.signal)
    if problems:
        raise GmbError(f"{'; '.join(problems)} (results in {folder})")
    return folder


def _start_record(options: Options, preset: str, info: dict[str, Any],
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


def resume(options: Options, repo: Path) -> Path:
    """`gmb run --resume DIR`: run what a stopped run (or node run) did not finish, with the
    options it recorded, into the same folder, GPU by GPU; then its summary and figures as if
    it had not stopped. Refuses another GPU or build unless --force."""
    global _stopper
    folder = Path(options.resume or ".").resolve()
    if not folder.is_dir():
        raise GmbError(f"--resume: {folder}: no such folder", 2)
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
    with stopping.Stopper() as _stopper:
        for index, sub in subfolders:
            if _stopper.stopped:
                break
            device = resumed.device if index is None else index
            info = device_info(binaries[resumed.flavors[0]], device, repo, env)
            record = records[sub]
            if record is None:
                raise GmbError(f"--resume: {sub} has no run_info.json", 2)
            _check_same(sub, record, info, options.force)
            done = _missing(sub, device, binaries, resumed, repo, env)
            record = _start_record(resumed, preset, info, record)
            runinfo.save(record, sub)
            found = _run_device(sub, device, binaries, resumed, preset, repo, env,
                                sys.stderr.isatty(), record, done=done)
            problems += [f"GPU {index}: {p}" for p in found] if node else found
        if node:
            print(f"gmb: wrote {node_summary.write(folder)}", flush=True)
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
        path = results.stored(folder / json_name(flavor))
        finished: set[str] = set()
        if path.exists():
            doc, _ = partial.read(path)
            finished = set(partial.finished(doc))
            listed = set(_listed(binaries[flavor], device, options.passthrough, repo, env))
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


def device_env() -> dict[str, str]:
    """The environment the binaries run in. CUDA numbers devices fastest-first by default,
    nvidia-smi by PCI bus: make --device=N and `nvidia-smi -i N` the same GPU unless the user
    chose an order."""
    env = dict(os.environ)
    env.setdefault("CUDA_DEVICE_ORDER", "PCI_BUS_ID")
    return env


def resolve_devices(text: str, env: dict[str, str]) -> list[int]:
    """`all` (every GPU CUDA sees: those CUDA_VISIBLE_DEVICES lists, else every GPU nvidia-smi
    lists) or `0,2`: the device indices of a node run."""
    if text != "all":
        try:
            devices = [int(part) for part in text.split(",") if part.strip()]
        except ValueError:
            raise GmbError(f"--devices: {text!r} is not 'all' or a list like 0,2", 2) from None
        if not devices or min(devices) < 0:
            raise GmbError(f"--devices: {text!r} is not 'all' or a list like 0,2", 2)
        return list(dict.fromkeys(devices))
    visible = [d for d in env.get("CUDA_VISIBLE_DEVICES", "").split(",") if d.strip()]
    if "CUDA_VISIBLE_DEVICES" in env:
        if not visible:
            raise GmbError("--devices all: CUDA_VISIBLE_DEVICES is empty: no GPU is visible")
        return list(range(len(visible)))
    try:
        listed = subprocess.run(["nvidia-smi", "--query-gpu=index", "--format=csv,noheader"],
                                capture_output=True, text=True, env=env)
    except OSError:
        raise GmbError("--devices all: nvidia-smi not found; name the devices (--devices 0,1)") \
            from None
    devices = [int(line) for line in listed.stdout.split() if line.strip().isdigit()]
    if listed.returncode != 0 or not devices:
        raise GmbError("--devices all: nvidia-smi lists no GPU")
    return devices


def _run_device(folder: Path, device: int, binaries: dict[str, str], options: Options,
                preset: str, repo: Path, env: dict[str, str], interactive: bool,
                record: RunInfo, done: dict[str, set[str]] | None = None) -> list[str]:
    """Every flavor on one GPU into `folder`, then run_info.json, summary.md and the figures;
    returns what went wrong. On a terminal, a progress line per flavor replaces Google
    Benchmark's table (kept in <flavor>.log). `done`: per flavor, what a resume need not run."""
    runs = _run_flavors(folder, device, binaries, options, repo, env, interactive, done=done)
    return _finish_device(folder, runs, options, preset, record=record)


def _run_flavors(folder: Path, device: int, binaries: dict[str, str], options: Options,
                 repo: Path, env: dict[str, str], interactive: bool,
                 to_logs: bool = False, part: tuple[str, ...] = (),
                 done: dict[str, set[str]] | None = None) -> list[FlavorRun]:
    """The flavors, in order, until a stop; `to_logs` keeps every table in its <flavor>.log
    (GPUs running at once)."""
    runs: list[FlavorRun] = []
    for k, flavor in enumerate(options.flavors, start=1):
        if _stopper.stopped or _write_faults:
            break
        if done is not None and flavor not in done:
            continue  # a resume: this flavor is complete
        runs += _run_flavor(flavor, binaries[flavor], folder, device, options, repo, env,
                            f"{flavor} {k}/{len(options.flavors)}" if interactive else None,
                            to_logs, part, done=(done or {}).get(flavor, set()))
    return runs


def _finish_device(folder: Path, runs: list[FlavorRun], options: Options, preset: str,
                   peer_runs: tuple[FlavorRun, ...] = (), record: RunInfo | None = None
                   ) -> list[str]:
    """Compress the JSON files, then run_info.json, summary.md and (unless stopped) the
    figures of one GPU's folder; what went wrong. A failed write names its file."""
    try:
        for flavor in options.flavors:
            if (folder / json_name(flavor)).is_file():
                packing.pack(folder / json_name(flavor))
        parts = [*options.flavors, *(f"{run.flavor}{PEER_PART}" for run in peer_runs)]
        states = {part: health.load_state(folder, part) for part in parts}
        record = record or RunInfo(gmb_command=options.gmb_command, preset=preset)
        record = dataclasses.replace(
            record, flavor_runs=[*record.flavor_runs, *runs],
            health={**record.health,
                    **{part: state for part, state in states.items() if state is not None}},
            peer_runs=[*record.peer_runs, *peer_runs],
            interrupted=_stopper.name if _stopper.stopped else "")
        runinfo.save(record, folder)
        written = summary.write_summary(folder, record)
    except OSError as err:
        raise GmbError(f"cannot write {err.filename or folder}: {err.strerror or err}; the "
                       f"files written before it are kept") from None
    if _write_faults:
        return []  # _ended says it in one line
    print(f"gmb: wrote {written.path}", flush=True)
    if not _stopper.stopped and not _write_faults:  # --resume or gmb report draws them
        figures_and_report(folder)
    stopped = {r.flavor for r in [*runs, *peer_runs] if r.interrupted}
    problems = [f"{r.flavor} exited with {r.exit_code}" for r in runs
                if r.exit_code != 0 and not r.stalled and r.flavor not in stopped]
    problems += [f"the peer part of {r.flavor} exited with {r.exit_code}"
                 for r in peer_runs if r.exit_code != 0 and not r.interrupted]
    problems += [f"{r.flavor}: {name} stalled (no output for {options.stall_timeout:.0f} s)"
                 for r in [*runs, *peer_runs] for name in r.stalled]
    return problems + written.unreadable


def _run_node(folder: Path, devices: list[int], infos: dict[int, dict[str, Any]],
              binaries: dict[str, str], options: Options, preset: str, repo: Path,
              env: dict[str, str]) -> list[str]:
    """Each GPU into its own gpu<index>-<uuid>/ folder, one after another or all at once
    (--concurrent: with two GPUs or more, the local families at once, then the peer family GPU
    by GPU), then node.json and the node's summary.md."""
    subfolders = {d: folder / f"gpu{d}-{infos[d].get('gpu_uuid', 'unknown')}" for d in devices}
    records = {d: _start_record(options, preset, infos[d]) for d in devices}
    for d, sub in subfolders.items():
        sub.mkdir()
        runinfo.save(records[d], sub)
    node = node_record.Node(
        gmb_command=options.gmb_command, concurrent=options.concurrent,
        devices=[node_record.NodeDevice(index=d, uuid=str(infos[d].get("gpu_uuid")),
                                         name=str(infos[d].get("gpu_name")),
                                         folder=subfolders[d].name) for d in devices])
    node_record.save_node(folder, node)
    split = options.concurrent and len(devices) > 1  # one GPU has no peer to share a link with

    def flavors(device: int) -> list[FlavorRun]:
        return _run_flavors(subfolders[device], device, binaries, options, repo, env, False,
                            to_logs=options.concurrent,
                            part=("--gmb_peer=skip",) if split else ())

    problems = []
    peer_runs: dict[int, list[FlavorRun]] = {d: [] for d in devices}
    if options.concurrent:  # the binaries at once; summaries and figures one at a time after
        start = time.monotonic()
        with ThreadPoolExecutor(max_workers=len(devices)) as pool:
            runs = dict(zip(devices, pool.map(flavors, devices)))
        if split:
            phases = [node_record.NodePhase("local", devices, _seconds_since(start))]
            for k, d in enumerate(devices):
                if _stopper.stopped:
                    break
                start = time.monotonic()
                partner = devices[(k + 1) % len(devices)]
                peer_runs[d], failed = _run_peer_part(subfolders[d], d, partner, binaries,
                                                      options, repo, env, sys.stderr.isatty())
                problems += [f"GPU {d}: {p}" for p in failed]
                phases.append(node_record.NodePhase("peer", [d], _seconds_since(start),
                                                     partner))
            node = node_record.Node(node.gmb_command, node.concurrent, node.devices, phases)
            node_record.save_node(folder, node)
        for d in devices:
            problems += [f"GPU {d}: {p}" for p in _finish_device(
                subfolders[d], runs[d], options, preset, tuple(peer_runs[d]), records[d])]
    else:
        for d in devices:
            problems += [f"GPU {d}: {p}" for p in _finish_device(
                subfolders[d], flavors(d), options, preset, record=records[d])]
    path = node_summary.write(folder)
    print(f"gmb: wrote {path}", flush=True)
    return problems


def _run_peer_part(folder: Path, device: int, partner: int, binaries: dict[str, str],
                   options: Options, repo: Path, env: dict[str, str],
                   interactive: bool) -> tuple[list[FlavorRun], list[str]]:
    """The peer family of every flavor on `device` alone (`--gmb_peer=only`, the partner the
    next GPU of the node's list unless the user named one), each merged into its flavor's
    file. A flavor with no peer benchmark to run (a filter, a build that runs the family in
    the default flavor only, no peer access) is skipped with a note."""
    partner_flag = () if any(a.startswith("--gmb_peer_partner=") for a in options.passthrough) \
        else (f"--gmb_peer_partner={partner}",)
    runs, problems = [], []
    for flavor in options.flavors:
        if not any(name.startswith(PEER_PREFIXES) for name in _listed(
                binaries[flavor], device, (*partner_flag, *options.passthrough), repo, env)):
            print(f"gmb: GPU {device}, flavor {flavor}: no peer benchmark to run", flush=True)
            continue
        if _stopper.stopped:
            break
        ran = _run_flavor(flavor, binaries[flavor], folder, device, options, repo, env,
                          f"GPU {device} {flavor} peer" if interactive else None, True,
                          part=("--gmb_peer=only", *partner_flag), suffix=PEER_PART)
        runs += ran
        part = folder / f"{flavor}{PEER_PART}.json"
        if part.exists() or ran[-1].exit_code == 0:  # a failed run is reported by its exit code
            problem = merge_part(folder / json_name(flavor), part)
            problems += [problem] if problem else []
    return runs, problems


def _listed(binary: str, device: int, args: tuple[str, ...], repo: Path,
            env: dict[str, str]) -> list[str]:
    """The names `binary --benchmark_list_tests` prints with these options, in run order and
    without Google Benchmark's suffix; none where it fails (the run of that flavor says why)."""
    command = [binary, f"--device={device}", *args, "--benchmark_list_tests=true"]
    try:
        proc = subprocess.run(command, cwd=repo, env=env, capture_output=True, text=True)
    except OSError:
        return []
    names = proc.stdout.split() if proc.returncode == 0 else []
    return [name.removesuffix(partial.TIME_SUFFIX) for name in names]


def merge_part(into: Path, part: Path) -> str | None:
    """The peer part's file merged into the flavor's (its counts added up)."""
    return _merge(into, part, adds_up=True)


def _seconds_since(start: float) -> float:
    return round(time.monotonic() - start, 3)


def build(repo: Path, env: dict[str, str], preset: str | None, cuda_archs: str | None,
          targets: list[str]) -> str:
    """scripts/setup, then configure and build `targets`; returns the preset used."""
    if not (repo / "scripts" / "setup").is_file():
        raise GmbError(f"setup failed: {repo / 'scripts' / 'setup'} not found")
    _step("setup failed", ["bash", "scripts/setup"], repo, env)
    preset = choose_preset(preset)
    _step("cmake configure failed", configure_command(preset, cuda_archs), repo, env)
    _step("build failed", ["cmake", "--build", "--preset", preset, "--target", *targets], repo, env)
    return preset


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


def _step(failure: str, command: list[str], repo: Path, env: dict[str, str]) -> None:
    """Run one preparation step with its output on the terminal; stop the run if it fails."""
    print(f"gmb: {shlex.join(command)}", flush=True)
    try:
        returncode = subprocess.run(command, cwd=repo, env=env).returncode
    except FileNotFoundError:
        raise GmbError(f"{failure}: {command[0]} not found on PATH") from None
    if returncode != 0:
        raise GmbError(f"{failure} ({shlex.join(command)} exited with {returncode})", returncode)


def device_info(binary: str, device: int, repo: Path, env: dict[str, str],
                timeout: float | None = None) -> dict[str, Any]:
    """The binary's `--gmb_info` JSON. Without a usable GPU the binary exits non-zero with a
    one-line reason on stderr; that line becomes gmb's error, with the binary's exit code.
    Past `timeout` seconds the error starts with "timeout:"."""
    command = [binary, f"--device={device}", "--gmb_info"]
    try:
        proc = subprocess.run(command, cwd=repo, env=env, capture_output=True, text=True,
                              timeout=timeout)
    except subprocess.TimeoutExpired:
        raise GmbError(f"timeout: {shlex.join(command)} did not answer within "
                       f"{timeout:.0f} s") from None
    except OSError as err:
        raise GmbError(f"cannot run {binary} ({err.strerror}); did the build make it?") from None
    if proc.returncode != 0:
        lines = [line.strip() for line in proc.stderr.splitlines() if line.strip()]
        reason = lines[-1] if lines else f"{shlex.join(command)} exited with {proc.returncode}"
        raise GmbError(reason, proc.returncode)
    try:
        info = json.loads(proc.stdout)
    except json.JSONDecodeError:
        raise GmbError(f"{shlex.join(command)} did not print a JSON object") from None
    if not isinstance(info, dict):
        raise GmbError(f"{shlex.join(command)} did not print a JSON object")
    slug = info.get("gpu_slug")
    if not isinstance(slug, str) or not SLUG.fullmatch(slug):
        raise GmbError(f"{shlex.join(command)} printed no usable gpu_slug (got {slug!r})")
    return info


def _run_flavor(
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
    while not _stopper.stopped:
        into = folder / f"{stem}{CONTINUATION}.json" if target.exists() else target
        skip_args = _skip_list(folder, stem, skip, repo)
        run, ran, stalled = _run_binary(flavor, binary, folder, into, device, options, repo,
                                        env, progress, to_log or progress is not None,
                                        (*part, *skip_args))
        go_on = False
        if stalled:  # the watchdog: which benchmark was running, and what is left
            left = [n for n in _listed(binary, device, (*part, *skip_args, *options.passthrough),
                                       repo, env) if n not in ran]
            name = left[0] if left else "(unknown: it had written every benchmark)"
            run = dataclasses.replace(run, stalled=[name])
            print(f"gmb: {flavor} on GPU {device}: {name} stalled (no output for "
                  f"{options.stall_timeout:.0f} s); going on with the next "
                  f"benchmark", file=sys.stderr, flush=True)
            skip |= set(ran) | {name}
            go_on = len(left) > 1  # nothing after it: the flavor is done
        if into != target:
            problem = _merge(target, into, adds_up=False)
            if problem:
                print(f"gmb: {problem}", file=sys.stderr, flush=True)
            health.merge_states(folder, stem, f"{stem}{CONTINUATION}")
        if run.stalled:
            _note_stalled(target, run.stalled[0], options.stall_timeout)
        runs.append(run)
        if not go_on:
            break
    return runs


def _skip_list(folder: Path, stem: str, names: set[str], repo: Path) -> tuple[str, ...]:
    """--gmb_skip_list=FILE naming what this binary need not run (kept in the folder: the
    recorded command refers to it)."""
    if not names:
        return ()
    path = folder / f"skip-{stem}.txt"
    path.write_text("".join(f"{name}\n" for name in sorted(names)), encoding="utf-8")
    return (f"--gmb_skip_list={shown_path(path, repo)}",)


def _run_binary(flavor: str, binary: str, folder: Path, out: Path, device: int,
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
    shown = " ".join(f"{var}={shlex.quote(env[var])}" for var in _DEVICE_ENV if var in env)
    shown = f"{shown} {shlex.join(command)}".strip()
    print(f"gmb: {shown}", flush=True)
    start = time.monotonic()
    watched_files = [out]
    try:
        if to_log:
            log_path = folder / f"{flavor}{stem[len(flavor):].removesuffix(CONTINUATION)}.log"
            with open(log_path, "a", encoding="utf-8") as log:
                watched = stopping.run_watched(
                    command, cwd=repo, env=env, stdout=log, progress=[*watched_files, log_path],
                    stall_timeout=options.stall_timeout, stopper=_stopper)
        else:
            watched = stopping.run_watched(
                command, cwd=repo, env=env, stdout=None, progress=watched_files,
                stall_timeout=options.stall_timeout, stopper=_stopper)
        returncode = watched.returncode
    except OSError as err:
        print(f"gmb: cannot run {binary}: {err.strerror}", file=sys.stderr, flush=True)
        watched, returncode = stopping.Watched(127), 127
    wall_s = round(time.monotonic() - start, 3)
    interrupted = _stopper.name if _stopper.stopped else ""
    if returncode == WRITE_FAULT_STATUS:  # first: closing the file may fail the same way
        _write_faults.append(out_json)
    ran = close_cut_file(out, interrupted)
    if returncode not in (0, WRITE_FAULT_STATUS) and not interrupted \
            and watched.stalled_s is None:
        print(f"gmb: flavor {flavor} on GPU {device} failed with exit code {returncode}; going on",
              file=sys.stderr, flush=True)
    return FlavorRun(flavor=flavor, command=shown, exit_code=returncode, wall_s=wall_s,
                     interrupted=interrupted, longest_silence_s=watched.longest_silence_s), \
        ran, watched.stalled_s is not None


def close_cut_file(path: Path, interrupted: str) -> list[str]:
    """A file the binary left cut short (killed outright) closed after its last whole
    benchmark, saying so; the benchmarks it holds. [] where there is no file or nothing whole."""
    if not path.exists():
        return []
    try:
        doc, cut = partial.read(path)
    except GmbError as err:
        print(f"gmb: {err}", file=sys.stderr, flush=True)
        return []
    if cut:
        if interrupted:
            doc["context"][partial.INTERRUPTED] = partial.interrupted_text(
                interrupted, doc, " (the binary was killed; closed by gmb run)")
        try:
            partial.write(doc, path)
        except OSError as err:  # a full disk: the cut file stays as the binary left it
            print(f"gmb: cannot close {path}: {err.strerror or err}", file=sys.stderr, flush=True)
    return partial.names(doc)


def _note_stalled(path: Path, name: str, timeout: float) -> None:
    """The flavor file's context names every benchmark the watchdog ended (gmb_stalled)."""
    try:
        doc, _ = partial.read(path)
    except GmbError:
        return
    note = f"{name} (no output for {timeout:.0f} s)"
    old = doc["context"].get(partial.STALLED)
    doc["context"][partial.STALLED] = f"{old}; {note}" if old else note
    partial.write(doc, path)


def _merge(into: Path, part: Path, adds_up: bool) -> str | None:
    """Append the benchmarks of `part` to `into` and remove `part`. Where either cannot be
    read, both stay as they are and the reason comes back."""
    try:
        extra, _ = partial.read(part)
    except GmbError as err:
        return f"nothing to merge: {err}"
    if not into.exists():
        part.rename(into)
        return None
    try:
        doc, _ = partial.read(into)
    except GmbError as err:
        return f"{err}; {part.name} left beside it"
    partial.write(partial.merge(doc, extra, adds_up), into)
    part.unlink()
    return None


def shown_path(path: Path, repo: Path) -> str:
    """Paths inside the repo are given relative to it (the commands run there), so recorded
    commands hold no user's home directory and stay valid in any checkout."""
    try:
        return str(path.relative_to(repo.resolve()))
    except ValueError:
        return str(path)
