"""The block-start benchmarks (`inflight/blocks/block:B/bpsm:K`, benchmarks/inflight.cu): blocks
that write one 4-B word each, so their rate is how fast blocks start and finish: at most the
GPU's block start rate (`Params.block_rate`), and at most K blocks per SM at a time, each
holding its slot for an empty block's time (`Params.block_slot_ns`).
"""

import pandas as pd

WORD = 4  # bytes each block writes


def blocks_gbs(block_rate: float | None, slot_ns: float | None, sms: int | None,
               row) -> float | None:
    """GB/s of one `inflight/blocks/*` row (None where a parameter is missing)."""
    per_sm = pd.to_numeric(row.get("bpsm"), errors="coerce")
    if not (block_rate and slot_ns and sms) or pd.isna(per_sm):
        return None
    return WORD * min(block_rate, sms * float(per_sm) / slot_ns)
