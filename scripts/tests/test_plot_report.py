"""`gmb plot`, `gmb report` and `gmb load` end to end: files written, report.md's content, and
every error a user can hit (one line; a non-zero exit only when nothing could be produced)."""

import json
import os
import shutil
import sys

import pandas as pd
import pytest
from PIL import Image
from conftest import H200_RUN, SYNTHETIC_CA, SYNTHETIC_DEFAULT, SYNTHETIC_FAMILIES, T, write_gb

import gmbtools
from gmbtools.analysis import frame, ladders
from gmbtools.present import plot, plotkit, report
from gmbtools.data import results
from gmbtools.commands import flavor_runs
from gmbtools.commands.cli import main


@pytest.fixture(scope="module")
def reported(tmp_path_factory):
    """`gmb report` on a folder with two of the synthetic family files (the figures of three
    flavors are drawn in test_figures.py; saving two keeps this test quick)."""
    folder = tmp_path_factory.mktemp("run")
    for flavor in ("default", "ca"):
        shutil.copy(SYNTHETIC_FAMILIES[flavor], folder / f"{flavor}.json")
    path, plotted = report.write_report(folder)
    return folder, path.read_text(), plotted


def one_line_error(capsys, fragment):
    err = capsys.readouterr().err.splitlines()
    assert len(err) == 1 and err[0].startswith("gmb: error: ") and fragment in err[0], err
    return err[0]


def test_every_figure_is_written_as_a_png_small_enough_for_github(reported):
    folder, _, plotted = reported
    assert plotted.skipped == {}
    assert list(plotted.written) == [spec.stem for spec in plot.FIGURES]
    for spec in plot.FIGURES:
        png = folder / "figures" / f"{spec.stem}.png"
        assert plotted.written[spec.stem] == [png]
        assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
        assert 10_000 < png.stat().st_size < 300_000, spec.stem
        with Image.open(png) as image:
            assert image.width <= plotkit.MAX_PNG_PIXELS and image.mode == "P"
    assert sorted(p.suffix for p in (folder / "figures").iterdir()) == [".png"] * len(plot.FIGURES)


def test_plot_and_report_write_svg_on_request(tmp_path, capsys):
    shutil.copy(H200_RUN / "default.json", tmp_path)  # one figure (word_ilp) applies
    assert main(["report", str(tmp_path), "--svg"]) == 0
    figures = tmp_path / "figures"
    assert f"gmb: wrote {figures / 'word_ilp.png'} (+ .svg)" in capsys.readouterr().out
    assert sorted(p.name for p in figures.iterdir()) == ["word_ilp.png", "word_ilp.svg"]
    svg = (figures / "word_ilp.svg").read_text()
    assert svg[:200].lstrip().startswith("<?xml") and "</svg>" in svg
    assert "([SVG](figures/word_ilp.svg))" in (tmp_path / "report.md").read_text()
    assert main(["plot", str(tmp_path), "--out", str(tmp_path / "again"), "--svg"]) == 0
    assert sorted(p.name for p in (tmp_path / "again").iterdir()) == [
        "word_ilp.png", "word_ilp.svg"]


def test_figures_are_drawn_without_fork_in_this_process(tmp_path, monkeypatch):
    """A fork() of a process that runs threads (a node run, pytest) can deadlock the child:
    the figure workers start from a forkserver (or spawn), never from a fork of the caller."""
    def no_fork():
        raise AssertionError("os.fork() called by the plotting process")

    monkeypatch.setattr(os, "fork", no_fork)
    shutil.copy(H200_RUN / "default.json", tmp_path)
    plotted = plot.plot_folder(tmp_path)
    assert list(plotted.written) == ["word_ilp"]


def test_plotted_data_is_the_medians_of_the_input(reported):
    _, _, plotted = reported
    medians = plotted.medians.set_index(["flavor", "name"])
    for stem, data in plotted.data.items():
        assert not data.empty, stem
        value = "gbs" if "gbs" in data.columns else "latency_ns"  # the latency figure's
        for row in data.itertuples():
            got, want = getattr(row, value), medians.loc[(row.flavor, row.name), value]
            assert got == want or (pd.isna(got) and pd.isna(want)), (stem, row.name)


