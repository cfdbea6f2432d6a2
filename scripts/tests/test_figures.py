"""Each figure function on the synthetic families and the committed H200 run: the values it
returns are the input's medians, the lines and cells drawn are those values, errors are never
drawn as numbers, and a figure without its family is skipped with a reason."""

import json
import math
import re
import subprocess
import sys

import numpy as np
import pandas as pd
import pytest
from conftest import GMB, H200_RUN, SCRIPTS, SYNTHETIC_CA, SYNTHETIC_DEFAULT, SYNTHETIC_FAMILIES

from gmbtools.present import figure_names, figures, plot
from gmbtools.analysis import frame
from gmbtools.data import results
from gmbtools.data.naming import strip_suffixes
from gmbtools.present.plotkit import Skip


@pytest.fixture(scope="module")
def families():
    return frame.medians_frame([results.load(p) for p in SYNTHETIC_FAMILIES.values()])


@pytest.fixture(scope="module")
def stride_drawn(families):
    return figures.stride(families)


@pytest.fixture(scope="module")
def h200():
    return frame.medians_frame([results.load(H200_RUN / f"{f}.json") for f in ("default", "ca")])


def file_values(*families):
    """{(flavor, name): GB/s or None for an error} straight from the synthetic JSON files
    (one run per benchmark, so the run is the median)."""
    values = {}
    for flavor, path in SYNTHETIC_FAMILIES.items():
        for e in json.loads(path.read_text())["benchmarks"]:
            name = strip_suffixes(e["name"])
            if name.split("/")[0] in families:
                error = e.get("error_occurred") or e.get("skipped")
                values[flavor, name] = None if error else e["bytes_per_second"] / 1e9
    return values


def assert_values_are_the_input(data, *families):
    expected = file_values(*families)
    assert sorted(zip(data["flavor"], data["name"])) == sorted(expected)
    for row in data.itertuples():
        want = expected[row.flavor, row.name]
        if want is None:
            assert math.isnan(row.gbs) and isinstance(row.error, str)
        else:
            assert row.gbs == want


def line(figure, gid):
    return next(ln for ax in figure.axes for ln in ax.get_lines() if ln.get_gid() == gid)


def test_stride_draws_the_medians_and_the_model(stride_drawn):
    drawn = stride_drawn
    assert_values_are_the_input(drawn.data, "stride")
    series = drawn.data.loc[(drawn.data["flavor"] == "default") & (drawn.data["type"] == "f32")
                            & (drawn.data["op"] == "read")].sort_values("s")
    drawn_line = line(drawn.figure, "default/f32/read")
    assert list(drawn_line.get_xdata()) == [1, 2, 4, 8, 32, 1024]
    assert list(drawn_line.get_ydata()) == list(series["gbs"])
    # Model: efficiency relative to s:1 times the bandwidth at s:1 (f32: 1, 1/2, 1/4, 1/8, 1/16).
    at_1 = series["gbs"].iloc[0]
    assert list(series["model_gbs"]) == pytest.approx(
        [at_1, at_1 / 2, at_1 / 4, at_1 / 8, at_1 / 16, at_1 / 16])
    model = line(drawn.figure, "model default/f32/read")
    assert list(model.get_ydata()) == pytest.approx(list(series["model_gbs"]))
    # ca's s:8 failed verification: a gap in its line, not a zero.
    ca = line(drawn.figure, "ca/f32/read")
    assert math.isnan(ca.get_ydata()[3]) and np.nanmin(ca.get_ydata()) > 0
    assert len(drawn.figure.axes) == 6
    assert "errored or skipped" in " ".join(t.get_text() for t in drawn.figure.legends[0].texts)


def test_offset_is_drawn_in_bytes(families):
    drawn = figures.offset(families)
    assert_values_are_the_input(drawn.data, "offset")
    f32x4 = drawn.data.loc[drawn.data["type"] == "f32x4"]
    assert sorted(set(f32x4["x"])) == [0, 16, 32, 64, 128]  # off elements x 16 B
    assert list(line(drawn.figure, "cg/f32x4/copy").get_xdata()) == [0, 16, 32, 64, 128]
    assert len(drawn.figure.axes) == 9


