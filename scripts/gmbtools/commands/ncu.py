"""`gmb ncu`: the hardware's view beside the model's. Runs the chosen benchmarks once each under
Nsight Compute and writes, per benchmark name, the measured L1 sectors per request (loads and
stores) and DRAM bytes next to the traffic model's predictions.

How kernels are paired with benchmarks: with `--gmb_profile` every benchmark launches its
kernel exactly once (after an L2 flush, no warm-up, no verification), so the profiled benchmark
kernels, in launch order, are the benchmarks in run order (`--benchmark_list_tests` with the
same filter). Utility kernels (fills, checks, the flush) are left out by name.

Standard library only: it runs on GPU machines without pandas.
"""

import csv
import io
import json
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from gmbtools.commands import stopping
from gmbtools.data.naming import strip_suffixes
from gmbtools.errors import GmbError

METRICS = (
    "l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum",
    "l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum",
    "l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum",
    "l1tex__t_requests_pipe_lsu_mem_global_op_st.sum",
    "dram__bytes_read.sum",
    "dram__bytes_write.sum",
    # Where loads were served: L1 hits, and the sectors L1 asked the L2 for (caching study).
    "l1tex__t_sector_hit_rate.pct",
    "lts__t_sectors_srcunit_tex_op_read.sum",
    # How many requests carried those sectors: the L2's tag lookups (cg asks per instruction).
    "lts__t_requests_srcunit_tex_op_read.sum",
    # Shared-memory bank conflicts (the transpose ladder's tiles: unpadded vs padded).
    "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum",
    "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum",
)

# The benchmark kernels of every family (kernels/*.cuh), by function name.
KERNELS = ("regex:(coalesced_|mapped_copy|aos_|soa_|matrix_copy|xor_reads|working_set_read"
           "|inflight_|bulk_|transpose_)")
# Families whose benchmarks launch several kernels (the reduction's passes, CUB) cannot be
# paired one benchmark to one kernel: profile them with Nsight Compute directly.

# Model counters written by the harness, copied next to the measurements.
MODEL_COUNTERS = (
    "model_sectors_per_req",
    "model_ld_sectors_per_req",
    "model_st_sectors_per_req",
    "model_dram_bytes",
    "model_efficiency",
)


@dataclass(frozen=True)
class Options:
    binary: str
    device: int
    benchmark_filter: str
    out: Path
    passthrough: tuple[str, ...] = ()
    ncu: str = "ncu"


def profile_command(options: Options, log: str, bench_json: str) -> list[str]:
    """The ncu command line (clocks left alone; caches flushed before each profiled kernel)."""
    return [
        options.ncu, "--clock-control", "none", "--cache-control", "all",
        "--kernel-name-base", "function", "-k", KERNELS,
        "--metrics", ",".join(METRICS), "--csv", "--print-units", "base",
        "--log-file", log,
        options.binary, f"--device={options.device}", "--gmb_profile",
        f"--benchmark_filter={options.benchmark_filter}",
        f"--benchmark_out={bench_json}", "--benchmark_out_format=json",
        *options.passthrough,
    ]


def _number(text: str) -> float:
    """ncu's values, with or without thousands separators."""
    try:
        return float(text.replace(",", ""))
    except ValueError:
        raise GmbError(f"ncu printed a value that is not a number: {text!r}") from None


def parse_ncu_csv(text: str) -> list[dict[str, float]]:
    """Metric values per profiled kernel, in launch order, from `ncu --csv` (one row per
    kernel and metric). Lines before the CSV header (ncu's own messages) are skipped."""
    lines = text.splitlines()
    start = next((i for i, line in enumerate(lines) if line.startswith('"ID"')), None)
    if start is None:
        raise GmbError("ncu wrote no CSV table (did it profile any kernel?)")
    kernels: dict[str, dict[str, float]] = {}
    for row in csv.DictReader(io.StringIO("\n".join(lines[start:]))):
        name, value = row.get("Metric Name"), row.get("Metric Value")
        if not row.get("ID") or name is None or value is None:
            continue
        kernels.setdefault(row["ID"], {})[name] = _number(value)
    return [kernels[k] for k in sorted(kernels, key=int)]


def pair(names: list[str], kernels: list[dict[str, float]]) -> dict[str, dict[str, float]]:
    """Benchmarks in run order with the profiled kernels in launch order; counts must agree."""
    if len(names) != len(kernels):
        raise GmbError(f"{len(names)} benchmarks but {len(kernels)} profiled kernels: cannot"
                       " pair them (a family kernel missing from KERNELS, or a failed run?)")
    return dict(zip(names, kernels))


