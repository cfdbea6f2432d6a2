"""`gmb ncu`: its options and its handler (commands/ncu.py profiles)."""

import argparse
from pathlib import Path

from gmbtools.commands.repo import find_repo, refuse_tracked
from gmbtools.commands.subcommands.options import force_argument, non_negative, unrecognized
from gmbtools.data.flavors import FLAVORS
from gmbtools.errors import GmbError


def ncu_arguments(ncu: argparse.ArgumentParser) -> None:
    ncu.add_argument("--filter", required=True, metavar="REGEX",
                     help="Google Benchmark filter, e.g. '^(offset|stride|aos)/'")
    ncu.add_argument("--out", type=Path, required=True, metavar="FILE", help="JSON to write")
    ncu.add_argument("--device", type=non_negative, default=0, metavar="N")
    ncu.add_argument("--flavor", choices=FLAVORS, default="default")
    ncu.add_argument("--preset", metavar="NAME",
                     help="CMake preset whose build to use (default: release with a GPU)")
    force_argument(ncu)


def ncu_handler(args: argparse.Namespace, extra: list[str], argv: list[str]) -> int:
    from gmbtools.commands import binaries, ncu
    from gmbtools.data.flavors import BINARIES

    binary = Path("build") / binaries.choose_preset(args.preset) / BINARIES[args.flavor]
    if not (find_repo() / binary).is_file():
        raise GmbError(f"{binary} is not built: run scripts/gmb run (or cmake --build) first")
    if any(not arg.startswith("--gmb_") for arg in extra):
        raise GmbError(unrecognized([arg for arg in extra if not arg.startswith("--gmb_")]), 2)
    refuse_tracked([args.out], args.force, "another --out FILE")
    options = ncu.Options(binary=str(find_repo() / binary), device=args.device,
                          benchmark_filter=args.filter, out=args.out, passthrough=tuple(extra))
    print(ncu.run(options))
    return 0
