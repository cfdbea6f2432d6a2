"""The mix and depth terms of the prediction model: what DRAM gives a stream is not a straight
line between what it gives reads, copies and writes, and a copy slows down the deeper its
threads queue (docs/model.md, reads and writes mixed).

- Mix: the calibration's `model/mix/f32/reads:K` (K = 5, 7, 12) read K arrays and write one,
  each coalesced, on a block per tile: a write share of 1 / (K + 1); `reads:8/writes:2`
  writes two: a share of 1/5 (the SoA family's s16, from twice its streams). A probe of a
  larger share (fewer loads per word written) is left out: on the H200 its bytes in flight
  bound it, not DRAM (shares of 1/4 and 1/3 from two outputs ran below both 1/5 and an even
  copy). Each probe's time per byte over the straight line's at its share
  (`Params.dram_ns_per_byte` without this term) is its factor; a stream's factor is linear in
  its write share between the probes, 1 at no writes and at half (the read's and the copy's
  rates are measured themselves) and past half (no probe there).
- Depth: the calibration's `model/copy/f32|f64|f32x4/ilp:16` copy 64, 128 and 256 B per
  thread on a block per tile; each one's time per byte over `ref/memcpy_d2d`'s is its factor;
  a plain copy's factor (the copy and vector families on a block per tile: a thread's loads
  a block apart, as the probes') is linear in log2 of its bytes per thread between 16 B (1:
  the sweep's shallow copies run at memcpy's rate) and the probes, flat past the deepest.
  Persistent grids keep their own streams' rates (`model_streams`), with neither factor.
"""

import math
import re
from dataclasses import dataclass

import numpy as np
import pandas as pd

MIX_PROBES = "model/mix/f32/reads:"
MIX_NAME = re.compile(r"(\d+)(?:/writes:(\d+))?")  # what follows MIX_PROBES: K, and W if not 1
MOST_SHARE = 0.2  # the largest write share a probe's loads keep DRAM, not latency, the bound
DEPTH_PROBES = "model/copy/"
WORD_BYTES = {"f32": 4, "f64": 8, "f32x2": 8, "f32x4": 16}
SHALLOW = 16.0  # bytes per thread at which a copy runs at memcpy's rate
SOURCES = MIX_PROBES + "*, " + DEPTH_PROBES + "*/ilp:16"


@dataclass(frozen=True)
class MixTerms:
    """The probes' factors on DRAM's time per byte: by write share, by a copy's depth."""

    shares: tuple = ()  # write shares of the mix probes, ascending
    share_factors: tuple = ()
    depths: tuple = ()  # bytes per thread of the depth probes, ascending
    depth_factors: tuple = ()
    names: tuple = ()

    def mix(self, write_share: float) -> float:
        if not self.shares or not 0.0 < write_share < 0.5:
            return 1.0
        return float(np.interp(write_share, (0.0, *self.shares, 0.5),
                               (1.0, *self.share_factors, 1.0)))

    def depth(self, bytes_per_thread: float) -> float:
        if not self.depths or bytes_per_thread <= SHALLOW:
            return 1.0
        return float(np.interp(math.log2(bytes_per_thread),
                               [math.log2(b) for b in (SHALLOW, *self.depths)],
                               (1.0, *self.depth_factors)))


def terms_from(rows: pd.DataFrame, params) -> MixTerms | None:
    """The factors from one file's probes against `params`' straight line (which must not hold
    these terms yet), or None where the run has neither kind or lacks the DRAM rates."""
    if "name" not in rows.columns or not (params.read_gbs and params.write_gbs
                                          and params.copy_gbs):
        return None
    mixes, depths, names = {}, {}, []
    for _, row in rows.loc[rows["name"].astype(str).str.startswith(MIX_PROBES)].iterrows():
        gbs = pd.to_numeric(row.get("gbs"), errors="coerce")
        found = MIX_NAME.fullmatch(str(row["name"])[len(MIX_PROBES):])
        if found and pd.notna(gbs) and gbs > 0:
            reads, writes = int(found.group(1)), int(found.group(2) or 1)
            share = writes / (reads + writes)
            if share > MOST_SHARE:  # too few loads per word written: latency bounds it
                continue
            mixes[share] = (1.0 / gbs) / params.dram_ns_per_byte(1.0 - share, share)
            names.append(str(row["name"]))
    pattern = re.compile(re.escape(DEPTH_PROBES) + r"(\w+)/ilp:(\d+)$")
    for _, row in rows.loc[rows["name"].astype(str).str.startswith(DEPTH_PROBES)].iterrows():
        found = pattern.match(str(row["name"]))
        gbs = pd.to_numeric(row.get("gbs"), errors="coerce")
        if found and found.group(1) in WORD_BYTES and pd.notna(gbs) and gbs > 0:
            depth = WORD_BYTES[found.group(1)] * int(found.group(2))
            depths[float(depth)] = params.copy_gbs / gbs
            names.append(str(row["name"]))
    if not mixes and not depths:
        return None
    return MixTerms(tuple(sorted(mixes)), tuple(mixes[s] for s in sorted(mixes)),
                    tuple(sorted(depths)), tuple(depths[d] for d in sorted(depths)), tuple(names))
