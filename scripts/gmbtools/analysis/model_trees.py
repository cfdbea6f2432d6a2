"""The reduce ladder's trees (`Params.trees`): rungs 0-5 load, then sum the block's 256 partials
in shared memory, a barrier per step, and the block keeps its slot until its tree is done. So a
block's round is its start, its load's round trip and its tree (model_bounds: Little's law),
and a tree takes longer the more trees share the SM.

Two probes per rung measure the tree with no load (`model/reduce/f32/<rung>/loads:none/bpsm:K`,
benchmarks/reduce.cu): blocks that each write one 4-B sum, so a probe's round per block slot is
4 B x K blocks per SM x SMs / its rate. Less an empty block's slot (`block_slot_ns`):

- at one block per SM, a tree's time alone, T1;
- at all the blocks an SM holds (K = 8 on Hopper), the tree's time when n trees share the SM,
  n = K x tree / round (Little's law on the probe's own slots): each tree beside it adds w,
  tree(n) = T1 + (n - 1) w, so w = (tree - T1) / (n - 1).

A rung's block then spends tree(n) with n = K x tree / round of its own round: solved with the
round (`Tree.time`). How close it comes on an H100, and where it misses: docs/model.md.
"""

import re
from dataclasses import dataclass

import pandas as pd

PROBE = re.compile(r"model/reduce/f32/(\w+)/loads:none/bpsm:(\d+)")
SUM_BYTES = 4  # each probe block writes its sum


@dataclass(frozen=True)
class Tree:
    """A rung's tree: its time alone and what each tree sharing the SM adds (ns)."""

    alone_ns: float
    per_other_ns: float

    def time(self, round_ns: float, per_sm: float) -> float:
        """The tree's time in a block whose round is `round_ns`, `per_sm` blocks per SM:
        t = T1 + (K t / round - 1) w, at least T1."""
        w = self.per_other_ns
        sharing = 1 - per_sm * w / round_ns
        if sharing <= 0:  # the SM is all trees: the round is theirs
            return round_ns
        return max(self.alone_ns, (self.alone_ns - w) / sharing)


def tree_rounds(rows: pd.DataFrame, sms: int | None) -> dict:
    """{(rung, blocks per SM): ns} of each probe's round per block slot (nothing without the
    SM count)."""
    if not sms:
        return {}
    out = {}
    for name, gbs in zip(rows["name"], rows["gbs"]):
        found = PROBE.fullmatch(str(name))
        if found and pd.notna(gbs) and gbs > 0:
            per_sm = int(found.group(2))
            out[(found.group(1), per_sm)] = SUM_BYTES * sms * per_sm / float(gbs)
    return out


def tree_of(rounds: dict, rung: str, empty_slot_ns: float | None) -> Tree | None:
    """`rung`'s tree from its two probes (None without both)."""
    alone = rounds.get((rung, 1))
    shared = [(per_sm, ns) for (name, per_sm), ns in rounds.items() if name == rung and per_sm > 1]
    if alone is None or not shared:
        return None
    per_sm, round_ns = max(shared)
    empty = empty_slot_ns or 0.0
    t1 = max(0.0, alone - empty)
    tree = max(t1, round_ns - empty)
    sharing = per_sm * tree / round_ns  # trees at once in the probe's SM
    per_other = (tree - t1) / (sharing - 1) if sharing > 1 else 0.0
    return Tree(t1, per_other)
