"""`gmb advise`: a user's own kernels, from Nsight Compute's source page to the suite's catalog.
Reads a report (`.ncu-rep`, through `ncu --import ... --page source --csv`), the CSV export of
its source page, or profiles an application itself (`gmb advise -- APP ARGS`: the source
counters only, clocks left alone, the report kept); then names, per global load and store, its
sectors and lines per request, its class, the built-in benchmark it behaves like (with that
benchmark's GB/s from `--results DIR`) and what fixing it saves (analysis/advise_match.py).

Standard library only: it runs on GPU machines without pandas.
"""

import json
import re
import shutil
import sys
import time
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

from gmbtools.analysis.advise_match import advise
from gmbtools.analysis.advise_whatif import best_rates, what_if
from gmbtools.commands import advise_twins, binaries, stopping
from gmbtools.data import files, ncu_launches, ncu_source
from gmbtools.data.ncu_launches import KernelTime
from gmbtools.errors import GmbError
from gmbtools.present.advise_text import as_json, markdown, text

SECTIONS = ("SourceCounters",)


@dataclass(frozen=True)
class Options:
    report: Path | None
    app: tuple[str, ...]
    kernel: str | None
    results: Path | None
    json: bool
    keep: Path | None
    save: bool = False
    out: Path | None = None  # results root for --save; default <repo>/results
    measure: bool = True  # without results of the GPU, run the built-ins it needs
    device: int = 0  # where that short run measures
    command: str = "scripts/gmb advise"


def run(options: Options) -> int:
    pattern = _kernel_regex(options.kernel)
    times: dict[str, KernelTime] = {}
    report: Path | None = options.report
    if options.save and options.report is not None and options.report.suffix == ".csv":
        raise GmbError("--save needs the GPU's name: give the report (.ncu-rep) or an "
                       "application after --, not a CSV export")
    if options.app:
        report = profile(options.app, options.kernel, options.keep or _report_name())
        # on stderr under --json, so that stdout stays one JSON document
        print(f"gmb: kept the report {report}", flush=True,
              file=sys.stderr if options.json else sys.stdout)
        csv_text, times = export(report), export_times(report)
    elif options.report is not None:
        csv_text = read_report(options.report)
        if options.report.suffix != ".csv":
            times = export_times(options.report)
    else:
        raise GmbError("give a report (REPORT.ncu-rep or its source page as CSV) or an "
                       "application after --")
    accesses = ncu_source.read_source_csv(csv_text)
    if pattern is not None:
        accesses = [a for a in accesses if pattern.search(a.kernel)]
        if not accesses:
            raise GmbError(f"no kernel with global loads or stores matches --kernel "
                           f"'{options.kernel}'")
    if not accesses:
        raise GmbError("the report has no global load or store with source counters")
    dram = {k: t.dram_bytes for k, t in times.items() if t.dram_bytes is not None}
    needed = {a.twin for a in advise(accesses, {}, dram) if a.twin}
    folder, gbs = advise_twins.twin_gbs(options.results, times, needed, options.measure,
                                        options.device)
    found = advise(accesses, gbs, dram)
    whatifs = what_if(found, times, best_rates(gbs))
    where = str(folder) if folder else None
    if options.json:
        print(json.dumps(as_json(found, whatifs, where), indent=1))
    else:
        print(text(found, whatifs, where), end="")
    if options.save:
        _save(options, report, times, found, whatifs, where)
    return 0


def _save(options: Options, report: Path | None, times: dict[str, KernelTime],
          found: list, whatifs: list, where: str | None) -> Path:
    """A new folder results/<gpu slug>/<stamp>-advise (never an old one): the report,
    advice.md, advice.json and advice.png; each file whole or not at all."""
    slug = advise_twins.slug_of(times)
    if slug is None:
        raise GmbError("the report names no GPU (its raw page has no device name); nothing saved")
    root = (options.out or advise_twins.REPO / "results").resolve()
    folder = binaries.make_run_dir(root, slug, datetime.now(), "-advise")
    say = sys.stderr if options.json else sys.stdout
    try:
        if report is not None:
            files.write_whole(folder / "report.ncu-rep", report.read_bytes())
        files.write_whole(folder / "advice.md", markdown(found, whatifs, where, options.command))
        files.write_whole(folder / "advice.json",
                          json.dumps(as_json(found, whatifs, where), indent=1) + "\n")
    except OSError as err:
        raise GmbError(f"{files.write_error(err, folder)}: the advice above is the whole result; "
                       f"{folder} keeps the files written whole") from None
    print(f"gmb: wrote {folder / 'advice.md'}", file=say, flush=True)
    try:
        from gmbtools.present.advise_figure import draw

        print(f"gmb: wrote {draw(folder, found, whatifs)}", file=say, flush=True)
    except ImportError as err:
        print(f"gmb: no advice.png: {err} (python3 -m pip install -r scripts/requirements.txt)",
              file=say, flush=True)
    return folder


