"""Nsight Compute's source page as data: the CSV that `ncu --import REPORT --page source --csv
--print-source sass` prints (one block per profiled kernel: a `"Kernel Name","..."` line, a
header line starting with `"Address"`, one row per SASS instruction), read into the global
loads and stores of each kernel with the counters `gmb advise` needs. Standard library only.

Columns read (Nsight Compute 2025.3): `Address`, `Source`, `Instructions Executed` (warp-level
executions: requests), `Avg. Predicated-On Threads Executed` (lanes that access),
`Address Space`, `Access Operation`, `Access Size` (bits per lane), `L1 Tag Requests Global`
(128-B lines the requests touch), `L2 Theoretical Sectors Global` and its `Ideal` and
`Excessive` (32-B sectors).

With `--print-source cuda,sass` (a program built with `-lineinfo`) each block opens with
`"File Path",...` and `"Function Name",...` lines and a header `"Line No","Source","Address",
"Source",...`: a row with a line number holds that line's code, and the SASS rows under it
(line number empty) hold the counters, each instruction printed twice. Without line
information the SASS address stands in for the line.
"""

import csv
import io
from dataclasses import dataclass
from pathlib import PurePath

from gmbtools.errors import GmbError

REQUIRED = ("Address", "Source", "Instructions Executed", "Access Operation", "Access Size",
            "L2 Theoretical Sectors Global", "L2 Theoretical Sectors Global Ideal")


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
    code: str | None = None  # that line's source text

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
    accesses: list[Access] = []
    seen: set[tuple[str, str]] = set()
    kernel = file = header = source = code = None
    blocks = 0
    for row in csv.reader(io.StringIO(text)):
        if not row:
            continue
        if row[0] in ("Kernel Name", "Function Name") and len(row) >= 2:
            kernel, header, source, code = row[1], None, None, None
            continue
        if row[0] == "File Path" and len(row) >= 2:
            file = row[1]
            continue
        if row[0] in ("Address", "Line No") and kernel is not None:
            header, blocks = _header(row, kernel), blocks + 1
            continue
        if header is None or kernel is None or len(row) < len(REQUIRED):
            continue
        cells = dict(zip(header, row))
        line = cells.get("Line No", "").strip()
        if line.isdigit():
            source = f"{PurePath(file).name}:{line}" if file else f"line {line}"
            code = cells.get("Line Source", "").strip() or None
            continue
        if not cells.get("Address", "").startswith("0x"):
            continue
        if not _is_global_access(cells) or (kernel, cells["Address"]) in seen:
            continue
        seen.add((kernel, cells["Address"]))
        accesses.append(Access(
            kernel=kernel, address=cells["Address"], sass=cells["Source"].strip(),
            operation=cells["Access Operation"], word_bytes=_number(cells["Access Size"]) / 8,
            requests=_number(cells["Instructions Executed"]),
            lanes=_number(cells.get("Avg. Predicated-On Threads Executed", "")) or 32.0,
            lines=_number(cells.get("L1 Tag Requests Global", "")),
            sectors=_number(cells["L2 Theoretical Sectors Global"]),
            ideal_sectors=_number(cells["L2 Theoretical Sectors Global Ideal"]),
            source=source, code=code))
    if blocks == 0:
        raise GmbError("not a source page of Nsight Compute: no 'Kernel Name' block with an "
                       "'Address' header (export it with ncu --import REPORT --page source "
                       "--csv --print-source sass)")
    return accesses


def _header(row: list[str], kernel: str) -> list[str]:
    """The block's column names; with source lines, the first of the two 'Source' columns (the
    line's code) is renamed 'Line Source' so that 'Source' is the SASS, as without."""
    header = list(row)
    if header[0] == "Line No" and header.count("Source") == 2:
        header[header.index("Source")] = "Line Source"
    missing = [c for c in REQUIRED if c not in header]
    if missing:
        raise GmbError(f"the source page of kernel '{kernel}' has no column "
                       f"'{missing[0]}': profile with --section SourceCounters")
    return header


def kernels(accesses: list[Access]) -> list[str]:
    """The kernels, in the order the CSV prints them."""
    return list(dict.fromkeys(a.kernel for a in accesses))
