"""`gmb run`: set up, build, run each flavor on one GPU, and leave a new, self-describing results
folder (`results/<gpu_slug>/<YYYYmmdd-HHMMSS>/`) with the JSON files, run_info.json,
summary.md and, where pandas and matplotlib are installed, figures/ and report.md.

Standard library only: GPU machines may have no network and no pandas.
"""

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

from . import health, node_summary, runinfo, summary
from .errors import GmbError
from .flavors import BINARIES, FLAVORS, json_name
from .repo import find_repo
from .runinfo import FlavorRun, RunInfo

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
}

# gpu_slug becomes a directory name: keep it to one plain path component.
_SLUG = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]*")

# Variables that decide which GPU `--device=N` is; recorded in front of each command.
_DEVICE_ENV = ("CUDA_DEVICE_ORDER", "CUDA_VISIBLE_DEVICES")


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
    health_json: str | None = None, progress: str | None = None,
) -> list[str]:
    """The exact command line for one flavor; the user's options come last."""
    return [
        binary,
        f"--device={device}",
        f"--benchmark_repetitions={repetitions}",
        "--benchmark_display_aggregates_only=true",
        f"--benchmark_out={out_json}",
        "--benchmark_out_format=json",
        *([f"--gmb_health_out={health_json}"] if health_json else []),
        *([f"--gmb_progress={progress}"] if progress else []),
        *passthrough,
    ]


def configure_command(preset: str, cuda_archs: str | None) -> list[str]:
    """`cmake --preset P`, with the user's CUDA architectures instead of the preset's."""
    command = ["cmake", "--preset", preset]
    if cuda_archs:
        command.append(f"-DCMAKE_CUDA_ARCHITECTURES={cuda_archs}")
    return command


def make_run_dir(results_root: Path, slug: str, now: datetime) -> Path:
    """Create and return a new `results_root/slug/YYYYmmdd-HHMMSS` folder, adding -2, -3, ...
    when that name is taken. mkdir is the existence test, so even two runs started in the same
    second never share (or overwrite) a folder."""
    parent = results_root / slug
    parent.mkdir(parents=True, exist_ok=True)
    stamp = now.strftime("%Y%m%d-%H%M%S")
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
    when a flavor failed, so the shell sees a non-zero status."""
    repo = repo or find_repo()
    env = dict(os.environ)
    # CUDA numbers devices fastest-first by default, nvidia-smi by PCI bus: make --device=N and
    # `nvidia-smi -i N` the same GPU unless the user chose an order.
    env.setdefault("CUDA_DEVICE_ORDER", "PCI_BUS_ID")
    devices = resolve_devices(options.devices, env) if options.devices else [options.device]
    preset = build(repo, env, options.preset, options.cuda_archs,
                   [BINARIES[flavor] for flavor in options.flavors])
    binaries = {flavor: f"build/{preset}/{BINARIES[flavor]}" for flavor in options.flavors}
    infos = {d: device_info(binaries[options.flavors[0]], d, repo, env) for d in devices}
    results_root = (options.out or repo / "results").resolve()
    folder = make_run_dir(results_root, infos[devices[0]]["gpu_slug"], datetime.now())
    print(f"gmb: results folder {folder}", flush=True)
    if not options.devices:
        problems = _run_device(folder, options.device, binaries, options, preset, repo, env,
                               sys.stderr.isatty())
    else:
        problems = _run_node(folder, devices, infos, binaries, options, preset, repo, env)
    print(folder, flush=True)
    if problems:
        raise GmbError(f"{'; '.join(problems)} (results in {folder})")
    return folder


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
                preset: str, repo: Path, env: dict[str, str], interactive: bool) -> list[str]:
    """Every flavor on one GPU into `folder`, then run_info.json, summary.md and the figures;
    returns what went wrong. On a terminal, a progress line per flavor replaces Google
    Benchmark's table (kept in <flavor>.log)."""
    runs = _run_flavors(folder, device, binaries, options, repo, env, interactive)
    return _finish_device(folder, runs, options, preset)


def _run_flavors(folder: Path, device: int, binaries: dict[str, str], options: Options,
                 repo: Path, env: dict[str, str], interactive: bool,
                 to_logs: bool = False) -> list[FlavorRun]:
    """The flavors, in order; `to_logs` keeps every table in its <flavor>.log (GPUs running
    at once)."""
    return [
        _run_flavor(flavor, binaries[flavor], folder, device, options, repo, env,
                    f"{flavor} {k}/{len(options.flavors)}" if interactive else None, to_logs)
        for k, flavor in enumerate(options.flavors, start=1)
    ]


