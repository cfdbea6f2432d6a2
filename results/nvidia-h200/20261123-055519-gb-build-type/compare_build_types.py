"""Prints the table of summary.md: median GB/s of each benchmark with the two builds of Google
Benchmark, run alternately twice (system-debug-1, release-1, system-debug-2, release-2)."""
import gzip
import json
from pathlib import Path

HERE = Path(__file__).resolve().parent


def medians(name):
    doc = json.loads(gzip.open(HERE / f"{name}.json.gz").read())
    return {b["run_name"].removesuffix("/manual_time"): b["bytes_per_second"] / 1e9
            for b in doc["benchmarks"] if b.get("aggregate_name") == "median"}


runs = {n: medians(n) for n in ("system-debug-1", "system-debug-2", "release-1", "release-2")}
print("| benchmark | debug 1 | debug 2 | release 1 | release 2 | release / debug |")
print("|---|---:|---:|---:|---:|---:|")
for name in runs["system-debug-1"]:
    d1, d2, r1, r2 = (runs[k][name] for k in runs)
    print(f"| `{name}` | {d1:.1f} | {d2:.1f} | {r1:.1f} | {r2:.1f} | {(r1 + r2) / (d1 + d2):.4f} |")