def test_report_embeds_every_figure_with_a_sentence(reported):
    _, text, plotted = reported
    assert text.startswith("# gmembench report: NVIDIA H200\n")
    for spec in plot.FIGURES:
        assert f"### {spec.heading}\n\n![{spec.heading}](figures/{spec.stem}.png)\n" in text
        assert f"{plotted.captions[spec.stem]}\n" in text
    assert "[SVG]" not in text
    assert "- flavors: default, ca (`default.json`, `ca.json`)" in text
    assert "- values: one run per benchmark; GB/s = 10⁹ B/s" in text


def test_report_sets_inflight_cases_beside_the_model(reported):
    _, text, _ = reported
    section = text[text.index("## Bytes in flight: measured vs Little's law"):
                   text.index("## Errored or skipped benchmarks")]
    for flavor in ("default", "ca"):
        assert f"### Flavor `{flavor}`" in section
    # the synthetic family: 4 persistent and 4 full grids per word size, beside the one-warp
    # calibration cases (in the table, out of the counts)
    assert "- grid:persistent: 8 of 8 within 15 %" in section
    assert "| `inflight/read/w:4/ilp:1/block:32/bpsm:1/grid:persistent` | 128 | 44.5 | 44.5 | 1.00 |" in section
    assert "inflight/blocks" not in section  # no bandwidth of its own to predict


def ladder_table(text, title, flavor):
    """The cells of each row of a ladder's table of one flavor in report.md."""
    section = text[text.index(f"### {title}\n"):]
    section = section[section.index(f"#### Flavor `{flavor}`\n"):]
    table = section.split("\n\n")[2].splitlines()
    assert table[1].startswith("|---")
    return [[cell.strip() for cell in line.strip("|").split("|")] for line in table[2:]]


def fixture_entries(flavor):
    """{name: entry} of a synthetic families file, its names as the report writes them."""
    path = SYNTHETIC_FAMILIES[flavor]
    return {e["name"].removesuffix("/min_time:0.050/manual_time"): e
            for e in json.loads(path.read_text())["benchmarks"]}


def in_rung_order(entries, family):
    """The family's names by ladder (type and N, first appearance), rung, the reference last."""
    names = [n for n in entries if n.startswith(f"{family}/")]
    ladders = list(dict.fromkeys(n.split("/")[1] for n in names))
    return [n for ladder in ladders for n in sorted(
        (n for n in names if n.split("/")[1] == ladder),
        key=lambda n: entries[n].get("rung", float("inf")))]


def test_report_transpose_ladder_against_the_copy(reported):
    _, text, _ = reported
    assert "## Optimization ladders" in text
    for flavor in ("default", "ca"):
        entries = fixture_entries(flavor)
        rows = ladder_table(text, "Matrix transpose", flavor)
        assert [cells[2].strip("`") for cells in rows] == in_rung_order(entries, "transpose")
        for group, rung, name, gbs, pct_copy, pct_peak, ld, st in rows:
            e = entries[name.strip("`")]
            type_, _, n = name.strip("`").split("/")[1:]
            copy = entries[f"transpose/{type_}/copy/{n}"]["bytes_per_second"]
            assert (group, rung) == (f"{type_} · {n}", f"{e['rung']:.0f}")
            assert gbs == f"{e['bytes_per_second'] / 1e9:.1f}"
            assert pct_copy == f"{e['bytes_per_second'] / copy * 100:.1f}"
            assert pct_peak == f"{e['pct_peak']:.1f}"
            assert (ld, st) == (f"{e['model_ld_sectors_per_req']:g}",
                                f"{e['model_st_sectors_per_req']:g}")
    memcpy = fixture_entries("default")["ref/memcpy_d2d"]["bytes_per_second"] / 1e9
    assert f"`ref/memcpy_d2d`: {memcpy:.1f} GB/s." in text


