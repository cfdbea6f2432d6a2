"""`gmb peers`: every ordered pair (i, j) of a node's GPUs measured alone, one pair at a time:
the default binary on GPU i with `--gmb_peer=only --gmb_peer_partner=j`, filtered to the
matrix's benchmarks (peer reads and writes, the kernel copies pull, push and both, the copy
engine's `ref/memcpy_peer` the same three ways). Writes a new folder
`results/<gpu_slug>/<YYYYmmdd-HHMMSS>-peers/` with each pair's JSON (gzip), matrix.json,
matrix.md (one N x N table per measurement: rows the GPU that runs the kernel, columns its
partner) and, with matplotlib, matrix.png.

Standard library only (the figure is peer_figure.py's); the GPUs are reached through a
`Runner`, so tests measure made-up nodes.
"""

import json
import shlex
import sys
import tempfile
import time
from dataclasses import asdict, dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

from gmbtools.analysis.peer_table import MEASUREMENTS, RATIOS, cells
from gmbtools.commands import binaries, flavor_files, run_options, stopping
from gmbtools.commands.repo import find_repo
from gmbtools.data import files, packing, results
from gmbtools.data.files import WRITE_FAULT_STATUS
from gmbtools.data.flavors import BINARIES
from gmbtools.errors import GmbError
from gmbtools.present import peer_summary
from gmbtools.present.peer_report import _figure, markdown

# gmembench's filter (POSIX extended, anchored): the kernel copies of every type and ilp in the
# three directions, the peer reads and writes, and the copy engine's three directions.
FILTER = ("^(peer/copy/[^/]+/ilp:[0-9]+/dir:(pull|push|both)|peer/(read|write)/[^/]+/ilp:[0-9]+"
          "|ref/memcpy_peer/dir:(pull|push|both))$")
_RESERVED = ("--benchmark_filter", "--benchmark_out", "--benchmark_out_format",
             "--benchmark_repetitions", "--gmb_peer", "--gmb_peer_partner", "--gmb_info")


@dataclass(frozen=True)
class Options:
    """What the user asked `gmb peers` for (see cli.py)."""

    devices: str = "all"
    repetitions: int = 3
    preset: str | None = None
    out: Path | None = None
    passthrough: tuple[str, ...] = ()
    gmb_command: str = "scripts/gmb peers"
    cuda_archs: str | None = None


@dataclass
class Pair:
    device: int
    partner: int
    file: str  # the pair's JSON in the folder (gzip)
    command: str
    exit_code: int | None = None
    wall_s: float | None = None
    error: str | None = None  # why the pair has no numbers; None when it has
    cells: dict[str, dict[str, Any]] = field(default_factory=dict)  # key -> {"gbs", "name"}


class Runner:
    """How `gmb peers` reaches the GPUs: build the default binary, ask it for a device, run one
    pair. Tests replace it with a fake that writes Google Benchmark JSON."""

    def __init__(self, repo: Path, options: Options) -> None:
        self.repo, self.options, self.env = repo, options, binaries.device_env()
        self.stopper = stopping.Stopper()  # measure() makes it catch the stop signals

    def devices(self) -> list[int]:
        return binaries.resolve_devices(self.options.devices, self.env)

    def build(self) -> str:
        preset = binaries.build(self.repo, self.env, self.options.preset, self.options.cuda_archs,
                           [BINARIES["default"]])
        return f"build/{preset}/{BINARIES['default']}"

    def info(self, binary: str, device: int) -> dict[str, Any]:
        return binaries.device_info(binary, device, self.repo, self.env)

    def run(self, command: list[str], log: Path) -> tuple[int, str]:
        """The exit code and the last line of stderr; Google Benchmark's table goes to `log`."""
        try:
            with open(log, "w", encoding="utf-8") as out, \
                    tempfile.TemporaryFile("w+", encoding="utf-8") as err:
                watched = stopping.run_watched(command, cwd=self.repo, env=self.env, stdout=out,
                                               stderr=err, progress=[], stall_timeout=None,
                                               stopper=self.stopper)
                err.seek(0)
                text = err.read()
        except OSError as err:
            return 127, f"cannot run {command[0]}: {err.strerror}"
        sys.stderr.write(text)
        lines = [line.strip() for line in text.splitlines() if line.strip()]
        return watched.returncode, lines[-1] if lines else ""


def parse_devices(text: str) -> None:
    """Refuse a list that names a GPU twice (a GPU is not its own peer)."""
    if text == "all":
        return
    named = [part.strip() for part in text.split(",") if part.strip()]
    twice = sorted({d for d in named if named.count(d) > 1})
    if twice:
        raise GmbError(f"--devices: GPU {', '.join(twice)} named twice in {text!r}", 2)


def check_passthrough(extra: list[str]) -> tuple[str, ...]:
    """--benchmark_*/--gmb_* options for the binary, less those `gmb peers` sets itself."""
    extra_options = run_options.passthrough_args(extra)
    for arg in extra_options:
        if arg.split("=", 1)[0] in _RESERVED:
            raise GmbError(f"{arg.split('=', 1)[0]} is set by gmb peers (each pair: --device=I "
                           "--gmb_peer=only --gmb_peer_partner=J and the matrix's filter)", 2)
    return extra_options


