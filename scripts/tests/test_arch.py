"""What a run says of its GPU's architecture (gmbtools/arch.py): the "unverified" line at the
top of summaries, reports and figure titles where the suite was not measured on the GPU, and
the DRAM granule each run measures from the stride family."""

import json
import shutil

from conftest import SYNTHETIC_DEFAULT, SYNTHETIC_FAMILIES, aggregate, write_gb

from gmbtools.analysis import arch, frame
from gmbtools.present import figures, report
from gmbtools.data import results
from gmbtools.present.summary import write_summary

BLACKWELL = ("Blackwell, sm_100 not measured by gmembench: L1 size and carve-out from the Blackwell "
             "Tuning Guide; the model's DRAM granule is Hopper's (64 B)")


def granule_run(tmp_path, s8_gbs, s16_gbs, assumed="64", s32_gbs=None):
    """A file with the stride benchmarks the granule is measured from."""
    context = {"date": "2026-01-01T00:00:00+00:00", "model_dram_granule_bytes": assumed}
    strides = [(arch.GRANULE_PAIR[0], s8_gbs), (arch.GRANULE_PAIR[1], s16_gbs),
               (arch.WIDE_STRIDE, s32_gbs)]
    path = write_gb(tmp_path / "default.json", [
        aggregate(name, "median", gbs * 1e9) for name, gbs in strides if gbs], context)
    loaded = results.load(path)
    return loaded.context, results.median_by_name(loaded.records)


def test_granule_is_the_bandwidth_ratio_of_32_and_64_byte_strides(tmp_path):
    # An H100 run's medians (results/nvidia-h100-80gb-hbm3/20261125-152107).
    context, medians = granule_run(tmp_path, 683.4, 356.5)
    assert arch.measured_granule(medians) == (64, 683.4 / 356.5)
    assert arch.granule_line(context, medians)[0] == (
        "DRAM read granule measured by this run: 64 B (`stride/f32/read/s:8/ilp:4` over "
        "`stride/f32/read/s:16/ilp:4`: 1.92x); the traffic model assumes 64 B.")


def test_128_byte_granule_from_the_wider_stride(tmp_path):
    # The H100 run's s:32/ilp:4 (322.9 GB/s): 356.5 / 322.9 = 1.10, so 64 B, not 128.
    assert arch.measured_granule(granule_run(tmp_path, 683.4, 356.5, s32_gbs=322.9)[1])[0] == 64
    # 128 B apart, a 128-B granule moves 128 B per element: half of s:16's bandwidth.
    assert arch.measured_granule(granule_run(tmp_path, 683.4, 356.5, s32_gbs=178.0)[1])[0] == 128


def test_a_granule_the_model_does_not_assume_is_called_out(tmp_path):
    context, medians = granule_run(tmp_path, 600.0, 570.0)  # sparse reads cost no more: 32 B
    assert arch.measured_granule(medians)[0] == 32
    line = arch.granule_line(context, medians)[0]
    assert "measured by this run: 32 B" in line
    assert "**the traffic model assumes 64 B**" in line and "model_dram_bytes" in line


def test_no_granule_without_both_benchmarks(tmp_path):
    path = write_gb(tmp_path / "default.json",
                    [aggregate(arch.GRANULE_PAIR[0], "median", 1e11)])
    assert arch.granule_line({}, results.median_by_name(results.load(path).records)) == []


def test_unverified_line_only_where_the_architecture_was_not_measured():
    assert arch.facts_lines({"default": {"gpu_facts": "measured"}}) == []
    assert arch.facts_lines({"default": {}}) == []  # files from before the key
    lines = arch.facts_lines({"default": {"gpu_facts": BLACKWELL},
                              "ca": {"gpu_facts": BLACKWELL}})
    assert lines == [f"> **Unverified on this GPU:** {BLACKWELL} (see `docs/gpus.md`).", ""]


def test_summary_opens_with_the_unverified_line_and_prints_the_granule(tmp_path):
    doc = json.loads(SYNTHETIC_DEFAULT.read_text())
    doc["context"].update({"gpu_facts": BLACKWELL, "gmb_unsupported": "0"})
    (tmp_path / "default.json").write_text(json.dumps(doc))
    text = write_summary(tmp_path).path.read_text()
    unverified = f"> **Unverified on this GPU:** {BLACKWELL} (see `docs/gpus.md`)."
    assert text.splitlines()[2] == unverified
    assert "| gpu_facts | " + BLACKWELL + " |" in text

    skipped = "4: cp.async (LDGSTS) needs sm_80, this GPU is sm_75"
    doc["context"].update({"gpu_facts": "measured", "gmb_unsupported": skipped})
    (tmp_path / "default.json").write_text(json.dumps(doc))
    text = write_summary(tmp_path).path.read_text()
    assert "Unverified" not in text
    assert ("- not run, this GPU lacks what they need: 4: cp.async (LDGSTS) needs sm_80, this GPU"
            " is sm_75") in text


def test_figure_titles_say_when_the_architecture_was_not_measured(tmp_path):
    medians = frame.medians_frame([results.load(p) for p in SYNTHETIC_FAMILIES.values()])
    measured = figures.stride(medians.assign(gpu_facts="measured", gpu_cc=9.0))
    assert "not measured" not in measured.figure.get_suptitle()
    other = figures.stride(medians.assign(gpu_facts=BLACKWELL, gpu_cc=10.0))
    assert other.figure.get_suptitle().endswith(
        "compute capability 10.0: L1 size and model parameters not measured (docs/gpus.md)")


def test_a_reference_above_the_theoretical_peak_says_the_peak_is_wrong(tmp_path):
    context = {"date": "2026-01-01T00:00:00+00:00", "gpu_peak_gbs": "1000.00"}
    path = write_gb(tmp_path / "default.json", [aggregate("ref/memcpy_d2d", "median", 900e9),
                                                aggregate("ref/memset", "median", 1100e9)],
                    context)
    medians = results.median_by_name(results.load(path).records)
    assert arch.peak_lines(context, medians) == [
        "**The theoretical peak is wrong for this GPU:** `ref/memset` measured 1100.0 GB/s, above "
        "`gpu_peak_gbs` 1000.0 (2 x memory clock x bus width as the device reports them); every "
        "pct_peak of this run is too high."]
    assert arch.peak_lines({**context, "gpu_peak_gbs": "1200"}, medians) == []
    assert arch.peak_lines({}, medians) == []


def test_the_report_prints_the_granule_under_each_flavors_headlines(tmp_path):
    shutil.copy(SYNTHETIC_DEFAULT, tmp_path / "default.json")
    (tmp_path / "granule").mkdir()
    granule_run(tmp_path / "granule", 683.4, 356.5)
    doc = json.loads((tmp_path / "default.json").read_text())
    stride = json.loads((tmp_path / "granule" / "default.json").read_text())["benchmarks"]
    doc["benchmarks"] += stride
    (tmp_path / "default.json").write_text(json.dumps(doc))
    path, _ = report.write_report(tmp_path)
    text = path.read_text()
    assert text.count("DRAM read granule measured by this run: 64 B") == 1

