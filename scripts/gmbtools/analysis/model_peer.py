"""The peer link (`peer/*`): kernels that read or write the other GPU's memory over NVLink,
predicted from the link's rate (NVML), the copy engine's pushes over it in the same run
(`ref/memcpy_peer/dir:push`) and, for few blocks, the link's round trip (the peer chase beyond
every L2), never from a peer kernel's rate (docs/peer.md):

- A packet carries what a warp request moves of one 128-B line, after a 16-B header
  (nccl-tests issues 149 and 258); the copy engine's carry 256 B. A coalesced request fills its
  lines: SMs move SM_SHARE = (128/144) / (256/272) of the copy engine's payload each way. What
  else the link spends (its flow control, the copy engine's own gaps) is in the copy engine's
  measured rate and so in both.
- A request that touches part of a line sends there the span from the first sector it touches
  to the last: a stride of 8 words moves 144 B for 16 useful, of 16 words 112 B for 8 (sectors
  0 and 2: three sectors), of 32 words 48 B for 4, a 32-B run per line 48 B for 32 (`run:32`,
  every byte used, 0.75 of a coalesced request's rate where no neighbour's request joins it).
- A pull's read requests travel the other way, a header per line: one way they cross an idle
  direction; both ways at once (`dir:both_pull`, each GPU pulling; `dir:split`, one GPU
  pulling half and pushing half) they share a direction with data. Pushes both ways
  (`dir:both`) send no requests: each direction as one push alone.
- With few blocks (`blocks:N`) the link waits on them: N blocks' loads in flight over a
  round (Little's law), each block's 256 threads with the words its name says (f32x4, ilp:4:
  four 16-B words); a round is the link's round trip plus what the local model adds to a
  persistent warp's (`model_bounds`): each further line of the round (`line_ns`) and the
  warp's own loop (`round_ns`).
- Bulk (TMA) copies (`peer/bulk/*`) send the SMs' payloads, not the copy engine's: whole
  lines, as a coalesced request.

A copy counts the bytes read and written, one side over the link: twice the link's useful
rate. Not modelled: the peer chases (latency), and a misaligned pull (`off:1`), whose extra
sector the L2 keeps for the next warp on part of the requests only. Known to run faster than
the model: runs of 32 and 64 B per line (docs/peer.md: about half of the neighbouring warps'
requests to a line leave in one packet).
"""

import pandas as pd

from gmbtools.analysis.model_bounds import Shape
from gmbtools.analysis.model_links import lines_per_request, name_param, sector_share
from gmbtools.analysis.model_params import Params
from gmbtools.data.naming import element_bytes

PEER = "peer link"
HEADER, SM_PAYLOAD, CE_PAYLOAD = 16.0, 128.0, 256.0
SM_SHARE = (SM_PAYLOAD / (SM_PAYLOAD + HEADER)) / (CE_PAYLOAD / (CE_PAYLOAD + HEADER))
LINE, SECTOR, LANES = 128.0, 32.0, 32
BLOCK_THREADS = 256  # kernels/coalesced.cuh's kCoalescedBlock
PUSHES = ("push", "to_all", "both")  # the stores cross the link
REQUESTS_BOTH_WAYS = ("both_pull", "split")  # a direction carries data and the other pull's requests