def test_flavor_bars_and_ratios(families):
    drawn = figures.flavors(families)
    data = drawn.data.set_index(["name", "flavor"])
    names = list(dict.fromkeys(drawn.data["name"]))
    # Both references (a family of two), then the best of each family in the default build;
    # not the hot working sets (cache/*), whose cache speeds would dwarf the DRAM bars, nor
    # the latency family (its bytes per second are no bandwidth).
    assert names[:2] == ["ref/memcpy_d2d", "ref/memset"]
    assert [n.split("/")[0] for n in names[2:]] == [
        "stride", "offset", "aos", "soa", "aos_staged", "vector", "reuse", "readonly", "inflight",
        "read", "read", "transpose", "reduce", "peer"]
    assert data.loc[("ref/memset", "cg"), "ratio_to_default"] == pytest.approx(0.98)
    assert data.loc[("aos/s8/fields:all", "cg"), "ratio_to_default"] == pytest.approx(0.98 * 0.8)
    assert math.isnan(data.loc[("ref/memset", "default"), "ratio_to_default"])
    labels = [t.get_text() for t in drawn.figure.axes[0].texts]
    assert "0.980" in labels and "0.784" in labels


def test_flavor_bars_of_chosen_benchmarks_show_errors_as_errors(families):
    drawn = figures.flavors(families, names=["stride/f32/read/s:8", "ref/memset"])
    errored = drawn.data.set_index(["name", "flavor"]).loc[("stride/f32/read/s:8", "ca")]
    assert math.isnan(errored["gbs"]) and "verification failed" in errored["error"]
    ax = drawn.figure.axes[0]
    assert "error" in [t.get_text() for t in ax.texts]
    heights = [p.get_height() for p in ax.patches]
    assert len(heights) == 5 and min(heights) > 0  # six bars less the errored one


def test_flavor_bars_need_two_flavors():
    one = frame.medians_frame([results.load(SYNTHETIC_DEFAULT)])
    with pytest.raises(Skip, match=r"only one flavor \(default\)"):
        figures.flavors(one)


def test_aos_soa(families):
    drawn = figures.aos_soa(families)
    assert_values_are_the_input(drawn.data, "aos", "soa", "aos_staged")
    assert len(drawn.data) == 3 * 30
    assert len(drawn.figure.axes) == 2 * 3  # fields one/all x three flavors
    cg_all = drawn.figure.axes[5]
    assert "error" in [t.get_text() for t in cg_all.texts]  # aos/p12/fields:all skipped in cg


def test_word_ilp_heat_map_cells_are_the_medians(families):
    drawn = figures.word_ilp(families)
    assert_values_are_the_input(drawn.data, "vector")
    default = drawn.data.loc[drawn.data["flavor"] == "default"]
    grid = default.pivot(index="word_bytes", columns="ilp", values="gbs")
    shown = drawn.figure.axes[0].get_images()[0].get_array()
    assert np.allclose(np.ma.filled(shown, np.nan), grid.to_numpy(), equal_nan=True)
    assert list(grid.index) == [1, 2, 4, 8, 16] and list(grid.columns) == [1, 2, 4, 8]
    assert math.isnan(grid.loc[16, 8])  # vector/w16/ilp:8 failed verification
    texts = [t.get_text() for t in drawn.figure.axes[0].texts]
    assert "error" in texts and f"{grid.loc[1, 1]:.0f}" in texts


def test_word_ilp_falls_back_to_the_copy_family(h200):
    drawn = figures.word_ilp(h200)
    assert set(drawn.data["word_bytes"]) == {4, 8, 16}
    assert not drawn.data["name"].str.startswith("copy/f64").any()
    assert drawn.data["name"].str.endswith("grid:full").all()
    assert "f64, also 8 B, is left out" in drawn.caption
    medians = h200.set_index(["flavor", "name"])["gbs"]
    for row in drawn.data.itertuples():
        assert row.gbs == medians[row.flavor, row.name]


