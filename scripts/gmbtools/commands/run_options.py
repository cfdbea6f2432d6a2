"""What a `gmb run` was asked for (`Options`; what --resume takes from the stopped run's record,
`RECORDED`), and the checks of the options a user passes on to the binaries."""

from dataclasses import dataclass
from pathlib import Path

from gmbtools.commands import stopping
from gmbtools.data.flavors import FLAVORS
from gmbtools.errors import GmbError

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


def check_node_options(options: Options) -> None:
    """A concurrent node run splits each flavor with --gmb_peer itself: a user's copy would
    put peer benchmarks of several GPUs on the links at once."""
    if options.concurrent and any(a.split("=", 1)[0] == "--gmb_peer" for a in options.passthrough):
        raise GmbError("--gmb_peer is set by gmb run --concurrent (the local families on every "
                       "GPU at once, then the peer family GPU by GPU); leave it out", 2)