def test_report_reduce_ladder_against_the_best_read_and_cub(reported):
    _, text, _ = reported
    for flavor in ("default", "ca"):
        entries = fixture_entries(flavor)
        reads = {n: e["bytes_per_second"] for n, e in entries.items() if n.startswith("read/")}
        best = max(reads, key=reads.get)
        assert (f"% of best read: of `{best}` ({reads[best] / 1e9:.1f} GB/s). × cub: of the"
                " same type's `reduce/<type>/cub` (its row `ref`).") in text
        rows = ladder_table(text, "Sum reduction", flavor)
        assert [cells[2].strip("`") for cells in rows] == in_rung_order(entries, "reduce")
        for type_, rung, name, gbs, pct_read, pct_peak, ld, to_cub in rows:  # no st column
            e = entries[name.strip("`")]
            cub = entries[f"reduce/{type_}/cub"]["bytes_per_second"]
            assert rung == ("ref" if name.endswith("/cub`") else f"{e['rung']:.0f}")
            assert pct_read == f"{e['bytes_per_second'] / reads[best] * 100:.1f}"
            assert to_cub == f"{e['bytes_per_second'] / cub:.2f}"
            assert ld == (f"{e['model_ld_sectors_per_req']:g}" if rung != "ref" else "")


def test_an_errored_rung_keeps_its_place_in_the_ladder_table():
    medians = frame.medians_frame([results.load(p) for p in SYNTHETIC_FAMILIES.values()])
    text = "\n".join(report._ladder_lines(medians, ladders.tables(medians)))
    rows = ladder_table(text, "Sum reduction", "cg")
    errored = next(cells for cells in rows if cells[2] == "`reduce/i32/vector`")
    rung = fixture_entries("default")["reduce/i32/vector"]["rung"]  # cg's lost its counters
    assert errored == ["i32", f"{rung:.0f}", "`reduce/i32/vector`", "error (see below)",
                       "", "", "", ""]


def test_report_has_headline_errors_and_context(reported):
    _, text, _ = reported
    for flavor in ("default", "ca"):
        assert f"### Flavor `{flavor}`" in text
    assert "| ref/memcpy_d2d | `ref/memcpy_d2d` | 4277.8 | 88.9 | n/a |" in text
    errors = text[text.index("## Errored or skipped benchmarks"):text.index("## Context")]
    assert "| default | `vector/w16/ilp:8` | verification failed: 5 of 125829120" in errors
    assert "| ca | `stride/f32/read/s:8` | verification failed: 1 of 503316480" in errors
    assert len([line for line in errors.splitlines() if line.startswith("| d")]) == 1
    assert "| gpu_l2_bytes | 62914560 | 62914560 |" in text


def test_plot_of_the_committed_h200_run(tmp_path, capsys):
    shutil.copy(H200_RUN / "default.json", tmp_path)  # one flavor, to keep the test quick
    assert main(["plot", str(tmp_path), "--out", str(tmp_path / "figs")]) == 0
    out = capsys.readouterr().out
    assert f"gmb: wrote {tmp_path / 'figs' / 'word_ilp.png'}\n" in out
    assert "gmb: skipped stride: no stride/* benchmark in this run" in out
    assert "gmb: skipped flavors: only one flavor (default) in this run" in out
    assert sorted(p.name for p in (tmp_path / "figs").iterdir()) == ["word_ilp.png"]


# --- errors ---------------------------------------------------------------------------------

@pytest.mark.parametrize("command", ["plot", "report"])
def test_missing_folder(command, capsys):
    assert main([command, "/nonexistent"]) == 1
    one_line_error(capsys, "/nonexistent: no such folder")


@pytest.mark.parametrize("command", ["plot", "report"])
def test_folder_without_results(command, tmp_path, capsys):
    assert main([command, str(tmp_path)]) == 1
    one_line_error(capsys, f"{tmp_path}: no flavor file in this folder (default.json, ca.json or "
                           "cg.json, plain or .gz)")


@pytest.mark.parametrize(("content", "fragment"), [
    ("", "default.json: file is empty"),
    (SYNTHETIC_DEFAULT.read_text()[:2000], "default.json: truncated or corrupt JSON"),
    (json.dumps({"results": [1, 2]}), "default.json: not Google Benchmark JSON output"),
])
def test_the_only_file_unreadable(tmp_path, capsys, content, fragment):
    (tmp_path / "default.json").write_text(content)
    assert main(["plot", str(tmp_path)]) == 1
    one_line_error(capsys, fragment)