def test_working_set_marks_the_cache_sizes(families):
    drawn = figures.working_set(families)
    assert_values_are_the_input(drawn.data, "cache")
    ax = drawn.figure.axes[0]
    labels = [ln.get_label() for ln in ax.get_lines()]
    assert "L1 + shared memory per SM: 256 KiB (gpu_l1_shared_per_sm_bytes)" in labels
    assert "L2, shared by 132 SMs: 60 MiB (gpu_l2_bytes)" in labels
    l2 = next(ln for ln in ax.get_lines() if ln.get_label().startswith("L2"))
    assert list(l2.get_xdata()) == [62914560, 62914560]
    assert ax.get_xscale() == "log"
    # The carve-out runs are lines of their own, never mixed into the driver's-choice line.
    assert {"default", "default, small L1", "cg", "cg, small L1"} <= set(labels)
    small = drawn.data.loc[(drawn.data["flavor"] == "ca") & (drawn.data["l1"] == "small")]
    assert list(small["ws"]) == [2**14, 2**16, 2**18, 2**20]
    assert set(drawn.data.loc[drawn.data["l1"] == "", "name"]) == {
        f"cache/read/ws:{2**p}" for p in range(14, 31, 2)}


def test_reuse_compares_the_flavors_without_the_carveout_runs(families):
    drawn = figures.reuse(families)
    expected = file_values("reuse")
    assert sorted(zip(drawn.data["flavor"], drawn.data["name"])) == sorted(
        key for key in expected if "/l1:" not in key[1])
    for row in drawn.data.itertuples():
        assert row.gbs == expected[row.flavor, row.name]
    assert list(dict.fromkeys(drawn.data["name"])) == [
        "reuse/stream", "reuse/stencil/r:2", "reuse/aos/bytes:64"]
    ratios = drawn.data.set_index(["name", "flavor"])["ratio_to_default"]
    assert ratios["reuse/stream", "cg"] == pytest.approx(0.98)
    assert ratios["reuse/stencil/r:2", "cg"] == pytest.approx(0.98 * 0.8)


def test_min_max_error_bars_where_there_are_repetitions(h200):
    drawn = figures.flavors(h200)
    data = drawn.data.set_index(["name", "flavor"])
    medians = h200.set_index(["name", "flavor"])
    for key, row in data.iterrows():
        assert (row["gbs"], row["gbs_lo"], row["gbs_hi"]) == tuple(
            medians.loc[key, ["gbs", "gbs_lo", "gbs_hi"]])
        assert row["gbs_lo"] < row["gbs"] < row["gbs_hi"]
    foot = " ".join(drawn.figure.figure.subfigs[1].texts[0].get_text().split())
    assert "medians of 5 repetitions; error bars: min–max of the repetitions" in foot


def test_titles_and_peak_come_from_the_context(families, stride_drawn):
    drawn = stride_drawn
    title = drawn.figure.get_suptitle()
    assert "Bandwidth vs stride" in title and "NVIDIA H200" in title
    assert "flavors: default, ca, cg" in title and "run 2026-11-22 02:27 UTC" in title
    legend = [t.get_text() for t in drawn.figure.legends[0].texts]
    assert "theoretical peak 4814 GB/s (gpu_peak_gbs)" in legend
    assert "ref/memcpy_d2d 4278 GB/s (default)" in legend
    other = figures.working_set(families.assign(gpu_peak_gbs=2000.0))
    _, labels = other.figure.axes[0].get_legend_handles_labels()
    assert "DRAM theoretical peak 2000 GB/s" in labels
    no_peak = figures.working_set(families.assign(gpu_peak_gbs=math.nan))
    _, labels = no_peak.figure.axes[0].get_legend_handles_labels()
    assert not any("peak" in label for label in labels)


@pytest.mark.parametrize(("draw", "reason"), [
    (figures.stride, "no stride/* benchmark in this run"),
    (figures.offset, "no offset/* benchmark in this run"),
    # This file's one aos benchmark (an older name) failed verification.
    (figures.aos_soa, "every aos/* or soa/* or aos_staged/* benchmark in this run errored"),
    (figures.word_ilp, "no vector/* benchmark"),
    (figures.working_set, "no cache/* benchmark in this run"),
    (figures.transpose_ladder, "no transpose/* benchmark in this run"),
    (figures.reduce_ladder, "no reduce/* benchmark in this run"),
])
def test_a_figure_without_its_family_is_skipped(draw, reason):
    medians = frame.medians_frame([results.load(SYNTHETIC_CA)])
    with pytest.raises(Skip) as caught:
        draw(medians)
    assert str(caught.value).startswith(reason) and "\n" not in str(caught.value)


