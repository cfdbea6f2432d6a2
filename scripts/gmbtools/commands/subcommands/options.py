"""What several subcommands take: the results folder, the fleet folder, --force, the options of
every command that builds, runs and writes a results folder; the checks of option values; the
plotting modules, loaded only when a command needs them; the exit status of inputs read in part."""

import argparse
import importlib
import sys
from pathlib import Path
from typing import Any

from gmbtools.errors import PARTLY_READ, GmbError


def results_dir_argument(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("results_dir", type=Path, metavar="RESULTS_DIR")


def force_argument(parser: argparse.ArgumentParser) -> None:
    """Every command that writes files: committed ones (git tracks them) only with --force."""
    parser.add_argument("--force", action="store_true",
                        help="overwrite output files that git tracks (committed results)")


def fleet_dir_argument(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("fleet_dir", type=Path, metavar="DIR")


def build_and_results_options(parser: argparse.ArgumentParser, repetitions: int) -> None:
    """What every command that builds, runs and writes a results folder takes."""
    parser.add_argument("--repetitions", type=positive, default=repetitions, metavar="R",
                        help=f"Google Benchmark repetitions per benchmark (default {repetitions})")
    parser.add_argument("--preset", metavar="NAME",
                        help="CMake preset (default: release with a GPU, else sm90)")
    parser.add_argument("--out", type=Path, metavar="DIR",
                        help="results root instead of <repo>/results")
    parser.add_argument("--cuda-archs", metavar="LIST",
                        help="build for these compute capabilities, e.g. '80;90' (CMake's "
                             "CMAKE_CUDA_ARCHITECTURES; default: the preset's, native with a "
                             "GPU)")


def plotting_module(name: str) -> Any:
    """gmbtools.<layer>.<name>, which needs pandas and matplotlib: a one-line error without
    them. `name` is "analysis.frame", "present.plot", ..."""
    try:
        return importlib.import_module(f"gmbtools.{name}")
    except ImportError as err:
        raise GmbError(f"this command needs pandas and matplotlib ({err}); install them with"
                       " python3 -m pip install -r scripts/requirements.txt") from None


def no_extra(extra: list[str]) -> None:
    if extra:
        raise GmbError(unrecognized(extra), 2)


def unrecognized(extra: list[str]) -> str:
    """`unrecognized argument '--x'`, each argument quoted as the user typed it."""
    return f"unrecognized argument{'s' if len(extra) > 1 else ''} " + \
        " ".join(repr(arg) for arg in extra)


def partly_read(problems: list[str]) -> int:
    """The one rule for inputs read in part (docs/usage.md, "Exit status"): a warning line per
    input that gave nothing, naming it and why, and status PARTLY_READ; 0 when there is none.
    The caller has done its work from the rest; with no rest it raises GmbError instead."""
    for line in problems:
        print(f"gmb: warning: {line}", file=sys.stderr, flush=True)
    return PARTLY_READ if problems else 0


def non_negative(text: str) -> int:
    return int_at_least(text, 0)


def positive(text: str) -> int:
    return int_at_least(text, 1)


def non_negative_seconds(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected seconds, got {text!r}") from None
    if not value >= 0 or value == float("inf"):
        raise argparse.ArgumentTypeError(f"must be 0 or more seconds, got {text}")
    return value


def int_at_least(text: str, minimum: int) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected an integer, got {text!r}") from None
    if value < minimum:
        raise argparse.ArgumentTypeError(f"must be at least {minimum}, got {value}")
    return value
