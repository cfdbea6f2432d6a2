"""The built-in benchmark a typed pattern costs the same as, by the prediction model: of the
run's built-ins that do to memory what the pattern's op does, the one whose winning bound is
the pattern's and whose predicted GB/s is nearest its own, where that is within `SAME_COST`.
The class's twin (`pattern_class`) has the same shape (sectors per request); this one has the
same cost for the same reason: a hash over a large array is shaped like `gather/random` yet
pays more DRAM time per load, a permutation within 4-KiB blocks is shaped like it and runs
six times as fast."""

import math
from dataclasses import dataclass

import pandas as pd

SAME_COST = 0.10  # predicted GB/s within 10 %: both within the model's 5 % of it

# The built-ins whose memory does what each op of gmb pattern does (kernels/pattern_rtc.cuh):
# a gather's loads follow the index and its stores are coalesced, as a mapped copy's that reads
# through its map (offset/, stride/ and their read variants, warp/, gather/) or a plain copy.
_DOES = {"gather": ("offset/f32/read/", "stride/f32/read/", "warp/", "gather/", "copy/"),
         "scatter": ("offset/f32/write/", "stride/f32/write/", "scatter/", "copy/"),
         "copy": ("offset/f32/copy/", "stride/f32/both/", "copy/"),
         "read": ("read/",), "write": ("write/",)}


@dataclass(frozen=True)
class Twin:
    name: str
    bound: str  # its model_bound, the pattern's
    predicted_gbs: float  # its model_gbs
    same_cost: bool  # within SAME_COST of the pattern's prediction; else only the nearest


def candidates(predicted: pd.DataFrame, op: str) -> pd.DataFrame:
    """The rows of a run's predictions (name, model_gbs, model_bound) that do what `op` does and
    have a prediction."""
    if predicted.empty or op not in _DOES:
        return predicted.iloc[0:0]
    names = predicted["name"].astype(str)
    does = names.map(lambda n: n.startswith(_DOES[op]) and not n.startswith("pattern/"))
    return predicted.loc[does & predicted["model_gbs"].notna() & (predicted["model_gbs"] > 0)]


def model_twin(bound: str | None, predicted_gbs: float | None, rows: pd.DataFrame,
               shaped: str | None = None) -> Twin | None:
    """Of `rows` (`candidates`), the one of the same bound nearest in predicted GB/s (`same_cost`
    where within SAME_COST), or None where no row has the bound or the pattern no prediction.
    The class's twin, `shaped`, wins where it costs the same: the same shape and cost."""
    if not bound or not predicted_gbs or rows.empty:
        return None
    same = rows.loc[rows["model_bound"] == bound]
    if same.empty:
        return None
    distance = (same["model_gbs"].astype(float) / predicted_gbs).map(lambda r: abs(math.log(r)))
    best = same.loc[distance.idxmin()]
    named = same.loc[same["name"] == shaped]
    if not named.empty and distance[named.index[0]] <= math.log(1 + SAME_COST):
        best = named.iloc[0]
    gbs = float(best["model_gbs"])
    return Twin(name=str(best["name"]), bound=bound, predicted_gbs=gbs,
                same_cost=bool(abs(gbs / predicted_gbs - 1) <= SAME_COST))