def test_a_family_that_only_errored_is_skipped():
    medians = frame.medians_frame([results.load(SYNTHETIC_DEFAULT)])  # its one stride skipped
    with pytest.raises(Skip, match="every stride/\\* benchmark in this run errored"):
        figures.stride(medians)


def test_empty_medians_skip_every_figure():
    empty = pd.DataFrame(columns=list(frame.MEDIAN_COLUMNS))
    for draw in (figures.stride, figures.offset, figures.flavors, figures.aos_soa,
                 figures.word_ilp, figures.working_set, figures.transpose_ladder,
                 figures.reduce_ladder):
        with pytest.raises(Skip):
            draw(empty)


def test_non_numeric_sweep_values_are_skipped_not_a_traceback(families):
    sizes = families["ws"].astype("str").where(families["family"] != "cache", "64K")
    with pytest.raises(Skip, match="no cache/\\* benchmark with a numeric ws: parameter"):
        figures.working_set(families.assign(ws=sizes))


def test_offset_ticks_never_crowd():
    from gmbtools.present.figures import _spaced

    # f32 offsets in bytes: 124 sits too close to 128 and 4 to 0; the ends always stay.
    assert _spaced([0, 4, 8, 16, 32, 64, 124, 128], 6.4) == [0, 8, 16, 32, 64, 128]
    assert _spaced([0, 16, 32, 64, 112, 128], 6.4) == [0, 16, 32, 64, 112, 128]
    assert _spaced([0, 1], 5) == [0, 1]
    assert _spaced([7], 0) == [7]


def test_inflight_points_model_and_loaded_latency(families):
    drawn = figures.inflight(families)
    data = drawn.data.set_index("name")
    assert set(data["flavor"]) == {"default"}  # the right panel shows one flavor
    point = data.loc["inflight/read/w:4/ilp:1/block:256/bpsm:8/grid:persistent"]
    assert point["bytes_in_flight_per_sm"] == 8192
    # the synthetic run is Little's law at a flat 380 ns per round; the model's latency rises
    # with the load (350 ns idle + 30 ns of one warp's own round, more at 2.5 TB/s): below it
    assert 0.85 * point["gbs"] < point["inflight_fit_gbs"] < point["gbs"]
    left = drawn.figure.axes[0]
    curves = [line.get_label() for line in left.get_lines() if "streams" in line.get_label()]
    assert curves == [f"{flavor}, streams {load}" for flavor in ("default", "ca", "cg")
                      for load in ("read", "copy")]


def test_inflight_draws_bulk_copies_beside_the_loads(families):
    # A bulk read (bulk/, TMA) at 16 KiB in flight per SM: a red square on the right panel,
    # among the figure's data; another flavor's or an errored one is not drawn.
    base = families.loc[(families["name"] == "inflight/read/w:4/ilp:1/block:256/bpsm:8/"
                         "grid:persistent") & (families["flavor"] == "default")]
    bulk = base.assign(name="bulk/read/bytes:4096/stages:4/bpsm:1", family="bulk",
                       variant="read", bytes_in_flight_per_sm=16384.0, gbs=1234.5,
                       inflight_fit_gbs=np.nan)
    errored = bulk.assign(name="bulk/copy/bytes:4096/stages:4/bpsm:1", variant="copy",
                          gbs=np.nan, error="wrong")
    drawn = figures.inflight(pd.concat([families, bulk, errored], ignore_index=True))
    data = drawn.data.set_index("name")
    assert data.loc["bulk/read/bytes:4096/stages:4/bpsm:1", "gbs"] == 1234.5
    assert "bulk/copy/bytes:4096/stages:4/bpsm:1" not in data.index
    right = drawn.figure.axes[1]
    labels = [line.get_label() for line in right.get_lines()]
    assert "bulk read (TMA), bytes × stages × bpsm" in labels
    assert not any(label.startswith("bulk copy") for label in labels)


