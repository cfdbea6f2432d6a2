"""Run health as gmembench records it: the `health_flags` counter of every benchmark (the bits of
include/gmb/health.hpp), the `health_*` context keys, and the `health-<flavor>.json` files that
`gmb run` keeps (the GPU's state at the start and the end of each flavor, read through NVML).

A benchmark is *affected* when any of its repetitions ran with a flag raised; summary.md lists
such benchmarks and marks them wherever they appear in its tables.
"""

import json
from pathlib import Path
from typing import Any

from gmbtools.data.files import write_whole
from gmbtools.data.results import Record

# The bits of include/gmb/health.hpp's `flag`, in the same order.
FLAGS = (
    (1 << 0, "another process on the GPU"),
    (1 << 1, "clock slowdown (hardware, thermal or power brake)"),
    (1 << 2, "software power cap"),
    (1 << 3, "memory clock under its set value"),
    (1 << 4, "new uncorrected ECC errors"),
    (1 << 5, "memory page retirement or row remapping pending"),
)


def describe(flags: int) -> str:
    """'another process on the GPU, software power cap'; '' for 0."""
    return ", ".join(text for bit, text in FLAGS if flags & bit)


def affected(records: list[Record]) -> dict[str, int]:
    """Benchmark name -> the flags any of its repetitions ran under (names with none absent)."""
    found: dict[str, int] = {}
    for record in records:
        if record.run_type != "iteration":
            continue  # aggregates average the bits
        flags = int(record.counters.get("health_flags", 0))
        if flags:
            found[record.name] = found.get(record.name, 0) | flags
    return found


def health_file(flavor: str) -> str:
    return f"health-{flavor}.json"


def load_state(folder: Path, flavor: str) -> dict[str, Any] | None:
    """The flavor's `health-<flavor>.json`, or None where the run wrote none (or it is broken)."""
    path = folder / health_file(flavor)
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) else None


def merge_states(folder: Path, into: str, part: str) -> None:
    """A continuation's health file merged into the flavor's: the start of the first, the end
    of the last, every flagged benchmark of both; the part's file is removed."""
    first, last = load_state(folder, into), load_state(folder, part)
    if last is None:
        return
    if first is not None:
        last = {**last, "start": first.get("start", last.get("start")),
                "flagged": {**first.get("flagged", {}), **last.get("flagged", {})}}
    write_whole(folder / health_file(into), json.dumps(last, indent=2) + "\n")
    (folder / health_file(part)).unlink()


def section(contexts: dict[str, dict[str, Any]], flagged: dict[str, dict[str, int]],
            states: dict[str, dict[str, Any] | None]) -> list[str]:
    """summary.md's `## Run health`: whether NVML watched, the state at the start and the end,
    and every affected benchmark per flavor."""
    lines = ["## Run health", ""]
    for flavor, context in contexts.items():
        nvml = context.get("health_nvml")
        if nvml is None:
            lines.append(f"- {flavor}: not recorded (a run from before gmembench watched health)")
            continue
        if nvml != "on":
            lines.append(f"- {flavor}: not watched ({nvml})")
            continue
        marked = flagged.get(flavor, {})
        verdict = (f"**{len(marked)} benchmark(s) affected**" if marked
                   else "no benchmark affected")
        lines.append(f"- {flavor}: watched through NVML, {verdict}")
        state = states.get(flavor) or {}
        for when in ("start", "end"):
            reading = state.get(when) or (
                {k.removeprefix("health_start_"): v for k, v in context.items()
                 if k.startswith("health_start_")} if when == "start" else None)
            if isinstance(reading, dict) and reading:
                lines.append(f"  - {when}: " + _reading(reading))
    lines.append("")
    for flavor, marked in flagged.items():
        if not marked:
            continue
        lines += [f"Affected in `{flavor}` (their numbers may not be the GPU's):", ""]
        lines += [f"- `{name}`: {describe(flags)}" for name, flags in sorted(marked.items())]
        lines.append("")
    return lines


def _reading(r: dict[str, Any]) -> str:
    return (f"SM {r.get('sm_mhz', '?')}/{r.get('max_sm_mhz', '?')} MHz, memory "
            f"{r.get('mem_mhz', '?')}/{r.get('max_mem_mhz', '?')} MHz, {r.get('temp_c', '?')} °C, "
            f"{r.get('power_w', '?')} W, other processes: {r.get('other_pids', '?')}, "
            f"ECC errors (corrected/uncorrected): {r.get('ecc_corrected', '?')}/"
            f"{r.get('ecc_uncorrected', '?')}, retired pages: {r.get('retired_pages', '?')}, "
            f"remapped rows: {r.get('remapped_rows', '?')}, pending: "
            f"{r.get('retirement_pending', '?')}")
