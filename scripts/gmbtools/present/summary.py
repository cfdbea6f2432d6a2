"""Write `summary.md` for a results folder: the headline numbers of each flavor, next to the
context and the exact commands that produced them, so a reader can judge and reproduce them.

Every number comes from the JSON files (peaks from `gpu_peak_gbs` in their context, never a
constant); a benchmark that errored is listed as an error, never as a number.
"""

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from gmbtools.analysis import arch, health
from gmbtools.data import partial, results, runinfo
from gmbtools.data.files import write_whole
from gmbtools.data.flavors import DEFAULT_FLAVOR_ONLY, json_name
from gmbtools.data.naming import LATENCY_FAMILIES
from gmbtools.data.results import Results
from gmbtools.data.runinfo import RunInfo
from gmbtools.errors import GmbError
from gmbtools.present.headline_tables import headline_tables, percent

SUMMARY_FILE = "summary.md"
NOTES_FILE = "NOTES.md"  # how a folder not made by `gmb run` was made, written by hand

# Context rows shown for each flavor: gmembench's keys (docs/design.md) then Google Benchmark's own.
CONTEXT_KEYS = (
    "gmb_flavor",
    "gpu_name",
    "gpu_ordinal",
    "gpu_cc",
    "gpu_sms",
    "gpu_l2_bytes",
    "gpu_l1_shared_per_sm_bytes",
    "gpu_carveout_kib",
    "gpu_facts",
    "model_dram_granule_bytes",
    "gpu_peak_gbs",
    "gpu_mem_clock_khz",
    "gpu_max_sm_clock_khz",
    "gpu_bus_bits",
    "ecc",
    "driver",
    "cuda_runtime",
    "git_sha",
    "gmb_array_bytes",
    "gmb_launches_per_iteration",
    "gmb_built_for",
    "nvidia_driver",
    "gpu_uuid",
    "health_nvml",
    "date",
    "host_name",
    "library_build_type",
)

# What runs from before NVML health recorded with nvidia-smi (their run_info.json keeps it).
NVIDIA_SMI_FIELDS = (
    "name,driver_version,clocks.sm,clocks.mem,clocks.max.sm,clocks.max.mem,"
    "temperature.gpu,power.draw"
)

MODEL_HEADING = "## Model: measured vs predicted"  # present/model_section.py's
MODEL_DOC = "../../../docs/model.md"  # from results/<gpu>/<run>/summary.md
DEBUG_WARNING = "Library was built as DEBUG. Timings may be affected."

@dataclass(frozen=True)
class Written:
    """Where the summary went, the flavor files that gave nothing (listed in it, one line each:
    unreadable or without benchmarks) and how many gave numbers."""

    path: Path
    unreadable: list[str]
    readable: int


def write_summary(folder: Path, info: RunInfo | None = None,
                  out: Path | None = None) -> Written:
    """Load whichever of default/ca/cg.json exist in `folder` and write summary.md into `out`
    (default `folder`): the same text either way, its links relative to `folder`."""
    loaded = results.load_folder(folder)
    ran = info is not None and bool(info.flavor_runs)
    if all(value is None for value in loaded.values()) and not ran:
        raise GmbError(results.no_flavor_file(folder))
    path = (folder if out is None else out) / SUMMARY_FILE
    path.parent.mkdir(parents=True, exist_ok=True)
    write_whole(path, render(loaded, info, folder))
    return Written(path, results.problems(loaded), len(results.readable(loaded)))


def rewrite(folder: Path, out: Path | None = None) -> Written:
    """`gmb summary`: summary.md again from the JSON, keeping the run record if there is one."""
    return write_summary(folder, runinfo.load(folder), out)


def render(loaded: dict[str, Results | str | None], info: RunInfo | None,
           folder: Path | None = None) -> str:
    """The whole summary.md text. `loaded` maps each flavor to its results, to the reason its
    file could not be read, or to None when the folder has no file for it."""
    contexts = {f: r.context for f, r in loaded.items() if isinstance(r, Results)}
    lines = [f"# gmembench summary: {gpu_name(contexts)}", ""]
    lines += stop_lines(loaded, info, folder)
    lines += arch.facts_lines(contexts)
    lines += _run_section(loaded, info, folder)
    lines += context_section(contexts)
    flagged = {f: health.affected(r.records) for f, r in loaded.items() if isinstance(r, Results)}
    states = info.health if info is not None else {}
    lines += health.section(contexts, flagged, {f: states.get(f) for f in contexts})
    for flavor, value in loaded.items():
        if isinstance(value, Results):
            lines += _flavor_section(flavor, value, flagged[flavor])
    lines += _model_section(loaded)
    return "\n".join(lines).rstrip() + "\n"


