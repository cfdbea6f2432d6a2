"""The cache levels (`working_set`): hot read bandwidth against the working-set size, a line
per flavor and L1 carve-out, with the unified L1 and the L2 sizes and the DRAM peak marked."""

import pandas as pd

from gmbtools.present.figures.common import SPREAD
from gmbtools.present.plotkit import (GBS_LABEL, Drawn, Skip, bytes_text, color, draw_series,
                                      error_handle, error_note, family_rows, flavors_of, footnote,
                                      gbs_axis, line_style, log2_axis, mark_errors, new_figure,
                                      peak_gbs, set_title, spread_note)


def working_set(medians: pd.DataFrame) -> Drawn:
    """Hot read bandwidth against the working-set size, a line per flavor and carve-out (the
    driver's choice, and each `l1:` parameter in the run), with the unified L1 and the L2
    sizes marked."""
    rows = family_rows(medians, "cache")
    if "ws" not in rows.columns:
        raise Skip("cache/* benchmarks without a ws: parameter")
    rows = rows.assign(ws=pd.to_numeric(rows["ws"], errors="coerce")).dropna(subset=["ws"])
    if rows.empty:
        raise Skip("no cache/* benchmark with a numeric ws: parameter")
    carveout = (rows["l1"] if "l1" in rows.columns else pd.Series(None, index=rows.index))
    rows = rows.assign(l1=carveout.fillna(""))
    present = flavors_of(rows)
    carveouts = sorted(set(rows["l1"]), key=lambda c: ("", "large", "small").index(c)
                       if c in ("", "large", "small") else 3)
    figure, axes = new_figure(1, 1, (9.0, 5.0))
    ax = axes[0, 0]
    shown = []
    for flavor in present:
        for k, l1 in enumerate(carveouts):
            series = rows.loc[(rows["flavor"] == flavor) & (rows["l1"] == l1)].sort_values("ws")
            if series.empty:
                continue
            label = flavor + (f", {l1} L1" if l1 else "")
            style = {**line_style(flavor), "linestyle": ["-", "--", ":", "-."][k % 4]}
            draw_series(ax, series["ws"], series, gid=f"{flavor}/{l1 or 'driver'}",
                        label=label, **style)
            mark_errors(ax, series.loc[series["error"].notna(), "ws"], color(flavor))
            shown.append(series[["flavor", "variant", "l1", "ws", *SPREAD]])
    sms = medians["gpu_sms"].dropna() if "gpu_sms" in medians.columns else pd.Series([])
    l2_users = f", shared by {int(sms.iloc[0])} SMs" if not sms.empty else ""
    for key, name, style in (("gpu_l1_shared_per_sm_bytes", "L1 + shared memory per SM", "--"),
                             ("gpu_l2_bytes", "L2" + l2_users, "-.")):
        size = medians[key].dropna() if key in medians.columns else pd.Series([])
        if not size.empty and float(size.iloc[0]) > 0:
            ax.axvline(float(size.iloc[0]), color="black", linestyle=style, linewidth=1,
                       label=f"{name}: {bytes_text(float(size.iloc[0]))} ({key})")
        else:  # an architecture the suite has no table entry for: say so, draw no wrong line
            ax.plot([], [], " ", label=f"{name}: unknown for this GPU, not marked ({key})")
    peak = peak_gbs(medians)
    if peak is not None:
        ax.axhline(peak, color="black", linestyle=":", linewidth=1.2,
                   label=f"DRAM theoretical peak {peak:.0f} GB/s")
    log2_axis(ax, rows["ws"], in_bytes=True)
    gbs_axis(ax, max(peak or 0.0, float(rows["gbs_hi"].max(skipna=True) or 0),
                     float(rows["gbs"].max(skipna=True) or 0)))
    ax.set_xlabel("working set (bytes, log scale)")
    ax.set_ylabel(GBS_LABEL)
    handles, _ = ax.get_legend_handles_labels()
    if rows["error"].notna().any():
        handles.append(error_handle())
    ax.legend(handles=handles, loc="upper right", fontsize=8, framealpha=0.95)
    set_title(figure, medians, "Hot working-set sweep: read bandwidth vs working-set size")
    footnote(figure, "The working set is read repeatedly (hot caches, no flush); every block"
             " reads the same bytes at every size. Small L1: the carve-out hint"
             " cudaSharedmemCarveoutMaxShared (cudaFuncAttributePreferredSharedMemoryCarveout)."
             " " + spread_note(rows) + error_note(rows))
    return Drawn(figure, pd.concat(shown, ignore_index=True), (
        "Read bandwidth of a working set read over and over, against its size: the steps"
        " down mark where it stops fitting in L1 and then in L2 (dashed lines: the L2 size from"
        " the device, the L1 from the architecture's tuning guide) and DRAM takes over; a non-caching build (cg) has no L1 step, and a small"
        " L1 carve-out moves the first step to smaller sets."))