def compare(measured: dict[str, float], model: dict[str, float]) -> dict[str, Any]:
    """One benchmark's row: the raw metrics, the model's counters, and the ratios to read."""
    def per_request(kind: str) -> float | None:
        requests = measured.get(f"l1tex__t_requests_pipe_lsu_mem_global_op_{kind}.sum", 0.0)
        sectors = measured.get(f"l1tex__t_sectors_pipe_lsu_mem_global_op_{kind}.sum", 0.0)
        return sectors / requests if requests else None

    dram = measured.get("dram__bytes_read.sum", 0.0) + measured.get("dram__bytes_write.sum", 0.0)
    row: dict[str, Any] = {"ncu": measured, **{k: model[k] for k in MODEL_COUNTERS if k in model}}
    row["measured_ld_sectors_per_req"] = per_request("ld")
    row["measured_st_sectors_per_req"] = per_request("st")
    row["measured_dram_bytes"] = dram
    for kind in ("ld", "st"):
        row[f"smem_bank_conflicts_{kind}"] = measured.get(
            f"l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_{kind}.sum")
    predicted = model.get("model_dram_bytes")
    row["dram_measured_over_model"] = dram / predicted if predicted else None
    return row


def list_names(options: Options) -> list[str]:
    command = [options.binary, f"--device={options.device}", "--gmb_profile",
               f"--benchmark_filter={options.benchmark_filter}", "--benchmark_list_tests",
               *options.passthrough]
    proc = stopping.run(command, capture_output=True, text=True)
    if proc.returncode != 0:
        lines = [line for line in proc.stderr.splitlines() if line.strip()]
        raise GmbError(lines[-1] if lines else f"{command[0]} exited with {proc.returncode}",
                       proc.returncode)
    names = [strip_suffixes(line.strip()) for line in proc.stdout.splitlines() if line.strip()]
    if not names:
        raise GmbError(f"no benchmark matches {options.benchmark_filter!r}")
    return names


def model_counters(bench_json: Path) -> tuple[dict[str, Any], dict[str, dict[str, float]]]:
    doc = json.loads(bench_json.read_text())
    rows = {strip_suffixes(b["name"]): b for b in doc.get("benchmarks", [])}
    return doc.get("context", {}), rows


def run(options: Options) -> Path:
    names = list_names(options)
    with tempfile.TemporaryDirectory() as tmp:
        log, bench_json = Path(tmp) / "ncu.csv", Path(tmp) / "bench.json"
        command = profile_command(options, str(log), str(bench_json))
        print(f"gmb: profiling {len(names)} benchmark(s): {' '.join(command)}", flush=True)
        try:
            proc = stopping.run(command)
        except FileNotFoundError:
            raise GmbError(f"{options.ncu} not found: Nsight Compute is needed") from None
        if proc.returncode != 0 or not log.is_file():
            raise GmbError(f"ncu exited with {proc.returncode}", proc.returncode or 1)
        kernels = parse_ncu_csv(log.read_text())
        context, models = model_counters(bench_json)
    rows = {name: compare(measured, models.get(name, {}))
            for name, measured in pair(names, kernels).items()}
    out = {"context": context, "command": command, "benchmarks": rows}
    options.out.parent.mkdir(parents=True, exist_ok=True)
    options.out.write_text(json.dumps(out, indent=1) + "\n")
    print(table(rows))
    return options.out


def table(rows: dict[str, dict[str, Any]]) -> str:
    """Markdown: model and measured side by side."""
    def fmt(value: Any, digits: int = 2) -> str:
        return "-" if value is None else f"{value:.{digits}f}"

    lines = ["| benchmark | ld sect/req model | ld measured | st sect/req model | st measured"
             " | DRAM measured / model | smem bank conflicts ld / st |",
             "|---|---:|---:|---:|---:|---:|---:|"]
    for name, r in rows.items():
        lines.append(
            f"| `{name}` | {fmt(r.get('model_ld_sectors_per_req'))} |"
            f" {fmt(r['measured_ld_sectors_per_req'])} |"
            f" {fmt(r.get('model_st_sectors_per_req'))} | {fmt(r['measured_st_sectors_per_req'])}"
            f" | {fmt(r['dram_measured_over_model'], 3)} |"
            f" {fmt(r.get('smem_bank_conflicts_ld'), 0)} / {fmt(r.get('smem_bank_conflicts_st'), 0)} |")
    return "\n".join(lines)