def peer_gbs(p: Params, row, latency_ns: float | None = None) -> float | None:
    """The link bound of one `peer/` row (GB/s read + written), or None without a model;
    `latency_ns`: the link's round trip (link_latency_ns), for the block sweep."""
    found = _over_link(row)
    if found is None or not (p.peer_ce_gbs and p.peer_link_gbs):
        return None
    op, where, line = found
    one_way = p.peer_ce_gbs / 2 * SM_SHARE  # SM payload GB/s each way, the link alone
    share = _share(line)
    if op in ("read", "write"):
        return one_way * share
    if where in REQUESTS_BOTH_WAYS:
        wire_per_byte = p.peer_link_gbs / (one_way * share) + HEADER / line.useful
        return 2 * 2 * p.peer_link_gbs / wire_per_byte
    copies = 2 if where == "both" else 1
    bound = copies * 2 * one_way * share
    blocks = name_param(row, "blocks")
    if blocks is None:
        return bound
    if not latency_ns:
        return None
    word = float(element_bytes(str(row["name"]).split("/")[2]) or 4)
    loads = name_param(row, "ilp") or 1  # a block's loads in flight: its threads' words
    lines = Shape(op="read", load_bytes_per_thread=loads * word, grid="persistent", dram_bytes=1.0,
                  efficiency=1.0, ld_sectors_per_req=LANES * word / SECTOR,
                  word_bytes=word).lines_per_round  # a warp's round, as the local model's
    round_ns = latency_ns + (p.line_ns or 0.0) * (lines - 1) + (p.round_ns or 0.0)
    return min(bound, 2 * blocks * BLOCK_THREADS * loads * word / round_ns)


def link_bytes(row) -> float | None:
    """`model_link_bytes`: bytes on the wire per useful byte of one `peer/` row, the direction
    that carries its data: per line a request touches, the header and the sectors it moves
    there over the bytes it uses, and with pulls both ways the other pull's header per line."""
    found = _over_link(row)
    if found is None:
        return None
    _, where, line = found
    wire = (HEADER + line.sectors * SECTOR) / line.useful
    return wire + HEADER / line.useful if where in REQUESTS_BOTH_WAYS else wire


def link_latency_ns(rows: pd.DataFrame) -> float | None:
    """The link's round trip: the one-lane peer chase of the largest set (beyond every L2)."""
    if "latency_ns" not in rows.columns:
        return None
    chases = rows.loc[rows["name"].astype(str).str.match(r"^peer/chase/ws:\d+/lanes:1$")]
    if chases.empty:
        return None
    ws = chases["name"].str.extract(r"ws:(\d+)")[0].astype(float)
    value = pd.to_numeric(chases.loc[ws.idxmax(), "latency_ns"], errors="coerce")
    return float(value) if pd.notna(value) and value > 0 else None


class _Line:
    """What one warp request moves of each 128-B line it touches: the sectors and the bytes
    it uses."""

    def __init__(self, sectors: float, useful: float):
        self.sectors, self.useful = sectors, useful


def _share(line: _Line) -> float:
    """Useful bytes per wire byte, as a share of a full line's (1 for a coalesced request)."""
    full = SM_PAYLOAD / (SM_PAYLOAD + HEADER)
    return line.useful / (HEADER + line.sectors * SECTOR) / full


def _over_link(row) -> tuple[str, str, _Line] | None:
    """(op, direction, what a request moves per line) of a peer read, write or copy: a pull's
    loads cross the link, a push's or a write's stores. None for what is not modelled."""
    parts = str(row["name"]).split("/")
    op, type_ = (parts + ["", ""])[1:3]
    where = next((x.split(":", 1)[1] for x in parts if x.startswith("dir:")), "")
    if op == "bulk" and type_ in ("read", "copy"):  # whole lines, as a coalesced request
        return type_, where, _Line(LINE / SECTOR, LINE)
    if op not in ("read", "write", "copy") or name_param(row, "off") is not None:
        return None
    column = "model_st_sectors_per_req" if op == "write" or where in PUSHES \
        else "model_ld_sectors_per_req"
    word = float(element_bytes(type_) or 4)
    sectors = row.get(column)
    if sector_share(sectors, word) is None:
        return None
    lines = lines_per_request(row, word)
    return op, where, _Line(_span(row, word, float(sectors) / lines), LANES * word / lines)


def _span(row, word: float, touched: float) -> float:
    """Sectors a packet carries of one line: from the first the request touches to the last
    (a stride of 64 B touches sectors 0 and 2 and sends three)."""
    stride = name_param(row, "s")
    if stride is None or stride * word >= LINE:
        return touched
    return max(touched, (LINE - stride * word) // SECTOR + 1)
