"""The optimization ladders (`transpose/`, `reduce/`): each benchmark one step ("rung") of a
kernel's optimization, its position the `rung` counter, set against the roof it climbs to. One
table (`steps`) feeds both the `ladder_*` figures and report.md's tables.

- `transpose/<type>/<rung>/n:<N>`: the roof is the same file's `copy` rung of that type and N
  (a plain 2-D copy of the same bytes); `ref/memcpy_d2d` and the peak stand beside it.
- `reduce/<type>/<rung>`: the roof is the file's best read, the benchmark summary.md's headline
  picks (`headline` of `frame.medians_frame`); `reduce/<type>/cub` (CUB's DeviceReduce::Sum,
  which has no rung) is the library reference.
"""

from dataclasses import dataclass

import numpy as np
import pandas as pd

from gmbtools.data.flavors import flavors_of
from gmbtools.data.naming import bytes_text, element_bytes

BEST_READ = "best read"  # summary.headline_picks' label of the roof of a reduction


@dataclass(frozen=True)
class Ladder:
    family: str
    title: str
    group_header: str  # what tells one ladder of the family from another
    roof_op: str | None  # the rung of the same type (and N) that is the roof; None: best read
    reference_op: str | None  # the library reference among the family's benchmarks

    @property
    def roof(self) -> str:
        """What "% of roof" is of, in labels and column headers."""
        return self.roof_op or BEST_READ


TRANSPOSE = Ladder("transpose", "Matrix transpose", "type/N", "copy", None)
REDUCE = Ladder("reduce", "Sum reduction", "type", None, "cub")
LADDERS = (TRANSPOSE, REDUCE)


def steps(medians: pd.DataFrame, ladder: Ladder) -> pd.DataFrame:
    """The ladder's benchmarks of every file, by flavor (default, ca, cg), then ladder (type
    and N, in order of appearance), then rung, the reference last, with columns:

    - `group`: the ladder's label (`f32 · n:16384`, `f32`); `rung`: the counter, taken from
      another file where this one errored (its counters are lost with its numbers);
    - `reference`: True on the library reference's row;
    - `roof_name`, `roof_gbs`, `pct_roof`: the roof of the same file (and ladder), GB/s as a %;
    - `ref_gbs`, `ratio_to_ref`: the same file and ladder's reference (NaN where none).
    """
    rows = medians.loc[medians["family"] == ladder.family]
    if rows.empty:
        return rows.assign(group=None, reference=False, roof_name=None, roof_gbs=np.nan,
                           pct_roof=np.nan, ref_gbs=np.nan, ratio_to_ref=np.nan)
    rows = rows.assign(group=[_group_label(row) for row in rows.itertuples()],
                       rung=rows["rung"].fillna(rows.groupby("name")["rung"].transform("first")),
                       reference=rows["op"] == ladder.reference_op)
    roof_name, roof_gbs = (_same_ladder(rows, ladder.roof_op) if ladder.roof_op
                           else _best_read(medians, rows))
    _, ref_gbs = _same_ladder(rows, ladder.reference_op)
    rows = rows.assign(roof_name=roof_name, roof_gbs=roof_gbs,
                       pct_roof=rows["gbs"] / roof_gbs * 100, ref_gbs=ref_gbs,
                       ratio_to_ref=rows["gbs"] / ref_gbs)
    order = {flavor: i for i, flavor in enumerate(flavors_of(rows))}
    groups = {group: i for i, group in enumerate(dict.fromkeys(rows["group"]))}
    keyed = rows.assign(_flavor=rows["flavor"].map(order), _group=rows["group"].map(groups))
    keyed = keyed.sort_values(["_flavor", "_group", "reference", "rung"], na_position="last",
                              kind="stable")
    return keyed.drop(columns=["_flavor", "_group"]).reset_index(drop=True)


def panel_title(rows: pd.DataFrame) -> str:
    """A ladder's label, with the bytes of one matrix where it has a side N."""
    group = str(rows["group"].iloc[0])
    first = rows.iloc[0]
    size = element_bytes(str(first["type"]))
    n = first.get("n")
    if size is None or n is None or pd.isna(n):
        return group
    return f"{group} ({bytes_text(float(n) ** 2 * size)} matrix)"


def _group_label(row) -> str:
    """`f32 · n:16384` for a transpose, `f32` for a reduction (no params)."""
    n = getattr(row, "n", None)
    return str(row.type) if n is None or pd.isna(n) else f"{row.type} · n:{int(n)}"


def _same_ladder(rows: pd.DataFrame, op: str | None) -> tuple[np.ndarray, np.ndarray]:
    """Name and GB/s of the benchmark `op` of each row's file and ladder (NaN where none)."""
    keys = ["file", "group"]
    found = rows.loc[rows["op"] == op].drop_duplicates(keys).set_index(keys)
    where = pd.MultiIndex.from_frame(rows[keys])
    return (found["name"].reindex(where).to_numpy(dtype=object),
            found["gbs"].reindex(where).to_numpy(dtype=float))


def _best_read(medians: pd.DataFrame, rows: pd.DataFrame) -> tuple[np.ndarray, np.ndarray]:
    """Name and GB/s of each row's file's best read (summary.md's headline pick)."""
    best = medians.loc[medians["headline"] == BEST_READ].drop_duplicates("file")
    best = best.set_index("file")
    return (rows["file"].map(best["name"]).to_numpy(dtype=object),
            rows["file"].map(best["gbs"]).to_numpy(dtype=float))


def tables(medians: pd.DataFrame) -> list[tuple[Ladder, pd.DataFrame]]:
    """Each ladder with rungs in the run, and its table (`steps`)."""
    found = [(ladder, steps(medians, ladder)) for ladder in LADDERS]
    return [(ladder, table) for ladder, table in found if not table.empty]