def test_latency_per_level_and_across_pages(families):
    drawn = figures.latency(families)
    data = drawn.data
    chase = data.loc[data["name"].str.startswith("latency/chase/")].set_index(["name", "flavor"])
    # the cg build has no L1 hit: its 16-KiB chase takes the L2's time
    assert chase.loc[("latency/chase/ws:16384/lanes:1", "default"), "latency_ns"] == 16.0
    assert chase.loc[("latency/chase/ws:16384/lanes:1", "cg"), "latency_ns"] == 142.0
    assert set(chase.index.get_level_values("flavor")) == {"default", "ca", "cg"}
    tlb = data.loc[data["name"].str.startswith("tlb/")]
    assert set(tlb["flavor"]) == {"default"}  # the right panel shows one flavor
    assert list(tlb.sort_values(["step", "span"])["latency_ns"]) == [142.0, 142.0, 142.0,
                                                                        146.0, 146.0]
    left, right = drawn.figure.axes[:2]
    assert len([l for l in left.get_lines() if "lane" in l.get_label()]) == 6
    assert [l.get_label() for l in right.get_lines()] == ["one line per 4 KiB",
                                                          "one line per 2 MiB"]


# --- optimization ladders --------------------------------------------------------------------

def rungs_of(family):
    """{name: rung counter} of the default file's benchmarks of a ladder (none for cub)."""
    path = SYNTHETIC_FAMILIES["default"]
    return {strip_suffixes(e["name"]): e.get("rung") for e in json.loads(path.read_text())[
        "benchmarks"] if e["name"].startswith(f"{family}/")}


def panel(drawn, title):
    return next(ax for ax in drawn.figure.axes if ax.get_title().startswith(title))


def bar_texts(ax):
    return {t.get_text(): t for t in ax.texts}


def test_transpose_ladder_climbs_in_rung_order_towards_the_copy(families):
    drawn = figures.transpose_ladder(families)
    assert_values_are_the_input(drawn.data, "transpose")
    values, rungs = file_values("transpose"), rungs_of("transpose")
    for (flavor, group), rows in drawn.data.groupby(["flavor", "group"], sort=False):
        assert list(rows["rung"]) == sorted(rungs[name] for name in rows["name"])
        type_, n = group.split(" · n:")
        copy = values[flavor, f"transpose/{type_}/copy/n:{n}"]
        assert list(rows["pct_roof"]) == pytest.approx(
            [values[flavor, name] / copy * 100 for name in rows["name"]])
    assert [ax.get_title() for ax in drawn.figure.axes] == [
        "f32 · n:16384 (1 GiB matrix)", "f64 · n:11584 (1024 MiB matrix)"]
    f32 = panel(drawn, "f32")
    ops = [name.split("/")[2] for name in sorted(rungs, key=rungs.get) if "/f32/" in name]
    assert [t.get_text() for t in f32.get_xticklabels()] == [
        f"{k} {op}" for k, op in enumerate(ops)]
    assert len(f32.patches) == 3 * len(ops)  # a bar per rung and flavor
    copy = values["default", "transpose/f32/copy/n:16384"]
    tile = values["default", "transpose/f32/tile/n:16384"]
    texts = bar_texts(f32)
    assert f"{copy:.0f} · 100%" in texts and f"{tile:.0f} · {tile / copy * 100:.0f}%" in texts
    legend = [t.get_text() for t in f32.get_legend().texts]
    assert legend[0] == f"roof, copy: transpose/f32/copy/n:16384 {copy:.0f} GB/s (default)"
    assert "ref/memcpy_d2d 4278 GB/s (default)" in legend
    assert "theoretical peak 4814 GB/s (gpu_peak_gbs)" in legend


def test_ladder_marks_a_flavor_more_than_5_percent_off_default(families):
    drawn = figures.transpose_ladder(families)
    data = drawn.data.set_index(["flavor", "name"])
    values = file_values("transpose")
    name = "transpose/f32/naive_cols/n:16384"
    cg, default = values["cg", name], values["default", name]
    assert cg / default < 0.95  # the fixture's cg loses a quarter of it
    assert data.loc[("cg", name), "differs"]
    assert data.loc[("cg", name), "ratio_to_first"] == pytest.approx(cg / default)
    # every other cg rung is the flavor-wide 0.98 of default: not marked
    assert data.loc["cg", "differs"].sum() == 2  # naive_cols of f32 and f64
    pct = data.loc[("cg", name), "pct_roof"]
    text = bar_texts(panel(drawn, "f32"))[f"{cg:.0f} · {pct:.0f}% · {cg / default:.2f}×"]
    assert text.get_fontweight() == "bold"
    assert not data.loc["default", "differs"].any()


