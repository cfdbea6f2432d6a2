"""Prints summary.md's tables: median latency per load of every latency/ benchmark in each file.

    python3 table.py                  # this folder's files
    python3 table.py FILE.json ...    # any others (the H100 latency run uses it so)
"""
import json
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
OWN = ["latency-default", "latency-ca", "latency-cg", "latency_full"]
for path in [Path(a) for a in sys.argv[1:]] or [HERE / f"{name}.json" for name in OWN]:
    doc = json.loads(path.read_text())
    print(f"\n`{path.name}`:\n")
    print("| benchmark | ns | SM cycles | SM clock (MHz) |")
    print("|---|---:|---:|---:|")
    for b in doc["benchmarks"]:
        if b.get("aggregate_name") == "median":
            print(f"| `{b['run_name'].removesuffix('/manual_time')}` | {b['latency_ns']:.1f} |"
                  f" {b['latency_cycles']:.1f} | {b['sm_clock_mhz']:.0f} |")
