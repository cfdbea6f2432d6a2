"""Nsight Compute's source page as data: the CSV that `ncu --import REPORT --page source --csv
--print-source sass` prints (one block per profiled kernel: a `"Kernel Name","..."` line, a
header line starting with `"Address"`, one row per SASS instruction), read into the global
loads and stores of each kernel with the counters `gmb advise` needs. Standard library only.

Columns read (Nsight Compute 2025.3): `Address`, `Source`, `Instructions Executed` (warp-level
executions: requests), `Avg. Predicated-On Threads Executed` (lanes that access),
`Address Space`, `Access Operation`, `Access Size` (bits per lane), `L1 Tag Requests Global`
(128-B lines the requests touch), `L2 Theoretical Sectors Global` and its `Ideal` and
`Excessive` (32-B sectors). With `--print-source cuda,sass` a row may also name its source
file and line (columns `File Name`/`Line No`, or a `# file:line` source row before the SASS);
without `-lineinfo` there is none and the SASS address stands in.
"""

import csv
import io
import re
from dataclasses import dataclass

from gmbtools.errors import GmbError

REQUIRED = ("Address", "Source", "Instructions Executed", "Access Operation", "Access Size",
            "L2 Theoretical Sectors Global", "L2 Theoretical Sectors Global Ideal")
_LINE_ROW = re.compile(r"^\s*#?\s*(?P<file>[^\s:][^:]*):(?P<line>\d+)\s*$")


@dataclass(frozen=True)
class Access:
    """One global load or store instruction of a kernel, with its counters over the profile."""

    kernel: str
    address: str
    sass: str
    operation: str  # "Load" or "Store" (Nsight Compute's words)
    word_bytes: float  # bytes each lane accesses
    requests: float  # warp-level executions
    lanes: float  # average lanes that access per request (32 when every lane does)
    lines: float  # L1 tag requests: 128-B lines touched, over all requests
    sectors: float  # 32-B sectors moved between the L2 and the SM, over all requests
    ideal_sectors: float  # the fewest sectors the same lanes' bytes could need
    source: str | None = None  # "file:line" when the report has line information

    @property
    def where(self) -> str:
        return self.source or self.address


def _number(text: str) -> float:
    text = (text or "").replace(",", "").strip()
    if text in ("", "-", "n/a"):
        return 0.0
    try:
        return float(text)
    except ValueError:
        return 0.0


def _is_global_access(row: dict[str, str]) -> bool:
    space = row.get("Address Space", "")
    op = row.get("Access Operation", "")
    return op in ("Load", "Store") and (space in ("Global", "") or "Global" in space) \
        and _number(row.get("L2 Theoretical Sectors Global", "")) > 0


def read_source_csv(text: str) -> list[Access]:
    """Every global load and store of every kernel block of the CSV, in the order printed; a
    block printed twice for the same kernel (Nsight Compute does so) counts once."""
    rows = list(csv.reader(io.StringIO(text)))
    accesses: list[Access] = []
    seen: set[tuple[str, str]] = set()
    kernel: str | None = None
    header: list[str] | None = None
    source: str | None = None
    blocks = 0
    for row in rows:
        if not row:
            continue
        if row[0] == "Kernel Name" and len(row) >= 2:
            kernel, header, source = row[1], None, None
            continue
        if row[0] == "Address" and kernel is not None:
            missing = [c for c in REQUIRED if c not in row]
            if missing:
                raise GmbError(f"the source page of kernel '{kernel}' has no column "
                               f"'{missing[0]}': profile with --section SourceCounters")
            header, blocks = row, blocks + 1
            continue
        if header is None or kernel is None:
            continue
        cells = dict(zip(header, row))
        if len(row) < len(REQUIRED):
            continue
        named = _source_of(cells)
        if named:
            source = named
        if not cells.get("Address", "").startswith("0x"):
            continue
        if not _is_global_access(cells) or (kernel, cells["Address"]) in seen:
            continue
        seen.add((kernel, cells["Address"]))
        requests = _number(cells["Instructions Executed"])
        accesses.append(Access(
            kernel=kernel, address=cells["Address"], sass=cells["Source"].strip(),
            operation=cells["Access Operation"], word_bytes=_number(cells["Access Size"]) / 8,
            requests=requests,
            lanes=_number(cells.get("Avg. Predicated-On Threads Executed", "")) or 32.0,
            lines=_number(cells.get("L1 Tag Requests Global", "")),
            sectors=_number(cells["L2 Theoretical Sectors Global"]),
            ideal_sectors=_number(cells["L2 Theoretical Sectors Global Ideal"]),
            source=source))
    if blocks == 0:
        raise GmbError("not a source page of Nsight Compute: no 'Kernel Name' block with an "
                       "'Address' header (export it with ncu --import REPORT --page source "
                       "--csv --print-source sass)")
    return accesses


def _source_of(cells: dict[str, str]) -> str | None:
    """The source line a row names: File Name and Line No columns, or a '# file:line' row."""
    file, line = cells.get("File Name"), cells.get("Line No") or cells.get("Line")
    if file and line and line.strip().isdigit():
        return f"{file.strip()}:{line.strip()}"
    if not cells.get("Address", "").startswith("0x"):
        found = _LINE_ROW.match(cells.get("Address", "") or cells.get("Source", ""))
        if found:
            return f"{found['file'].strip()}:{found['line']}"
    return None


def kernels(accesses: list[Access]) -> list[str]:
    """The kernels, in the order the CSV prints them."""
    return list(dict.fromkeys(a.kernel for a in accesses))
