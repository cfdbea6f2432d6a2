"""The host link (`host/*`): kernels that read or write pinned, mapped host memory move their
bytes at the rate the copy engine reaches over the same link in the same direction
(`ref/memcpy_h2d/mem:pinned` for reads, `ref/memcpy_d2h/mem:pinned` for writes), counted in
the 32-B sectors each warp request puts on the link: a request of 32 four-byte words, one per
sector (`host/read/f32/s:8`), moves 1,024 B for its 128 (docs/model.md).

A partly written sector is not modelled yet: `host/write/f32/off:1` measures about 0.77 of
this bound on an H100 (its stores' partial sectors cross the link as more, smaller writes).
"""

import math

from gmbtools.analysis.model_bounds import LINK, SECTOR
from gmbtools.analysis.model_params import Params
from gmbtools.data.naming import element_bytes

__all__ = ["LINK", "host_gbs", "sector_share"]


def host_gbs(p: Params, row) -> float | None:
    """The link bound of one `host/` row, or None without the reference or the counters."""
    # host/<read|write>/<type>/...: the name's second and third parts
    _, direction, type_, *_ = str(row["name"]).split("/") + ["", ""]
    writes = direction == "write"
    rate = p.host_write_gbs if writes else p.host_read_gbs
    share = sector_share(row.get("model_st_sectors_per_req" if writes
                                 else "model_ld_sectors_per_req"), float(element_bytes(type_) or 4))
    return rate * share if rate and share is not None else None


def sector_share(sectors, word: float) -> float | None:
    """Useful bytes per byte a warp request puts on a link: a warp's 32 words over the 32-B
    sectors they touch (None without the counter)."""
    if sectors is None or not math.isfinite(float(sectors)) or float(sectors) <= 0:
        return None
    return min(1.0, 32 * word / (float(sectors) * SECTOR))
