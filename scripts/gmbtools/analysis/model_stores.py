"""The store-alignment term of the prediction model: a warp store that does not start on a
32-B sector writes one sector more, two of its sectors in part, and DRAM takes longer for such
a stream than its bytes say, though it moves the same bytes (docs/model.md, stores off their
sectors).

The share of extra sectors is the traffic model's (`extra_share`: sectors per store request
over those of the lanes' bytes, less one: 0.25 for 4-B words 4 B off, 1/16 for 16-B words).
What DRAM pays per extra sector byte comes from the calibration's probe
`model/offset/f32/copy/off:3/ilp:4`, the offset family's copy at an offset the quick sweep does
not run (12 B), four per thread: its time beyond the DRAM bound of its bytes over its stores'
extra bytes (`store_part_ns`). Its loads are 12 B off too, as the family's are; the L1 serves
their extra sectors (Nsight Compute: the L2's read sectors barely grow), so the time is charged
to the stores. A copy off on its store side alone
pays less (measured on an H100): the model charges it by its stores' share all the same.
"""

import pandas as pd

PROBE = "model/offset/f32/copy/off:3/ilp:4"


def extra_share(st_sectors_per_req: float | None, store_word_bytes: float) -> float:
    """Extra sectors a warp store writes, per sector its 32 lanes' bytes fill (0: aligned)."""
    if st_sectors_per_req is None or store_word_bytes <= 0:
        return 0.0
    return max(0.0, st_sectors_per_req / store_word_bytes - 1.0)  # 32 lanes: word sectors


def store_part_ns(rows: pd.DataFrame, params) -> float | None:
    """Extra DRAM ns per stored byte per unit of `extra_share`, from the probe, or None where
    the run lacks it or the DRAM rates."""
    if "name" not in rows.columns:
        return None
    probe = rows.loc[rows["name"] == PROBE]
    if probe.empty:
        return None
    row = probe.iloc[0]
    numbers = [pd.to_numeric(row.get(key), errors="coerce") for key in
               ("gbs", "model_dram_bytes", "model_efficiency", "model_st_sectors_per_req")]
    if any(pd.isna(x) for x in numbers):
        return None
    gbs, dram, efficiency, st_sectors = (float(x) for x in numbers)
    share = extra_share(st_sectors, 4.0)
    ns_per_byte = params.dram_ns_per_byte(dram / 2, dram / 2)  # reads and writes alike
    if not ns_per_byte or share <= 0 or gbs <= 0:
        return None
    measured, bound = dram * efficiency / gbs, dram * ns_per_byte
    return max(0.0, (measured - bound) / (dram / 2 * share))
