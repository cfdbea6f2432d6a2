"""Nsight Compute's raw page as data: the CSV that `ncu --import REPORT --page raw --csv` prints
(a header of metric names, a row of their units, one row per profiled launch), read into each
kernel's duration and DRAM bytes, the numbers `gmb advise`'s what-if starts from. Standard
library only.

Metrics read (collected by `gmb advise -- APP` beside the source counters):
`gpu__time_duration.sum`, `dram__bytes_read.sum`, `dram__bytes_write.sum`; the kernel's name
is the source page's (`Kernel Name`, demangled).
"""

import csv
import io
from dataclasses import dataclass

from gmbtools.errors import GmbError

METRICS = ("gpu__time_duration.sum", "dram__bytes_read.sum", "dram__bytes_write.sum")
_SECONDS = {"s": 1.0, "ms": 1e-3, "us": 1e-6, "usecond": 1e-6, "msecond": 1e-3,
            "ns": 1e-9, "nsecond": 1e-9, "second": 1.0}
_BYTES = {"byte": 1.0, "Kbyte": 1e3, "Mbyte": 1e6, "Gbyte": 1e9, "Tbyte": 1e12,
          "KB": 1e3, "MB": 1e6, "GB": 1e9, "B": 1.0}


@dataclass(frozen=True)
class KernelTime:
    """One kernel's launches: how many, and per launch on average its seconds and DRAM bytes."""

    kernel: str
    launches: int
    seconds: float
    dram_bytes: float | None  # None where the report has no DRAM counters
    device: str | None = None


def read_raw_csv(text: str) -> dict[str, KernelTime]:
    """Kernel name -> its launches' averages; {} where the page has no duration column."""
    rows = [r for r in csv.reader(io.StringIO(text)) if r]
    if len(rows) < 2 or "Kernel Name" not in rows[0]:
        raise GmbError("not a raw page of Nsight Compute: no 'Kernel Name' column "
                       "(export it with ncu --import REPORT --page raw --csv)")
    header, units = rows[0], rows[1]
    col = {name: i for i, name in enumerate(header)}
    if METRICS[0] not in col:
        return {}
    launches: dict[str, list[tuple[float, float | None]]] = {}
    device: dict[str, str] = {}
    for row in rows[2:]:
        if len(row) != len(header):
            continue
        name = row[col["Kernel Name"]]
        seconds = _value(row, units, col.get(METRICS[0]), _SECONDS) or 0.0
        read, written = (_value(row, units, col.get(m), _BYTES) for m in METRICS[1:])
        dram = None if read is None or written is None else read + written
        launches.setdefault(name, []).append((seconds, dram))
        if "device__attribute_display_name" in col:
            device[name] = row[col["device__attribute_display_name"]]
    return {name: KernelTime(kernel=name, launches=len(runs),
                             seconds=sum(s for s, _ in runs) / len(runs),
                             dram_bytes=None if any(d is None for _, d in runs)
                             else sum(d for _, d in runs) / len(runs),
                             device=device.get(name))
            for name, runs in launches.items()}


def _value(row: list[str], units: list[str], i: int | None, scale: dict[str, float]) \
        -> float | None:
    if i is None:
        return None
    text = row[i].replace(",", "").strip()
    try:
        value = float(text)
    except ValueError:
        return None
    unit = units[i].strip() if i < len(units) else ""
    if unit not in scale:
        raise GmbError(f"the raw page gives {units[i]!r} as the unit of a metric gmb advise "
                       "reads; it knows " + ", ".join(sorted(scale)))
    return value * scale[unit]