def _model_section(loaded: dict[str, Results | str | None]) -> list[str]:
    """The model against the run (present/model_section.py), which needs pandas: without it,
    one line saying where to get it."""
    if not any(isinstance(value, Results) for value in loaded.values()):
        return []
    try:
        from gmbtools.present import model_section  # pandas: not on every GPU machine
    except ImportError:
        return [MODEL_HEADING, "", "Needs pandas: `scripts/gmb report DIR` writes it into"
                " report.md where pandas is installed.", ""]
    try:
        return model_section.summary_lines(loaded, MODEL_DOC)
    except (ValueError, KeyError, TypeError, ZeroDivisionError) as err:  # never lose the rest
        return [MODEL_HEADING, "", f"Not computed: {cell(str(err))}.", ""]


def stop_lines(loaded: dict[str, Results | str | None], info: RunInfo | None,
               folder: Path | None) -> list[str]:
    """At the top: a run stopped before its end (what finished, what did not start) and the
    benchmarks the watchdog ended, which have no number."""
    lines = []
    stopped = {f: r.context[partial.INTERRUPTED] for f, r in loaded.items()
               if isinstance(r, Results) and isinstance(r.context.get(partial.INTERRUPTED), str)}
    planned = info.options.get("flavors", []) if info is not None else []
    not_started = [f for f in planned if loaded.get(f) is None]
    if stopped or (info is not None and info.interrupted):
        signal = info.interrupted if info is not None and info.interrupted else \
            next(iter(stopped.values())).split(" after ")[0]
        counts = [f"`{flavor}` {text.split(' after ', 1)[-1]}" for flavor, text in
                  stopped.items()]
        counts += [f"`{flavor}` not started" for flavor in not_started]
        where = f" `scripts/gmb run --resume {folder}` runs the rest." if folder else ""
        lines += [f"**Interrupted by {signal}**: {'; '.join(counts) or 'nothing measured'}. "
                  f"What follows is what finished.{where}", ""]
    for flavor, value in loaded.items():
        if isinstance(value, Results) and value.context.get(partial.STALLED):
            lines += [f"**Stalled** (`{flavor}`): {value.context[partial.STALLED]}: ended by "
                      "the watchdog, no number; the run went on with the next benchmark.", ""]
    return lines


def gpu_name(contexts: dict[str, dict[str, Any]]) -> str:
    """The GPU the files ran on, from the first context that names it."""
    return next((str(c["gpu_name"]) for c in contexts.values() if "gpu_name" in c),
                "unknown GPU")


def _run_section(loaded: dict[str, Results | str | None], info: RunInfo | None,
                 folder: Path | None) -> list[str]:
    runs = {run.flavor: run for run in info.flavor_runs} if info else {}
    walls = {flavor: sum(r.wall_s for r in info.flavor_runs if r.flavor == flavor)
             for flavor in runs} if info else {}
    lines = ["## Run", ""]
    if info is None and folder is not None and (folder / NOTES_FILE).is_file():
        lines += ["Build preset and commands: not recorded by `gmb run`; see"
                  f" [{NOTES_FILE}]({NOTES_FILE}).", ""]
    elif info is None:
        lines += ["Build preset and commands: (not recorded)", ""]
    else:
        lines += [f"- command: `{info.gmb_command}`", f"- build preset: `{info.preset}`"]
        lines += [f"- then: `{part.command}` ({part.started})" for part in info.parts[1:]]
        lines.append("")

    lines += [
        "| flavor | file | result | exit code | wall time |",
        "|---|---|---|---:|---:|",
    ]
    for flavor, value in loaded.items():
        run = runs.get(flavor)
        if isinstance(value, Results):
            medians = results.median_by_name(value.records)
            errored = sum(1 for m in medians.values() if m.error)
            result = f"{len(medians)} benchmarks, {errored} errored or skipped"
        elif isinstance(value, str):
            result = f"unreadable: {value}"
        else:
            result = "not run" if run is None else "no JSON written"
        name = value.path.name if isinstance(value, Results) else json_name(flavor)
        file = f"`{name}`" if value is not None else "(none)"
        if run is not None:
            exit_code, wall = str(run.exit_code), f"{walls[flavor]:.1f} s"
        else:  # blank where this run did not run the flavor; unknown without a run record
            exit_code = wall = "" if info is not None else "(not recorded)"
        lines.append(f"| {flavor} | {file} | {cell(result)} | {exit_code} | {wall} |")
    lines.append("")

    if info is not None:
        lines += ["Commands, run from the repository root:", "", "```sh"]
        lines += [run.command for run in [*info.flavor_runs, *info.peer_runs]] or ["(none)"]
        lines += ["```", ""]
        if info.nvidia_smi_before or info.nvidia_smi_after:
            lines += [f"`nvidia-smi --query-gpu={NVIDIA_SMI_FIELDS}`:", ""]
            for when, readings in (("before", info.nvidia_smi_before),
                                   ("after", info.nvidia_smi_after)):
                lines += [f"- {when}: `{r}`" for r in readings] or [f"- {when}: (none)"]
            lines.append("")
    return lines