def measure(options: Options, runner: Runner | None = None, repo: Path | None = None,
            now: datetime | None = None) -> Path | None:
    """Measure every ordered pair and write the folder; return it, or None for one GPU (no
    pair: one line, nothing written). Raises GmbError, after writing everything, when a pair
    failed."""
    parse_devices(options.devices)
    repo = repo or find_repo()
    runner = runner or Runner(repo, options)
    devices = runner.devices()
    if len(devices) < 2:
        print(f"gmb: one GPU ({', '.join(map(str, devices))}): no pair to measure; "
              "nothing written", flush=True)
        return None
    binary = runner.build()
    infos = {d: runner.info(binary, d) for d in devices}  # a GPU that is not there stops here
    root = (options.out or repo / "results").resolve()
    folder = binaries.make_run_dir(root, infos[devices[0]]["gpu_slug"], now or datetime.now(),
                              "-peers")
    print(f"gmb: peer matrix folder {folder}", flush=True)
    pairs = []
    with stopping.Stopper() as stopper:  # a stop: the pair in progress closes its file
        runner.stopper = stopper
        for i, j in ((i, j) for i in devices for j in devices if i != j):
            if stopper.stopped:
                pairs.append(Pair(i, j, "", "", error=f"not measured: interrupted by "
                                                      f"{stopper.name}"))
                continue
            if any(p.exit_code == WRITE_FAULT_STATUS for p in pairs):  # a full disk
                pairs.append(Pair(i, j, "", "", error="not measured: the folder could not be "
                                                      "written"))
                continue
            pairs.append(_measure_pair(i, j, binary, options, runner, folder, repo))
    try:
        save(folder, options, devices, infos, pairs)
    except OSError as err:
        raise GmbError(f"{files.write_error(err, folder)}: the pairs measured before are in "
                       f"{folder} (pair-*.json)", WRITE_FAULT_STATUS) from None
    if any(p.exit_code == WRITE_FAULT_STATUS for p in pairs):
        print(folder, flush=True)
        raise GmbError(f"cannot write {folder} ({files.free_space(folder) or 'see above'}): the "
                       f"pairs measured before are in {folder / 'matrix.md'}", WRITE_FAULT_STATUS)
    if stopper.stopped:
        print(folder, flush=True)
        raise GmbError(f"interrupted by {stopper.name}: the pairs measured before are in "
                       f"{folder / 'matrix.md'}", 128 + stopper.signal)
    _figure(folder)
    print(folder, flush=True)
    failed = [p for p in pairs if p.error]
    if failed:
        raise GmbError(f"{len(failed)} of {len(pairs)} pairs have no numbers (see "
                       f"{folder / 'matrix.md'})")
    return folder


def _measure_pair(i: int, j: int, binary: str, options: Options, runner: Runner,
                  folder: Path, repo: Path) -> Pair:
    out = folder / f"pair-{i}-{j}.json"
    command = [binary, f"--device={i}", "--gmb_peer=only", f"--gmb_peer_partner={j}",
               f"--benchmark_filter={FILTER}", f"--benchmark_repetitions={options.repetitions}",
               "--benchmark_display_aggregates_only=true",
               f"--benchmark_out={binaries.shown_path(out, repo)}", "--benchmark_out_format=json",
               *options.passthrough]
    pair = Pair(i, j, out.name + ".gz", shlex.join(command))
    print(f"gmb: GPU {i} with partner GPU {j}: {pair.command}", flush=True)
    start = time.monotonic()
    pair.exit_code, last_line = runner.run(command, folder / f"pair-{i}-{j}.log")
    pair.wall_s = round(time.monotonic() - start, 3)
    if runner.stopper.stopped:
        flavor_files.close_cut_file(out, runner.stopper.name)
    if not out.is_file():
        pair.file = ""
    else:
        try:
            packing.pack(out)
        except OSError:  # a full disk: the JSON stays as it is, uncompressed
            pair.file = out.name
    if pair.exit_code != 0:
        pair.error = f"exited with {pair.exit_code}" + (f": {last_line}" if last_line else "")
        print(f"gmb: GPU {i} with partner GPU {j}: {pair.error}; going on", file=sys.stderr,
              flush=True)
        return pair
    try:
        loaded = results.load(folder / pair.file)
    except GmbError as err:
        pair.error = str(err)
        return pair
    partner = str(loaded.context.get("gmb_peer_partner", ""))
    if partner != str(j):  # the binary chose another partner: not this cell's number
        pair.error = f"the run's partner was {partner!r}, not GPU {j}"
        return pair
    pair.cells = cells(results.median_by_name(loaded.records))
    return pair


def save(folder: Path, options: Options, devices: list[int], infos: dict[int, dict[str, Any]],
         pairs: list[Pair]) -> None:
    """matrix.json (everything), matrix.md (the tables) and summary.md (how it was made)."""
    doc = {
        "gmb_command": options.gmb_command,
        "devices": [{"index": d, "name": infos[d].get("gpu_name"),
                     "uuid": infos[d].get("gpu_uuid")} for d in devices],
        "measurements": [asdict(m) for m in MEASUREMENTS],
        "ratios": [{"key": k, "kernel": a, "engine": b} for k, a, b in RATIOS],
        "pairs": [asdict(p) for p in pairs],
    }
    files.write_whole(folder / "matrix.json", json.dumps(doc, indent=2) + "\n")
    files.write_whole(folder / "matrix.md", markdown(doc))
    files.write_whole(folder / "summary.md",
                      peer_summary.markdown(doc, peer_summary.context_of(folder, doc)))