def test_reduce_ladder_against_the_best_read_and_cub(families):
    drawn = figures.reduce_ladder(families)
    assert_values_are_the_input(drawn.data, "reduce")
    values, rungs = file_values("read", "reduce"), rungs_of("reduce")
    data = drawn.data
    for flavor, rows in data.groupby("flavor"):
        best = max(v for (f, name), v in values.items()
                   if f == flavor and name.startswith("read/") and v is not None)
        valid = rows.loc[rows["gbs"].notna()]
        assert list(valid["pct_roof"]) == pytest.approx(list(valid["gbs"] / best * 100))
        assert set(rows["roof_name"]) == {"read/f32x4/ilp:4/grid:full"}
    # the reference is a line, never a bar; a rung that errored keeps its place (its rung
    # comes from the other flavors) and shows "error"
    errored = data.set_index(["flavor", "name"]).loc[("cg", "reduce/i32/vector")]
    assert errored["rung"] == rungs["reduce/i32/vector"] and math.isnan(errored["gbs"])
    i32 = panel(drawn, "i32")
    assert len(i32.patches) == 3 * 10 - 1 and "error" in bar_texts(i32)
    assert "9 one_pass" == i32.get_xticklabels()[-1].get_text()
    cub = values["default", "reduce/i32/cub"]
    legend = [t.get_text() for t in i32.get_legend().texts]
    assert f"reduce/i32/cub {cub:.0f} GB/s (default)" in legend
    assert not any("memcpy" in label for label in legend)


def test_a_ladder_without_its_roof_still_draws(families):
    no_read = families.loc[families["family"] != "read"]
    drawn = figures.reduce_ladder(no_read)
    assert drawn.data["pct_roof"].isna().all()
    texts = bar_texts(panel(drawn, "f32"))
    assert f"{file_values('reduce')['default', 'reduce/f32/shuffle']:.0f}" in texts


def test_a_ladder_of_only_its_reference_is_skipped(families):
    only_cub = families.loc[(families["family"] != "reduce") | (families["op"] == "cub")]
    with pytest.raises(Skip, match="no rung of the reduce ladder in this run, only its reference"):
        figures.reduce_ladder(only_cub)


def test_every_list_of_the_figures_is_the_plotters():
    """`gmb plot` draws figure_names.FIGURES; `gmb plot --help` names each of them and
    docs/usage.md's table has a row for each, in the same order."""
    assert tuple(spec.stem for spec in plot.FIGURES) == figure_names.STEMS
    shown = subprocess.run([sys.executable, str(GMB), "plot", "--help"], capture_output=True,
                           text=True, check=True).stdout
    listed = re.search(r"has data for \(([^)]*)\)", " ".join(shown.split())).group(1)
    assert tuple(listed.split(", ")) == figure_names.STEMS
    usage = (SCRIPTS.parent / "docs" / "usage.md").read_text().split("### Figures")[1]
    table = usage.split("| figure | shows | from |")[1].split("\n\n")[0]
    rows = re.findall(r"^\| `([a-z_]+)` \|", table, re.M)
    assert tuple(rows) == figure_names.STEMS, "docs/usage.md's figure table"


def test_peer_stride_draws_both_sides_with_the_model_and_names_the_flavor_it_draws():
    folder = next((SCRIPTS.parent / "results" / "nvidia-h200" / "20261127-101738").glob("gpu0*"),
                  None)
    if folder is None:
        pytest.skip("no results/ here")
    medians = frame.readable_medians(folder, results.load_folder(folder))
    drawn = figures.peer_stride(medians)
    title = drawn.figure._suptitle.get_text()
    assert "flavors: default ·" in title  # three flavors in the run, one drawn
    data = drawn.data
    assert set(data["flavor"]) == {"default"}
    peer = data.loc[data["side"].str.startswith("the partner")]
    assert list(peer["s"]) == [1, 2, 4, 8, 16, 32]
    model = line(drawn.figure, "model the partner's, over the link")
    assert list(model.get_ydata()) == list(peer["model_gbs"])
    assert (data["model_gbs"] > 0).all()