def _kernel_regex(kernel: str | None) -> re.Pattern | None:
    if kernel is None:
        return None
    try:
        return re.compile(kernel)
    except re.error as e:
        raise GmbError(f"--kernel '{kernel}' is not a regular expression: {e}") from None


def _report_name() -> Path:
    stem = f"advise-{time.strftime('%Y%m%d-%H%M%S')}"
    path, n = Path(f"{stem}.ncu-rep"), 1
    while path.exists():  # never overwrite an earlier report
        path, n = Path(f"{stem}-{n}.ncu-rep"), n + 1
    return path


def _ncu() -> str:
    found = shutil.which("ncu")
    if found is None:
        raise GmbError("ncu (Nsight Compute) is not on PATH: install it, or give the source "
                       "page as CSV (ncu --import REPORT --page source --csv --print-source "
                       "sass > source.csv)")
    return found


def read_report(path: Path) -> str:
    """The source page's CSV of a report or of an export."""
    if not path.is_file():
        raise GmbError(f"{path}: " + ("is a folder, not a report" if path.exists()
                                      else "no such file"))
    if path.suffix == ".csv":
        return path.read_text(errors="replace")
    return export(path)


def export(report: Path) -> str:
    """The report's source page: its lines of code and SASS where built with -lineinfo, its
    SASS alone otherwise."""
    try:
        text = _import(report, "--page", "source", "--csv", "--print-source", "cuda,sass")
        if ncu_source.read_source_csv(text):
            return text
    except GmbError:
        pass
    return _import(report, "--page", "source", "--csv", "--print-source", "sass")


def export_times(report: Path) -> dict[str, KernelTime]:
    """Each kernel's time and DRAM bytes per launch, where the report has them."""
    return ncu_launches.read_raw_csv(_import(report, "--page", "raw", "--csv"))


def _import(report: Path, *page: str) -> str:
    done = stopping.run([_ncu(), "--import", str(report), *page], capture_output=True,
                        text=True, errors="replace")
    if done.returncode != 0:
        said = (done.stderr or done.stdout).strip().splitlines()
        raise GmbError(f"{report}: Nsight Compute cannot read it as a report"
                       + (f" ({said[-1]})" if said else ""))
    return done.stdout


def profile(app: tuple[str, ...], kernel: str | None, report: Path) -> Path:
    """Runs `app` under Nsight Compute with the source counters only; the report's path."""
    command = [_ncu(), "--clock-control", "none", "--target-processes", "all"]
    for section in SECTIONS:
        command += ["--section", section]
    command += ["--metrics", ",".join(ncu_launches.METRICS)]
    if kernel is not None:
        command += ["--kernel-name", f"regex:{kernel}"]
    command += ["-o", str(report.with_suffix("")), *app]
    try:
        # stopping.run: a killed gmb sends Nsight Compute SIGTERM; Ctrl-C reaches the whole
        # foreground group, the application too
        done = stopping.run(command, capture_output=True, text=True, errors="replace")
    except OSError as e:
        raise GmbError(f"cannot start Nsight Compute: {e.strerror}") from None
    said = (done.stdout + done.stderr).strip().splitlines()
    errors = [line for line in said if "==ERROR==" in line]
    if done.returncode != 0 or errors:
        last = errors[-1] if errors else (said[-1] if said else "")
        raise GmbError(f"the application failed under Nsight Compute (exit {done.returncode})"
                       + (f": {last}" if last else ""))
    if not report.is_file():
        raise GmbError("Nsight Compute profiled no kernel" + (f" matching --kernel '{kernel}'"
                                                              if kernel else ""))
    return report
