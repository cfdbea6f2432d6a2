"""Prints summary.md's tables: median latency per load of every latency/ benchmark in each file."""
import json
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
for name in sys.argv[1:] or ["latency_full", "latency-cg"]:
    doc = json.loads((HERE / f"{name}.json").read_text())
    print(f"\n`{name}.json`:\n")
    print("| benchmark | ns | SM cycles | SM clock (MHz) |")
    print("|---|---:|---:|---:|")
    for b in doc["benchmarks"]:
        if b.get("aggregate_name") == "median":
            print(f"| `{b['run_name'].removesuffix('/manual_time')}` | {b['latency_ns']:.1f} |"
                  f" {b['latency_cycles']:.1f} | {b['sm_clock_mhz']:.0f} |")