def test_report_of_a_run_without_the_new_families_and_an_unreadable_file(tmp_path, capsys):
    shutil.copy(SYNTHETIC_DEFAULT, tmp_path / "default.json")
    (tmp_path / "cg.json").write_text("")
    assert main(["report", str(tmp_path)]) == 3  # done from default.json; cg.json gave nothing
    captured = capsys.readouterr()
    assert captured.err.strip() == f"gmb: warning: {tmp_path / 'cg.json'}: file is empty" \
                                   " (did the benchmark run start?)"
    out = captured.out
    assert "gmb: skipped stride: every stride/* benchmark in this run errored or was skipped" in out
    assert "gmb: skipped offset: no offset/* benchmark in this run" in out
    assert "gmb: skipped flavors: only one flavor (default) in this run" in out
    assert out.rstrip().splitlines()[-1] == str(tmp_path / "report.md")
    text = (tmp_path / "report.md").read_text()
    assert "**Not included:**" in text and "cg.json: file is empty" in text
    assert "**Not drawn:** no offset/\\* benchmark in this run." in text
    assert "| default | `copy/f64/ilp:2` | verification failed" in text
    assert "| best read | `read/f32x4` | 3020.0 | 90.1 | 0.8 % |" in text  # summary's table
    assert "## Optimization ladders" not in text  # no ladder in this run: no section
    assert "**Not drawn:** no transpose/\\* benchmark in this run." in text


def test_nothing_to_draw_fails_plot_but_not_report(tmp_path, capsys):
    write_gb(tmp_path / "default.json", [{"name": "misc/thing", "run_type": "iteration",
                                          "bytes_per_second": 1 * T}],
             {"gmb_flavor": "default", "gpu_name": "X"})
    assert main(["plot", str(tmp_path)]) == 1
    one_line_error(capsys, "no figure could be drawn from this run")
    assert main(["report", str(tmp_path)]) == 0  # the report still has the numbers
    assert "**Not drawn:**" in (tmp_path / "report.md").read_text()


def test_load_describes_or_writes_csv(tmp_path, capsys):
    assert main(["load", str(SYNTHETIC_DEFAULT), str(SYNTHETIC_CA)]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0].endswith("from 2 file(s)") and "flavors: default, ca" in out
    out_csv = tmp_path / "all.csv"
    assert main(["load", str(SYNTHETIC_DEFAULT), "--csv", str(out_csv)]) == 0
    table = pd.read_csv(out_csv)
    expected = frame.load_frame([SYNTHETIC_DEFAULT])
    assert list(table.columns) == list(expected.columns) and len(table) == len(expected)
    assert table["gbs"].fillna(-1).tolist() == pytest.approx(expected["gbs"].fillna(-1).tolist())


def test_load_errors(tmp_path, capsys):
    assert main(["load", str(tmp_path / "none.json")]) == 1
    one_line_error(capsys, "none.json: no such file or folder")
    assert main(["load", str(tmp_path / "none.json"), str(SYNTHETIC_CA)]) == 3
    assert "gmb: warning: " in capsys.readouterr().err
    assert main(["load"]) == 2
    one_line_error(capsys, "required: FILE")


def test_without_pandas_or_matplotlib(monkeypatch, tmp_path, capsys):
    for name in ("pandas", "gmbtools.present.plot", "gmbtools.present.report",
                 "gmbtools.analysis.frame"):
        monkeypatch.setitem(sys.modules, name, None)
    monkeypatch.delattr(gmbtools.present, "report")
    assert main(["plot", str(H200_RUN)]) == 1
    one_line_error(capsys, "this command needs pandas and matplotlib")
    # gmb run still succeeds: one line, no figures.
    flavor_runs.figures_and_report(tmp_path)
    out = capsys.readouterr().out
    assert out.startswith("gmb: no figures or report.md: ") and len(out.splitlines()) == 1
