"""The model against the run: measured / predicted (`model_gbs`) per benchmark, per family and
in all, as summary.md, report.md and the model figure show it (docs/model.md).

A benchmark counts as predicted when it has a `model_gbs`; `ref/` and `peer/` are the suite's
references and are never counted; every other benchmark without a prediction is counted as
such ("not predicted"): the share within 5 % is of all of them, not of the predicted ones.
"""

from dataclasses import dataclass

import numpy as np
import pandas as pd

TOLERANCE = 0.05  # the bar: measured / predicted within 5 %
WIDE = 0.15  # ... and every one within 15 % or named with its reason
ASIDE = ("ref", "peer", "model")  # references and the calibration chases, not predictions


@dataclass(frozen=True)
class FamilyCheck:
    family: str
    benchmarks: int  # all of the family's benchmarks that ran without error
    predicted: int
    within: int  # within TOLERANCE
    median: float | None  # of measured / predicted
    worst: float | None  # the ratio farthest from 1
    worst_name: str | None


@dataclass(frozen=True)
class Check:
    flavor: str
    families: list[FamilyCheck]
    worst: pd.DataFrame  # the benchmarks farthest from their prediction: name, gbs, model, ratio

    @property
    def benchmarks(self) -> int:
        return sum(f.benchmarks for f in self.families)

    @property
    def predicted(self) -> int:
        return sum(f.predicted for f in self.families)

    @property
    def within(self) -> int:
        return sum(f.within for f in self.families)


def ratios(medians: pd.DataFrame) -> pd.DataFrame:
    """The rows that count (no error, not `ref/` or `peer/`) with `ratio` = measured /
    model_gbs (NaN where there is no prediction)."""
    if medians.empty or "model_gbs" not in medians.columns:
        return medians.assign(ratio=pd.Series(dtype=float))
    rows = medians.loc[~medians["family"].isin(ASIDE) & medians["gbs"].notna()]
    if "model_bound" not in rows.columns:
        rows = rows.assign(model_bound="")
    return rows.assign(ratio=rows["gbs"] / rows["model_gbs"])


def check(medians: pd.DataFrame, worst: int = 10) -> list[Check]:
    """One Check per flavor of `medians` (frame.medians_frame), families in run order."""
    out = []
    for flavor, rows in ratios(medians).groupby("flavor", sort=False):
        families = [_family(name, group) for name, group in rows.groupby("family", sort=False)]
        far = rows.dropna(subset=["ratio"])
        far = far.assign(off=(np.log(far["ratio"])).abs()).sort_values("off", ascending=False)
        out.append(Check(str(flavor), families,
                         far.head(worst)[["name", "gbs", "model_gbs", "model_bound", "ratio"]]))
    return out


def _family(name: str, group: pd.DataFrame) -> FamilyCheck:
    r = group["ratio"].dropna()
    if r.empty:
        return FamilyCheck(str(name), len(group), 0, 0, None, None, None)
    off = (r - 1).abs()
    worst_index = np.log(r).abs().idxmax()
    return FamilyCheck(str(name), len(group), len(r), int((off <= TOLERANCE).sum()),
                       float(r.median()), float(r[worst_index]),
                       str(group.at[worst_index, "name"]))
