"""The host link (`host/*`): kernels that read or write pinned, mapped host memory move their
bytes in PCIe packets, each with its cost beside the payload (PCIe's base specification, Gen3
and later: a 4-B framing token, a 4-B LCRC and the header; 20 B for a completion with data,
the reads' answers, 24 B for a memory write to a 64-bit address). The copy engine fills its
packets to the GPU's largest payload (256 B: the H200's device capability and control in its
PCI configuration space); the SMs' requests go out one packet per 128-B line a warp
request touches, with the bytes it moves there. So a kernel moves its bytes at the copy
engine's rate in the same direction (`ref/memcpy_h2d/mem:pinned` for reads,
`ref/memcpy_d2h/mem:pinned` for writes) × the useful share of its packets over the copy
engine's: a coalesced request of whole lines 0.9325 of it for reads, 0.921 for writes; a
request of one word per sector (`host/read/f32/s:8`) an eighth of that (docs/model.md).

The payload is each byte the kernel touches once (`model_efficiency`: the sector a
misaligned warp shares with its neighbour crosses once), in as many packets as the request
touches lines (`host/read/f32/off:1`: two per 128 B used). A partly written sector is not
modelled yet: `host/write/f32/off:1` measures about 0.8 of this bound (its stores' partial
sectors cross the link as more, smaller writes).
"""

import math

from gmbtools.analysis.model_bounds import LINE, LINK, SECTOR
from gmbtools.analysis.model_params import Params
from gmbtools.data.naming import element_bytes

__all__ = ["LINK", "host_gbs", "lines_per_request", "name_param", "sector_share"]

LANES = 32
FRAMING = 4 + 4  # the framing token and the LCRC of every packet
READ_PACKET = FRAMING + 12  # a completion with data: a 3-DW header
WRITE_PACKET = FRAMING + 16  # a memory write to a 64-bit address: a 4-DW header
CE_PAYLOAD = 256.0  # the copy engine's packets: the GPU's largest payload


def host_gbs(p: Params, row) -> float | None:
    """The link bound of one `host/` row, or None without the reference or the counters."""
    # host/<read|write>/<type>/...: the name's second and third parts
    _, direction, type_, *_ = str(row["name"]).split("/") + ["", ""]
    writes = direction == "write"
    rate = p.host_write_gbs if writes else p.host_read_gbs
    word = float(element_bytes(type_) or 4)
    share = sector_share(row.get("model_st_sectors_per_req" if writes
                                 else "model_ld_sectors_per_req"), word)
    if not rate or share is None:
        return None
    efficiency = _number(row.get("model_efficiency"))
    useful = LANES * word  # one warp request's
    payload = useful / efficiency if efficiency else useful / share
    packet = WRITE_PACKET if writes else READ_PACKET
    on_wire = payload + lines_per_request(row, word) * packet
    return rate * useful / on_wire * (CE_PAYLOAD + packet) / CE_PAYLOAD


def sector_share(sectors, word: float) -> float | None:
    """Useful bytes per byte a warp request puts on a link: a warp's 32 words over the 32-B
    sectors they touch (None without the counter)."""
    sectors = _number(sectors)
    return None if sectors is None else min(1.0, LANES * word / (sectors * SECTOR))


def lines_per_request(row, word: float) -> float:
    """128-B lines one warp request touches: a run's 128 / run, a stride's lanes apart (one
    line each from 128 B), else the lines its words fill, one more where an offset (`off:K`
    words) moves them off a line's start."""
    run = name_param(row, "run")
    if run is not None:
        return LINE / run
    stride = name_param(row, "s")
    if stride is not None and stride * word >= LINE:
        return float(LANES)
    span = LANES * word * (stride or 1)
    off = name_param(row, "off") or 0.0
    return max(1.0, math.ceil(span / LINE) + (1.0 if (off * word) % LINE else 0.0))


def name_param(row, key: str) -> float | None:
    """The number of the name's `key:N` part, or None."""
    for part in str(row["name"]).split("/"):
        if part.startswith(key + ":"):
            try:
                return float(part.split(":", 1)[1])
            except ValueError:
                return None
    return None


def _number(value) -> float | None:
    """A positive finite count, or None (a missing counter is NaN or None)."""
    try:
        value = float(value)
    except (TypeError, ValueError):
        return None
    return value if math.isfinite(value) and value > 0 else None
