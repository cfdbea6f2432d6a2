#!/usr/bin/env python3
"""The table of scripts/device/model_bottlenecks.sh's folder: per benchmark, Nsight Compute's
DRAM, L2 and L1 throughput (% of peak), the unit nearest its peak (a sub-unit of the L2 or the
L1, the warps' issue, the GPC's constant cache), the L2's read and write requests per ns, and
the GB/s of the same benchmark with its arrays in the L2 (l2res.json). Usage:
python3 scripts/device/bottlenecks_table.py FOLDER (Markdown on stdout). Standard library only."""

import csv
import io
import json
import sys
from pathlib import Path

UNITS = {  # ncu's sub-metric -> what it is, in the words of docs/model.md
    "lts__xbar2lts_cycles_active": "crossbar into the L2",
    "lts__t_tag_requests": "L2 tag lookups",
    "lts__ltcfabric2ltc_cycles_active": "fabric between the L2's halves",
    "lts__lts2xbar_cycles_active_realtime": "L2 to the crossbar",
    "lts__d_sectors": "L2 data banks",
    "l1tex__data_pipe_lsu_wavefronts": "L1 data wavefronts",
    "l1tex__m_l1tex2xbar_req_cycles_active": "L1 requests to the crossbar",
    "smsp__issue_active": "warp issue",
    "gcc__cache_requests_type_constant": "the GPC's constant cache",
}
PCT = ".avg.pct_of_peak_sustained_elapsed"


def kernels(path: Path) -> list[dict[str, float]]:
    lines = path.read_text().splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith('"ID"'))
    out: dict[int, dict[str, float]] = {}
    for row in csv.DictReader(io.StringIO("\n".join(lines[start:]))):
        try:
            out.setdefault(int(row["ID"]), {})[row["Metric Name"]] = float(
                row["Metric Value"].replace(",", ""))
        except ValueError:
            continue
    return [out[k] for k in sorted(out)]


def main(folder: Path) -> None:
    names = [line.strip() for line in (folder / "list.txt").read_text().splitlines() if "/" in line]
    profiled = kernels(folder / "ncu.csv")
    if len(names) != len(profiled):
        sys.exit(f"bottlenecks_table: {len(names)} benchmarks but {len(profiled)} kernels")
    resident = {b["run_name"].removesuffix("/manual_time"): b["bytes_per_second"] / 1e9
                for b in json.loads((folder / "l2res.json").read_text())["benchmarks"]
                if b.get("aggregate_name") == "median"}
    print("| benchmark | DRAM % | L2 % | L1 % | nearest its peak | L2 read / write requests per ns"
          " | GB/s, arrays in the L2 |")
    print("|---|---:|---:|---:|---|---:|---:|")
    for name, m in zip(names, profiled):
        t = m["gpu__time_duration.sum"]
        top = max(UNITS, key=lambda unit: m.get(unit + ".avg" + PCT.removeprefix(".avg"), -1.0))
        top_pct = m.get(top + PCT, float("nan"))
        requests = (m["lts__t_requests_srcunit_tex_op_read.sum"] / t,
                    m["lts__t_requests_srcunit_tex_op_write.sum"] / t)
        stem = name.removesuffix("/manual_time")
        match = next((v for k, v in resident.items()
                      if k.split("/n:")[0] == stem.split("/n:")[0]), None)
        print(f"| `{stem}` | {m['dram__throughput' + PCT]:.1f} | {m['lts__throughput' + PCT]:.1f}"
              f" | {m['l1tex__throughput' + PCT]:.1f} | {UNITS[top]} ({top_pct:.1f}) |"
              f" {requests[0]:.1f} / {requests[1]:.1f} |"
              f" {'' if match is None else f'{match:.1f}'} |")


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit("usage: bottlenecks_table.py FOLDER")
    main(Path(sys.argv[1]))
