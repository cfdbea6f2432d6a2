"""Where `gmb advise` gets the GB/s of the built-ins an application's accesses behave like:
`--results DIR`; else the newest run of the profiled GPU among the suite's own results that
holds them all; else a short run of just those benchmarks (`gmb run --flavors default` with a
filter: a new results folder, kept like any run), unless `--no-measure`.

Standard library only, like `gmb advise`.
"""

import re
import sys
from pathlib import Path

from gmbtools.commands import binaries, stopping
from gmbtools.data import results
from gmbtools.data.ncu_launches import KernelTime
from gmbtools.errors import GmbError

REPO = Path(__file__).resolve().parents[3]
# The rates the what-if reads (analysis/advise_whatif.best_rates): the best copy, read and
# write of a default run, and the tiled transpose.
RATES = ("ref/memcpy_d2d", "copy/f32x4/ilp:1/grid:full", "copy/f32/ilp:4/grid:full",
         "read/f32/ilp:4/grid:full", "read/f32x4/ilp:1/grid:full", "write/f32x4/ilp:1/grid:full",
         "write/f32/ilp:4/grid:full", "transpose/f32/tile_rows8")
SCANNED = 10  # newest runs of the GPU looked into for the names


def slug_of(times: dict[str, KernelTime]) -> str | None:
    """The profiled GPU's slug as `gmb run` names its results folders (the one GPU the raw page
    names), or None."""
    devices = {t.device for t in times.values() if t.device}
    if len(devices) != 1:
        return None
    slug = re.sub(r"[^a-z0-9]+", "-", devices.pop().lower()).strip("-")
    return slug if binaries.SLUG.fullmatch(slug) else None


def twin_gbs(given: Path | None, times: dict[str, KernelTime], names: set[str],
             measure: bool, device: int) -> tuple[Path | None, dict[str, float]]:
    """(the folder, benchmark name -> median GB/s) for `names` (names or name prefixes)."""
    if given is not None:
        return given, gbs_of(given)
    slug = slug_of(times)
    if slug is None:
        return None, {}
    wanted = names | set(RATES)
    for folder in _runs(slug)[:SCANNED]:
        gbs = gbs_of(folder)
        if all(_has(gbs, name) for name in wanted):
            return folder, gbs
    if not measure:
        return None, {}
    folder = short_run(slug, wanted, device)
    return folder, gbs_of(folder)


def short_run(slug: str, names: set[str], device: int) -> Path:
    """`gmb run` of just `names` on `device`, default flavor: its new folder."""
    pattern = "^(" + "|".join(re.escape(n) for n in sorted(names)) + ")(/.*)?$"
    before = set(_runs(slug))
    command = [sys.executable, str(REPO / "scripts" / "gmb"), "run", "--flavors", "default",
               "--device", str(device), f"--benchmark_filter={pattern}"]
    print(f"gmb: no run of this GPU holds the built-ins these accesses behave like; measuring "
          f"{len(names)} of them: {' '.join(command[1:])}", file=sys.stderr, flush=True)
    done = stopping.run(command, cwd=REPO, stdout=sys.stderr)
    made = sorted(set(_runs(slug)) - before, reverse=True)
    if done.returncode != 0 or not made:
        raise GmbError(f"the short run of the built-ins failed (gmb run exited with "
                       f"{done.returncode}); give --results DIR, or --no-measure")
    return made[0]


def gbs_of(folder: Path) -> dict[str, float]:
    """Benchmark name -> median GB/s of the folder's default flavor (else its first)."""
    loaded = results.load_folder(folder)
    readable = [r for r in loaded.values() if isinstance(r, results.Results)]
    if not readable:
        raise GmbError(f"{folder}: no results file could be read")
    medians = results.median_by_name(readable[0].records)
    return {name: m.gbs for name, m in medians.items() if m.gbs is not None}


def _runs(slug: str) -> list[Path]:
    """The GPU's runs in the suite's results, newest first."""
    root = REPO / "results" / slug
    return sorted((d for d in root.glob("*") if (d / "run_info.json").is_file()
                   and any(d.glob("default.json*"))), reverse=True)


def _has(gbs: dict[str, float], name: str) -> bool:
    return name in gbs or any(k.startswith(name + "/") for k in gbs)