def _finish_device(folder: Path, runs: list[FlavorRun], options: Options,
                   preset: str) -> list[str]:
    """run_info.json, summary.md and the figures of one GPU's folder; what went wrong."""
    states = {flavor: health.load_state(folder, flavor) for flavor in options.flavors}
    record = RunInfo(
        gmb_command=options.gmb_command,
        preset=preset,
        flavor_runs=runs,
        health={flavor: state for flavor, state in states.items() if state is not None},
    )
    runinfo.save(record, folder)
    written = summary.write_summary(folder, record)
    print(f"gmb: wrote {written.path}", flush=True)
    figures_and_report(folder)
    problems = [f"{r.flavor} exited with {r.exit_code}" for r in runs if r.exit_code != 0]
    return problems + written.unreadable


def _run_node(folder: Path, devices: list[int], infos: dict[int, dict[str, Any]],
              binaries: dict[str, str], options: Options, preset: str, repo: Path,
              env: dict[str, str]) -> list[str]:
    """Each GPU into its own gpu<index>-<uuid>/ folder, one after another or all at once
    (--concurrent), then node.json and the node's summary.md."""
    subfolders = {d: folder / f"gpu{d}-{infos[d].get('gpu_uuid', 'unknown')}" for d in devices}
    for sub in subfolders.values():
        sub.mkdir()
    node_summary.save_node(folder, node_summary.Node(
        gmb_command=options.gmb_command, concurrent=options.concurrent,
        devices=[node_summary.NodeDevice(index=d, uuid=str(infos[d].get("gpu_uuid")),
                                         name=str(infos[d].get("gpu_name")),
                                         folder=subfolders[d].name) for d in devices]))

    def flavors(device: int) -> list[FlavorRun]:
        return _run_flavors(subfolders[device], device, binaries, options, repo, env, False,
                            to_logs=options.concurrent)

    problems = []
    if options.concurrent:  # the binaries at once; summaries and figures one at a time after
        with ThreadPoolExecutor(max_workers=len(devices)) as pool:
            runs = dict(zip(devices, pool.map(flavors, devices)))
        for d in devices:
            problems += [f"GPU {d}: {p}"
                         for p in _finish_device(subfolders[d], runs[d], options, preset)]
    else:
        for d in devices:
            problems += [f"GPU {d}: {p}"
                         for p in _finish_device(subfolders[d], flavors(d), options, preset)]
    path = node_summary.write(folder)
    print(f"gmb: wrote {path}", flush=True)
    return problems


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
        from . import report
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
        print(f"gmb: no figures or report.md: {err.filename}: {err.strerror}", file=sys.stderr,
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
    if not isinstance(slug, str) or not _SLUG.fullmatch(slug):
        raise GmbError(f"{shlex.join(command)} printed no usable gpu_slug (got {slug!r})")
    return info


def _run_flavor(
    flavor: str, binary: str, folder: Path, device: int, options: Options, repo: Path,
    env: dict[str, str], progress: str | None, to_log: bool = False,
) -> FlavorRun:
    """Run one flavor; a failure is recorded, not raised, so the other flavors still run. With
    `progress` (a terminal) the binary draws its progress line on stderr and its table goes to
    <flavor>.log, as with `to_log`; otherwise its output streams as it comes."""
    out_json = _shown_path(folder / json_name(flavor), repo)
    health_json = _shown_path(folder / health.health_file(flavor), repo)
    command = benchmark_command(
        binary, device, options.repetitions, out_json, options.passthrough,
        health_json, progress,
    )
    shown = " ".join(f"{var}={shlex.quote(env[var])}" for var in _DEVICE_ENV if var in env)
    shown = f"{shown} {shlex.join(command)}".strip()
    print(f"gmb: {shown}", flush=True)
    start = time.monotonic()
    try:
        if progress or to_log:
            with open(folder / f"{flavor}.log", "w", encoding="utf-8") as log:
                returncode = subprocess.run(command, cwd=repo, env=env, stdout=log).returncode
        else:
            returncode = subprocess.run(command, cwd=repo, env=env).returncode
    except OSError as err:
        print(f"gmb: cannot run {binary}: {err.strerror}", file=sys.stderr, flush=True)
        returncode = 127
    wall_s = round(time.monotonic() - start, 3)
    if returncode != 0:
        print(f"gmb: flavor {flavor} on GPU {device} failed with exit code {returncode}; going on",
              file=sys.stderr, flush=True)
    return FlavorRun(flavor=flavor, command=shown, exit_code=returncode, wall_s=wall_s)


def _shown_path(path: Path, repo: Path) -> str:
    """Paths inside the repo are given relative to it (the commands run there), so recorded
    commands hold no user's home directory and stay valid in any checkout."""
    try:
        return str(path.relative_to(repo.resolve()))
    except ValueError:
        return str(path)
