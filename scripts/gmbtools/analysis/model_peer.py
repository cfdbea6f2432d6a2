"""The peer link (`peer/*`): kernels that read or write the other GPU's memory over NVLink,
predicted from the link's rate (NVML) and the copy engine's pushes over it in the same run
(`ref/memcpy_peer/dir:push`), never from a peer kernel (docs/peer.md):

- The copy engine sends 256-B payloads, SMs 128-B ones, each packet with a 16-B header
  (nccl-tests issues 149 and 258): SMs move SM_SHARE = (128/144) / (256/272) of the copy
  engine's payload each way. What else the link spends (its flow control, the copy engine's
  own gaps) is in the copy engine's measured rate and so in both.
- Over the link go the sectors a warp request touches: a request of 32 four-byte words, one
  per sector, moves 1,024 B for its 128, as over the host link (`model_links`).
- A pull's read requests travel the other way, a 16-B header per 128-B line: one way they
  cross an idle direction; both ways at once (`dir:both`, each GPU pulling) they share each
  direction with the data coming back.

A copy counts the bytes read and written, one side over the link: twice the link's useful
rate. Not modelled: the peer chases (latency), and a misaligned pull (`off:1`), whose extra
sector the L2 keeps for the next warp on part of the requests only.
"""

from gmbtools.analysis.model_links import sector_share
from gmbtools.analysis.model_params import Params
from gmbtools.data.naming import element_bytes

PEER = "peer link"
HEADER, SM_PAYLOAD, CE_PAYLOAD = 16.0, 128.0, 256.0
SM_SHARE = (SM_PAYLOAD / (SM_PAYLOAD + HEADER)) / (CE_PAYLOAD / (CE_PAYLOAD + HEADER))
LINE = 128.0


def peer_gbs(p: Params, row) -> float | None:
    """The link bound of one `peer/` row (GB/s read + written), or None without a model."""
    found = _over_link(row)
    if found is None or any(x.startswith("off:") for x in str(row["name"]).split("/")):
        return None
    if not (p.peer_ce_gbs and p.peer_link_gbs):
        return None
    op, where, useful = found
    one_way = p.peer_ce_gbs / 2 * SM_SHARE  # SM payload GB/s each way, the link alone
    if op in ("read", "write"):
        return one_way * useful
    if where == "both":  # each direction: the data of one pull and the requests of the other
        wire_per_byte = p.peer_link_gbs / one_way + HEADER / LINE
        return 2 * 2 * p.peer_link_gbs / wire_per_byte * useful
    return 2 * one_way * useful


def link_bytes(row) -> float | None:
    """`model_link_bytes`: bytes on the wire per useful byte of one `peer/` row, the direction
    that carries its data: the sectors it touches over its useful bytes, each packet's header
    (HEADER per SM_PAYLOAD), and both ways the other pull's requests (HEADER per LINE)."""
    found = _over_link(row)
    if found is None:
        return None
    _, where, useful = found
    wire = (SM_PAYLOAD + HEADER) / SM_PAYLOAD / useful
    return wire + HEADER / LINE if where == "both" else wire


def _over_link(row) -> tuple[str, str, float] | None:
    """(op, direction, useful bytes per byte over the link) of a peer read, write or copy: a
    pull's loads cross the link, a push's or a write's stores."""
    parts = str(row["name"]).split("/")
    op, type_ = (parts + ["", ""])[1:3]
    where = next((x.split(":", 1)[1] for x in parts if x.startswith("dir:")), "")
    if op not in ("read", "write", "copy"):
        return None
    column = "model_st_sectors_per_req" if op == "write" or where in ("push", "to_all") \
        else "model_ld_sectors_per_req"
    useful = sector_share(row.get(column), float(element_bytes(type_) or 4))
    return None if useful is None else (op, where, useful)