def context_section(contexts: dict[str, dict[str, Any]]) -> list[str]:
    """A `## Context` table: one row per key of CONTEXT_KEYS, one column per flavor."""
    if not contexts:
        return []
    flavors = list(contexts)
    lines = [
        "## Context",
        "",
        "| key | " + " | ".join(flavors) + " |",
        "|---|" + "---|" * len(flavors),
    ]
    for key in CONTEXT_KEYS:
        values = [cell(str(contexts[f].get(key, "(not recorded)"))) for f in flavors]
        lines.append(f"| {key} | " + " | ".join(values) + " |")
    lines.append("")
    if any(c.get("library_build_type") == "debug" for c in contexts.values()):
        lines += [f"`library_build_type` is Google Benchmark's own build: its \"{DEBUG_WARNING}\""
                  " does not apply here, every time is a CUDA-event time (measured: a Release"
                  " build gives the same bandwidths within 0.05%, docs/method.md).", ""]
    return lines


def _flavor_section(flavor: str, loaded: Results, flagged: dict[str, int]) -> list[str]:
    medians = results.median_by_name(loaded.records)
    lines = [f"## Flavor `{flavor}` (`{loaded.path.name}`)", ""]
    recorded_flavor = loaded.context.get("gmb_flavor")
    if recorded_flavor != flavor:
        lines += [f"**Warning:** this file's context says gmb_flavor = `{recorded_flavor}`.", ""]

    lines += headline_tables(loaded.context, medians, flagged)
    valid = [m for m in medians.values() if m.error is None]
    errored = [m for m in medians.values() if m.error]
    # A latency benchmark's bytes per second are no result: its cv is not the run's noise.
    with_cv = [m for m in valid if m.cv is not None and m.family not in LATENCY_FAMILIES]
    lines.append(
        f"- benchmarks: {len(medians)} ({len(valid)} valid, {len(errored)} errored or skipped)"
    )
    default_only = str(loaded.context.get("gmb_default_flavor_only", "0"))
    if default_only.isdigit() and int(default_only) > 0:
        lines.append(
            f"- {default_only} benchmarks compile alike in every build"
            f" ({', '.join(DEFAULT_FLAVOR_ONLY)}) and ran in the default flavor only"
        )
    unsupported = str(loaded.context.get("gmb_unsupported", "0"))
    if unsupported != "0":
        lines.append(f"- not run, this GPU lacks what they need: {cell(unsupported)}")
    lines += [f"- {line}" for line in arch.run_lines(loaded.context, medians)]
    if flagged:
        lines.append(f"- run health: {len(flagged)} benchmark(s) affected (see Run health)")
    if with_cv:
        worst = max(with_cv, key=lambda m: m.cv or 0.0)
        lines.append(f"- largest cv of a bandwidth: {percent(worst.cv)} (`{worst.name}`)")
    else:
        lines.append("- largest cv of a bandwidth: n/a (no repetitions)")
    if errored:
        lines += ["", "Errored or skipped benchmarks (no numbers are reported for them):", ""]
        lines += [f"- `{m.name}`: {cell(m.error or '')}" for m in errored]
    return lines + [""]


def cell(text: str) -> str:
    """Keep a table cell (or list item) on one line and its pipes from splitting the table."""
    return " ".join(text.split()).replace("|", "\\|")
