"""`gmb pattern` without a GPU: the explanation of fixtures/pattern/synthetic.json (one pattern
benchmark per class, the references, the chase, the built-ins; made-up numbers), the command
line it runs, and the CLI against fake binaries that print that file, fail with gmembench's
one-line error, or are missing; the build path against a fake checkout."""

import dataclasses
import errno
import gzip
import json
import os
import re
import sys
from datetime import datetime
from io import BytesIO, StringIO
from pathlib import Path

import pytest
from conftest import FIXTURES, assert_one_line_error, gmb
from PIL import Image

from gmbtools.commands import pattern, pattern_binary
from gmbtools.analysis import pattern_class, pattern_explain
from gmbtools.present import pattern_figure, pattern_text
from gmbtools.errors import GmbError

SYNTHETIC = FIXTURES / "pattern" / "synthetic.json"
NAMES = [n.removesuffix("/manual_time")
         for n in (FIXTURES / "docs" / "names.txt").read_text().splitlines() if n]
NOW = datetime(2026, 11, 24, 12, 0, 0)

# What the fixture holds (its README entry): the roof is ref/memset's 4566.9 GB/s (above
# ref/memcpy_d2d's median 4305.1), the chase 335.6 ns, 132 SMs.
ROOF, LATENCY, SMS = 4566.9, 335.6, 132


@pytest.fixture(scope="module")
def explained():
    where, explanations = pattern_text.explained_file(SYNTHETIC)
    return where, {(e.expression, e.op, e.word): e for e in explanations}


# --- names ------------------------------------------------------------------------------------

def test_the_expression_is_decoded_from_the_name():
    assert pattern_explain.decode_expression("(i%32)*32+i÷32") == "(i%32)*32+i/32"
    assert pattern_explain.decode_expression("i<n÷2?i*2¦i") == "i<n/2?i*2:i"
    assert pattern_explain.parse_name(
        "pattern/i<n÷2?i*2¦i/gather/s12/k:2/block:128/n:4096/manual_time") == (
        "i<n/2?i*2:i", "gather", "s12", {"k": "2", "block": "128", "n": "4096"})
    with pytest.raises(ValueError, match="not a pattern"):
        pattern_explain.parse_name("read/f32/ilp:1/grid:full")


def test_a_name_of_another_shape_is_one_error(tmp_path):
    doc = json.loads(SYNTHETIC.read_text(encoding="utf-8"))
    doc["benchmarks"][0]["run_name"] = "pattern/i/read/k:1/manual_time"
    path = tmp_path / "odd.json"
    path.write_text(json.dumps(doc), encoding="utf-8")
    with pytest.raises(GmbError, match="odd.json: 'pattern/i/read/k:1' is not a pattern/"):
        pattern_text.explained_file(path)


def test_threads_come_from_the_counter(explained):
    # The fixture's names carry no nthreads: the counter gives it.
    _, by_key = explained
    strided = by_key[("i*8", "gather", "f32")]
    assert strided.n == 536870912 and strided.threads == 67108864
    assert pattern_text.shape(strided) == (
        "(gather, f32, k 1, block 256, n 536870912, threads 67108864)")
    assert pattern_text.shape(by_key[("i", "read", "f32")]) == "(read, f32, k 1, block 256)"


# --- classes, built-ins, suggestions -------------------------------------------------------------

@pytest.mark.parametrize(("key", "kind", "like", "fix"), [
    (("i", "read", "f32"), "coalesced", "read/f32/ilp:1/grid:full", "wider"),
    # a pure read has no mapped twin: offset/ and stride/ also write what they read
    (("(i+1)%n", "read", "f32"), "misaligned", None, "align"),
    (("n-1-i", "write", "f32"), "reversed", "write/f32/ilp:1/grid:full", None),
    (("i*8", "gather", "f32"), "strided", "stride/f32/read/s:8", "aos"),
    # lanes 128 B apart, but the fixture's model efficiency is 1: nearby warps use each line
    (("(i%32)*32+i/32", "read", "f32"), "transposed", None, "transpose"),
    (("i/32", "gather", "f32"), "broadcast", "warp/broadcast", None),
    (("i^1", "gather", "f32"), "permuted", "warp/permute_segment", None),
    (("(i*i)%n", "scatter", "f32"), "scattered", "scatter/random", "sort"),
    (("i", "read", "s12"), "coalesced", None, None),
])
def test_every_class(explained, key, kind, like, fix):
    e = explained[1][key]
    assert (e.kind, e.like) == (kind, like)
    assert e.suggestion == (pattern_class.SUGGESTIONS[fix] if fix else None)
    if fix:
        assert f"try: {e.suggestion}" in e.lines


def test_the_built_in_beside_it(explained):
    _, by_key = explained
    strided = by_key[("i*8", "gather", "f32")]
    assert strided.like_in_run and strided.like_gbs == pytest.approx(972.2)
    assert strided.like_ratio == pytest.approx(540.0 / 972.2)
    assert "behaves like stride/f32/read/s:8: 972 GB/s in this run; this pattern measures " \
           "0.56× that" in strided.lines
    reversed_write = by_key[("n-1-i", "write", "f32")]
    assert not reversed_write.like_in_run and reversed_write.like_gbs is None
    assert "not in this run" in reversed_write.lines[3]
    assert "no built-in benchmark" in by_key[("i", "read", "s12")].lines[3]


def test_classify_by_counters_alone():
    # The lane step varies: no more sectors than coalesced is a permutation, more is scattered.
    varies = {"pattern_distinct_per_req": 32.0}
    assert pattern_class.classify(varies, "gather", "f64", 8, 8.0)[:2] == (
        "permuted", "warp/permute_segment")
    assert pattern_class.classify(varies, "gather", "f64", 8, 9.0)[:2] == (
        "scattered", "gather/random")
    assert pattern_class.classify(varies, "read", "f64", 8, 9.0)[:2] == ("scattered", None)
    # Misaligned and strided built-ins exist for f32 only.
    misaligned = {"pattern_lane_step": 1.0, "pattern_aligned_fraction": 0.5}
    kind, like, sentence = pattern_class.classify(misaligned, "read", "f64", 8, 9.0)
    assert (kind, like) == ("misaligned", None) and "(9 instead of 8)" in sentence
    assert pattern_class.classify({"pattern_lane_step": -4.0}, "gather", "f32", 4, 16.0)[:2] \
        == ("strided", "stride/f32/read/s:4")
    # The same shape written or copied: the family's write and both-sides variants.
    assert pattern_class.classify({"pattern_lane_step": 4.0}, "scatter", "f32", 4, 16.0)[1] \
        == "stride/f32/write/s:4"
    assert pattern_class.classify({"pattern_lane_step": 4.0}, "copy", "f32", 4, 16.0)[1] \
        == "stride/f32/both/s:4"
    assert pattern_class.classify({"pattern_lane_step": 5.0}, "read", "f32", 4, 20.0)[:2] == (
        "strided", None)  # no s:5 among the built-ins
    # (i*7919)%n: a constant step between lanes but for the wrap, as the binary measured it.
    assert pattern_class.classify({"pattern_lane_step": 7919.0}, "read", "f32", 4, 32.0)[:2] \
        == ("strided", None)
    assert pattern_class.classify({"pattern_lane_step": 1.0}, "copy", "f32x4", 16, 16.0)[:2] \
        == ("coalesced", "copy/f32x4/ilp:1/grid:full")
    # as many words per thread as the pattern's k, where the built-ins have that many
    assert pattern_class.classify({"pattern_lane_step": 1.0}, "scatter", "f32", 4, 4.0, 4)[:2] \
        == ("coalesced", "copy/f32/ilp:4/grid:full")
    assert pattern_class.classify({"pattern_lane_step": 1.0}, "read", "f32", 4, 4.0, 3)[:2] \
        == ("coalesced", None)  # no read of three words per thread among the built-ins
    # 128 B apart yet every line used by nearby warps: a transpose, like warp/permute_across
    across = {"pattern_lane_step": 32.0, "model_efficiency": 1.0}
    assert pattern_class.classify(across, "gather", "f32", 4, 32.0)[:2] == (
        "transposed", "warp/permute_across")
    assert pattern_class.classify({"pattern_lane_step": 32.0, "model_efficiency": 0.118},
                                    "gather", "f32", 4, 32.0)[:2] == (
        "strided", "stride/f32/read/s:32")
    assert pattern_class.coalesced_sectors(4) == 4 and pattern_class.coalesced_sectors(16) \
        == 16


def test_strided_suggestions_by_distance():
    aos, transpose = pattern_class.SUGGESTIONS["aos"], pattern_class.SUGGESTIONS["transpose"]
    assert pattern_class.suggestion("strided", 16.0, "f32", 4, 1) == aos
    assert pattern_class.suggestion("strided", 32.0, "f32", 4, 1) == transpose  # 128 B apart
    assert pattern_class.suggestion("strided", 16.0, "f64", 8, 1) == transpose
    assert pattern_class.suggestion("strided", 2.0, "f64", 8, 1) is None
    assert pattern_class.suggestion("coalesced", 1.0, "f32", 4, 4) is None  # k > 1 already


# --- predictions ----------------------------------------------------------------------------------

def test_references_and_medians(explained):
    where, by_key = explained
    assert where.roof_gbs == pytest.approx(ROOF) and where.roof_name == "ref/memset"
    assert where.memcpy_gbs == pytest.approx(4305.1)  # the median aggregate of three
    assert (where.latency_ns, where.sms, where.peak_gbs) == (LATENCY, SMS, 4814.30)
    assert by_key[("i", "read", "f32")].gbs == pytest.approx(1682.0)  # median of 1675 1682 1690


def test_prediction_arithmetic(explained):
    _, by_key = explained
    coalesced = by_key[("i", "read", "f32")]  # latency-bound
    assert coalesced.littles_gbs == pytest.approx(SMS * 8192 / LATENCY)
    assert coalesced.bandwidth_gbs == pytest.approx(ROOF)
    assert (coalesced.predicted_gbs, coalesced.bound) == (coalesced.littles_gbs, "latency")
    strided = by_key[("i*8", "gather", "f32")]  # bandwidth-bound
    assert (strided.predicted_gbs, strided.bound) == (pytest.approx(ROOF * 0.125), "bandwidth")
    # A transpose wastes no sector in the end (the model's efficiency 1): latency-bound too.
    transpose = by_key[("(i%32)*32+i/32", "read", "f32")]
    assert (transpose.predicted_gbs, transpose.bound) == (coalesced.predicted_gbs, "latency")
    gather = by_key[("i^1", "gather", "f32")]  # each byte read is also written: twice the bytes
    assert gather.littles_gbs == pytest.approx(2 * SMS * 8192 / LATENCY)
    broadcast = by_key[("i/32", "gather", "f32")]  # efficiency 1.6 counts as 1
    assert broadcast.predicted_gbs == pytest.approx(ROOF)
    write = by_key[("n-1-i", "write", "f32")]  # nothing in flight to wait for
    assert write.littles_gbs is None and write.predicted_gbs == pytest.approx(ROOF)
    assert "a write waits for no load to return" in write.lines[1]
    assert coalesced.lines[0] == ("measured 1682 GB/s = 34.9 % of the theoretical peak; "
                                  "predicted 3222 GB/s, measured / predicted 0.522 (model: 4 "
                                  "sectors per request, DRAM efficiency 1)")
    assert broadcast.lines[0].endswith("(model: 1 sector per request, DRAM efficiency 1.6)")


def test_without_the_chase_the_bandwidth_bound_alone(tmp_path):
    doc = json.loads(SYNTHETIC.read_text(encoding="utf-8"))
    doc["benchmarks"] = [b for b in doc["benchmarks"]
                         if not b["run_name"].startswith(("latency/", "ref/"))]
    path = tmp_path / "no-chase.json"
    path.write_text(json.dumps(doc), encoding="utf-8")
    where, explanations = pattern_text.explained_file(path)
    assert where.latency_ns is None and where.roof_gbs is None
    coalesced = explanations[0]
    assert coalesced.littles_gbs is None and coalesced.bound == "bandwidth"
    assert coalesced.predicted_gbs == pytest.approx(4814.30)  # the theoretical peak instead
    assert "no DRAM latency in this run" in coalesced.lines[1]
    assert "the theoretical peak: no ref/ benchmark in this run" in coalesced.lines[1]


def test_above_the_peak_says_caches_served_it(tmp_path):
    # `i` with --k 4 reads each element four times: on an H100 it measured 200 % of the peak.
    doc = json.loads(SYNTHETIC.read_text(encoding="utf-8"))
    [entry] = [b for b in doc["benchmarks"] if b["run_name"].startswith("pattern/i/read/s12/")]
    entry.update(name="pattern/i/read/s12/k:4/block:256/manual_time",
                 run_name="pattern/i/read/s12/k:4/block:256/manual_time",
                 bytes_per_second=9.6e12, pct_peak=199.4)
    path = tmp_path / "above.json"
    path.write_text(json.dumps(doc), encoding="utf-8")
    _, explanations = pattern_text.explained_file(path)
    [above] = [e for e in explanations if e.k == 4]
    assert above.lines[1] == ("above the theoretical peak: L1/L2 served part of it (elements "
                              "read more than once?); with --k 4, does the index use k? without "
                              "it every slot reads the same element")
    assert not any("above the theoretical peak" in line
                   for e in explanations if e is not above for line in e.lines)


def test_loads_that_re_read_a_set_say_how_large_it_is(tmp_path):
    # The binary's replay of the whole launch: `(i%32)*32+i/32` at 16M threads reads a 2.1-MB
    # set 32 times over (2,105,088 B read from DRAM on an H100, by Nsight Compute).
    doc = json.loads(SYNTHETIC.read_text(encoding="utf-8"))
    for b in doc["benchmarks"]:
        if b["run_name"].startswith("pattern/(i%32)*32+i÷32/read/"):
            b.update(pattern_set_bytes=2101120.0, model_dram_bytes=2101120.0,
                     pattern_threads=16777216.0)
        elif b["run_name"].startswith("pattern/i/read/f32/"):
            b.update(pattern_set_bytes=2013265920.0)  # a stream: each granule once
    path = tmp_path / "set.json"
    path.write_text(json.dumps(doc), encoding="utf-8")
    _, explanations = pattern_text.explained_file(path)
    by_key = {(e.expression, e.op): e for e in explanations}
    said = [line for line in by_key[("(i%32)*32+i/32", "read")].lines if "a set of" in line]
    assert said == ["its loads read a set of 2.1 MB (31.9× over): DRAM brings what the L2 does "
                    "not keep between re-reads, 2.1 MB in all with the stores (model_dram_bytes: "
                    "the whole launch replayed through the L2)"]
    assert not any("a set of" in line for e in explanations if e.expression != "(i%32)*32+i/32"
                   for line in e.lines)


def test_compile_lines_and_errors(explained):
    _, by_key = explained
    assert by_key[("i", "read", "f32")].lines[-1] == "compiled by NVRTC and loaded in 0.41 s"
    assert by_key[("(i+1)%n", "read", "f32")].lines[-1] == (
        "kernel from the on-disk cache, loaded in 0.003 s")
    errored = by_key[("i%2", "copy", "f64")]
    assert errored.gbs is None and errored.kind is None
    assert errored.lines == [f"errored: {errored.error}"] and "wrong value" in errored.error


def test_text_and_markdown(explained):
    where, by_key = explained
    _, explanations = pattern_text.explained_file(SYNTHETIC)
    text = pattern_text.text(where, explanations)
    assert text.startswith("NVIDIA H200 (default flavor), roof 4567 GB/s (ref/memset), "
                           "theoretical peak 4814 GB/s, DRAM latency 336 ns\n")
    assert "\n(i%32)*32+i/32  (read, f32, k 1, block 256)\n  measured 921 GB/s" in text
    md = pattern_text.markdown(where, explanations, "scripts/gmb pattern i")
    assert "| `i^1` | gather | f32 | 2750 | 57.1 | 4567 | 0.602 | bandwidth | permuted | " \
           "`warp/permute_segment` | 2738 |" in md
    assert "## `(i%32)*32+i/32` (read, f32, k 1, block 256)" in md
    assert "```sh\nscripts/gmb pattern i\n```" in md
    assert "Unverified" not in text + md  # the fixture has no gpu_facts; an H200's: measured


def test_a_gpu_the_suite_was_not_measured_on_is_said_first(explained):
    where, _ = explained
    _, explanations = pattern_text.explained_file(SYNTHETIC)
    facts = ("Blackwell, sm_120 not measured by gmembench: L1 size and carve-out from the CUDA "
             "C++ Programming Guide; the model's DRAM granule is Hopper's (64 B)")
    other = dataclasses.replace(where, facts=facts)
    assert pattern_text.text(other, explanations).startswith(
        f"Unverified on this GPU: {facts} (see docs/gpus.md)\nNVIDIA H200")
    md = pattern_text.markdown(other, explanations, "scripts/gmb pattern i")
    assert f"> **Unverified on this GPU: {facts} (see docs/gpus.md)**" in md
    measured = dataclasses.replace(where, facts="measured")
    assert "Unverified" not in pattern_text.text(measured, explanations)


# --- the command it runs ----------------------------------------------------------------------

def selected(regex):
    """The names gmembench's filter selects (search, as name_filter.hpp does)."""
    return {n for n in NAMES if re.search(regex, n)}


def test_filter_picks_the_references_and_built_ins():
    l2_reads = {"cache/read/ws:4194304", "cache/read/ws:8388608", "cache/read/ws:16777216",
                "cache/read/ws:33554432"}
    loaded = {n for n in NAMES if n.startswith("latency/loaded/")}  # read and copy: all
    assert len(loaded) == 12
    # the prediction model's parameters: the calibration's chases, hot reads and strides, ...
    model = selected("^(" + "|".join(pattern_explain.MODEL_SOURCES) + ")")
    assert {"model/chase/ws:1073741824/lanes:32", "inflight/blocks/block:256/bpsm:8",
            "write/f32/ilp:1/grid:full", "gather/random", "scatter/random"} <= model
    refs = l2_reads | loaded | model | {"ref/memcpy_d2d", "ref/memset",
                                        "latency/chase/ws:2147483648/lanes:1"}
    assert selected(pattern.benchmark_filter(None, None, True)) == refs | {
        "read/f32/ilp:1/grid:full"}  # a read: only the coalesced read does what it does
    assert selected(pattern.benchmark_filter("gather", None, True)) == refs | {
        "copy/f32/ilp:1/grid:full", "offset/f32/read/off:1", "stride/f32/read/s:2",
        "stride/f32/read/s:8", "stride/f32/read/s:32", "warp/broadcast",
        "warp/permute_segment", "warp/permute_across", "gather/random"}
    assert selected(pattern.benchmark_filter("scatter", None, True)) >= {
        "offset/f32/write/off:1", "stride/f32/write/s:8", "scatter/random"}
    assert selected(pattern.benchmark_filter("write", "f32x4", True)) >= {
        "write/f32x4/ilp:1/grid:full"}
    assert "copy/f64/ilp:1/grid:full" in selected(pattern.benchmark_filter("gather", "f64", True))
    four = selected(pattern.benchmark_filter("scatter", None, True, 4))  # --k 4
    assert "copy/f32/ilp:4/grid:full" in four and "copy/f32/ilp:1/grid:full" not in four
    assert not any(n.startswith(("read/", "copy/", "write/"))
                   for n in selected(pattern.benchmark_filter("read", "s12", True)) - model)
    assert selected(pattern.benchmark_filter(None, None, False)) == refs
    assert re.search(pattern.benchmark_filter(None, None, False),
                     "pattern/(i%32)*32+i÷32/read/f32/k:1/block:256")


def test_command_line():
    options = pattern.Options(expressions=("i", "(i%32)*32+i/32"), op="gather", k=4, n=1 << 20,
                              device=1, repetitions=5, passthrough=("--benchmark_min_time=0.1s",))
    command = pattern.command("build/release/gmembench", options)
    assert command[:4] == ["build/release/gmembench", "--device=1", "--gmb_pattern=i",
                           "--gmb_pattern=(i%32)*32+i/32"]
    assert command[4:7] == ["--gmb_pattern_op=gather", "--gmb_pattern_k=4",
                            "--gmb_pattern_n=1048576"]
    assert command[-3:] == ["--benchmark_repetitions=5", "--benchmark_format=json",
                            "--benchmark_min_time=0.1s"]
    assert "--gmb_progress=pattern" in pattern.command("b", options, progress=True)


@pytest.mark.parametrize(("arg", "fragment"), [
    ("--benchmark_filter=x", "--benchmark_filter is set by gmb pattern"),
    ("--gmb_pattern=i", "give the expressions as arguments"),
    ("--gmb_pattern_word=f64", "use --word"),
    ("--benchmark_repetitions=2", "use --repetitions R"),
    ("--frob", "unrecognized argument '--frob'"),
])
def test_passthrough_refusals(arg, fragment):
    with pytest.raises(GmbError, match=re.escape(fragment)) as caught:
        pattern.check_passthrough(["--benchmark_min_time=0.1s", arg])
    assert caught.value.exit_code == 2


def test_relay_passes_progress_and_keeps_the_error_back():
    stream = BytesIO("gmembench: note: one\n\r\x1b[Kpattern 1/3 ÷\r\x1b[K"
                     "gmembench: error: index out of range\n".encode())
    sink = StringIO()
    assert pattern_binary.relay(stream, sink) == [("gmembench", "index out of range")]
    # The progress line is left cleared, for gmb's own error line.
    assert sink.getvalue() == "gmembench: note: one\n\r\x1b[Kpattern 1/3 ÷\r\x1b[K"
    # Split anywhere (a progress line is shown as soon as it comes), the same.
    data = "gmembench: note: one\n\r\x1b[Kpattern 1/3 ÷\r\x1b[Kgmembench: error: x\n".encode()
    for cut in range(1, len(data)):
        sink = StringIO()
        assert pattern_binary.relay(Chunks(data[:cut], data[cut:]), sink) == [("gmembench", "x")], cut
        assert sink.getvalue() == "gmembench: note: one\n\r\x1b[Kpattern 1/3 ÷\r\x1b[K", cut
    sink = StringIO()
    pattern_binary.relay(Chunks(b"\r\x1b[Kpattern 1/3", b"\r\x1b[Kpattern 2/3", b""), sink)
    assert sink.getvalue() == "\r\x1b[Kpattern 1/3\r\x1b[Kpattern 2/3"  # each as it came


class Chunks:
    """A stream that hands its bytes over in the given pieces."""

    def __init__(self, *pieces):
        self.pieces = list(pieces)

    def read1(self, size=-1):
        return self.pieces.pop(0) if self.pieces else b""


# --- the CLI against fake binaries -----------------------------------------------------------

FAKE = """\
#!{python}
import os, sys, json
with open(os.environ["FAKE_LOG"], "a") as log:
    log.write(json.dumps(sys.argv[1:]) + "\\n")
if os.environ.get("FAKE_ERROR"):
    print("gmembench: error: " + os.environ["FAKE_ERROR"], file=sys.stderr)
    sys.exit(1)
if os.environ.get("FAKE_CRASH"):
    sys.exit(int(os.environ["FAKE_CRASH"]))
sys.stdout.write(open(os.environ["FAKE_FIXTURE"], encoding="utf-8").read())
"""


@pytest.fixture
def fake(tmp_path, monkeypatch):
    """A fake gmembench that logs its arguments and prints FAKE_FIXTURE (the synthetic run
    without its errored pattern, unless a test sets another)."""
    binary = tmp_path / "gmembench"
    binary.write_text(FAKE.format(python=sys.executable))
    binary.chmod(0o755)
    doc = json.loads(SYNTHETIC.read_text(encoding="utf-8"))
    doc["benchmarks"] = [b for b in doc["benchmarks"] if not b.get("error_occurred")]
    fixture = tmp_path / "healthy.json"
    fixture.write_text(json.dumps(doc, ensure_ascii=False), encoding="utf-8")
    monkeypatch.setenv("FAKE_LOG", str(tmp_path / "log"))
    monkeypatch.setenv("FAKE_FIXTURE", str(fixture))
    monkeypatch.delenv("FAKE_ERROR", raising=False)
    monkeypatch.delenv("FAKE_CRASH", raising=False)

    class Fake:
        path = binary

        @staticmethod
        def calls():
            return [json.loads(line) for line in (tmp_path / "log").read_text().splitlines()]

    return Fake


def test_json_output(fake):
    proc = gmb("pattern", "--binary", str(fake.path), "--json", "i", "(i%32)*32+i/32")
    assert proc.returncode == 0, proc.stderr
    records = json.loads(proc.stdout)  # stdout holds the JSON alone
    assert [r["kind"] for r in records] == ["coalesced", "misaligned", "reversed", "strided",
                                            "transposed", "broadcast", "permuted", "scattered",
                                            "coalesced"]
    assert records[4]["expression"] == "(i%32)*32+i/32"
    assert records[4]["like"] is None and records[4]["lines"]  # a read: no mapped twin
    assert records[3]["like"] == "stride/f32/read/s:8"
    assert re.search(r"gmb: took \d+\.\d s", proc.stderr)
    [call] = fake.calls()
    assert call[:3] == ["--device=0", "--gmb_pattern=i", "--gmb_pattern=(i%32)*32+i/32"]
    assert call[3] == f"--benchmark_filter={pattern.benchmark_filter(None, None, True)}"
    assert call[4:] == ["--benchmark_repetitions=3", "--benchmark_format=json"]


def test_text_output(fake):
    proc = gmb("pattern", "--binary", str(fake.path), "--no-compare", "--repetitions", "1", "i")
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.startswith("gmb: ")
    assert "\ni  (read, f32, k 1, block 256)\n  measured 1682 GB/s" in proc.stdout
    assert re.search(r"\ngmb: took \d+\.\d s\n$", proc.stdout)
    assert "--benchmark_repetitions=1" in fake.calls()[0]


def test_a_bad_expression_is_one_line(fake, monkeypatch):
    monkeypatch.setenv("FAKE_ERROR", "--gmb_pattern 'i+': NVRTC: expected an expression")
    proc = gmb("pattern", "--binary", str(fake.path), "i+")
    assert_one_line_error(proc, "gmembench: --gmb_pattern 'i+': NVRTC: expected an expression")
    assert proc.returncode == 1


def test_the_binary_without_a_message(fake, monkeypatch):
    monkeypatch.setenv("FAKE_CRASH", "3")
    proc = gmb("pattern", "--binary", str(fake.path), "i")
    assert_one_line_error(proc, "exited with 3")
    assert proc.returncode == 3


def test_a_missing_binary_is_one_line(tmp_path):
    proc = gmb("pattern", "--binary", str(tmp_path / "nope"), "i")
    assert_one_line_error(proc, "nope: no such benchmark binary")
    assert proc.returncode == 1


def test_an_errored_pattern_exits_non_zero_after_the_explanation(fake, monkeypatch):
    monkeypatch.setenv("FAKE_FIXTURE", str(SYNTHETIC))
    proc = gmb("pattern", "--binary", str(fake.path), "i%2")
    assert "  errored: thread 2 (k=0) left a wrong value" in proc.stdout
    assert_one_line_error(proc, "1 of 10 pattern(s) errored: i%2: thread 2")


@pytest.mark.parametrize(("args", "fragment"), [
    (("pattern",), "required: EXPR"),
    (("pattern", "i", "--op", "frob"), "invalid choice: 'frob'"),
    (("pattern", "i", "--n", "5", "--bytes", "1G"), "not allowed with argument --n"),
    (("pattern", "i", "--k", "0"), "--k: must be at least 1"),
    (("pattern", "i", "--benchmark_filter=x"), "--benchmark_filter is set by gmb pattern"),
])
def test_usage_errors(args, fragment):
    proc = gmb(*args)
    assert_one_line_error(proc, fragment)
    assert proc.returncode == 2


def test_save_writes_a_new_folder_each_time(fake, tmp_path, capsys):
    options = pattern.Options(expressions=("i", "i*8"), binary=fake.path, save=True,
                              out=tmp_path / "results")
    assert pattern.measure(options, repo=tmp_path, now=NOW) == 0
    assert pattern.measure(options, repo=tmp_path, now=NOW) == 0
    first, second = (tmp_path / "results" / "nvidia-h200" / name
                     for name in ("20261124-120000-pattern", "20261124-120000-pattern-2"))
    for folder in (first, second):
        assert sorted(p.name for p in folder.iterdir()) == [
            "explanation.md", "pattern.json.gz", "pattern.png"]
    saved = json.loads(gzip.decompress((first / "pattern.json.gz").read_bytes()))
    assert saved == json.loads(Path(os.environ["FAKE_FIXTURE"]).read_text(encoding="utf-8"))
    assert "`i^1`" in (first / "explanation.md").read_text(encoding="utf-8")
    out = capsys.readouterr().out
    assert f"gmb: wrote {first / 'pattern.png'}" in out and f"\n{second}\n" in out


def test_one_expression_gets_no_figure(fake, tmp_path, monkeypatch):
    doc = json.loads(Path(os.environ["FAKE_FIXTURE"]).read_text(encoding="utf-8"))
    doc["benchmarks"] = [b for b in doc["benchmarks"]
                         if not b["run_name"].startswith("pattern/") or b["run_name"] ==
                         "pattern/i/read/f32/k:1/block:256/manual_time"]
    one = tmp_path / "one.json"
    one.write_text(json.dumps(doc, ensure_ascii=False), encoding="utf-8")
    monkeypatch.setenv("FAKE_FIXTURE", str(one))
    pattern.measure(pattern.Options(expressions=("i",), binary=fake.path, save=True,
                                    out=tmp_path / "results"), repo=tmp_path, now=NOW)
    folder = tmp_path / "results" / "nvidia-h200" / "20261124-120000-pattern"
    assert sorted(p.name for p in folder.iterdir()) == ["explanation.md", "pattern.json.gz"]


def test_no_pattern_in_the_output(fake, tmp_path, monkeypatch):
    doc = json.loads(SYNTHETIC.read_text(encoding="utf-8"))
    doc["benchmarks"] = [b for b in doc["benchmarks"] if b["run_name"].startswith("ref/")]
    refs = tmp_path / "refs.json"
    refs.write_text(json.dumps(doc), encoding="utf-8")
    monkeypatch.setenv("FAKE_FIXTURE", str(refs))
    proc = gmb("pattern", "--binary", str(fake.path), "i")
    assert_one_line_error(proc, "printed no pattern/ benchmark")


def test_the_figure(tmp_path):
    where, explanations = pattern_text.explained_file(SYNTHETIC)
    path = pattern_figure.draw(tmp_path, where, explanations)
    assert path == tmp_path / "pattern.png"
    with Image.open(path) as image:
        assert image.mode == "P" and image.width > image.height


def test_records_are_json(explained):
    _, explanations = pattern_text.explained_file(SYNTHETIC)
    records = json.loads(json.dumps(pattern_text.records(explanations)))
    assert records[0]["predicted_gbs"] == pytest.approx(SMS * 8192 / LATENCY)
    assert records[-1]["error"] and records[-1]["gbs"] is None


# --- the build, as `gmb run` does it ----------------------------------------------------------

def test_builds_the_flavor_then_runs_it(fake, tmp_path, monkeypatch, capfd):
    repo = tmp_path / "repo"
    (repo / "scripts").mkdir(parents=True)
    (repo / "scripts" / "setup").write_text('echo setup >> "$FAKE_LOG.tools"\n')
    built = repo / "build" / "sm90" / "gmembench-cg"
    built.parent.mkdir(parents=True)
    built.write_text(fake.path.read_text())
    built.chmod(0o755)
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "cmake").write_text('#!/bin/bash\necho "cmake $*" >> "$FAKE_LOG.tools"\n')
    (bin_dir / "cmake").chmod(0o755)
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{os.environ['PATH']}")
    options = pattern.Options(expressions=("i",), flavor="cg", preset="sm90", json=True)
    assert pattern.measure(options, repo=repo) == 0
    assert Path(f"{os.environ['FAKE_LOG']}.tools").read_text().splitlines() == [
        "setup", "cmake --preset sm90", "cmake --build --preset sm90 --target gmembench-cg"]
    assert fake.calls()[0][1] == "--gmb_pattern=i"
    out, err = capfd.readouterr()
    assert json.loads(out)[0]["kind"] == "coalesced"  # the build's lines went to stderr
    assert "gmb: cmake --preset sm90" in err


def test_the_l2_bound_from_the_largest_hot_read_within_half_the_l2(tmp_path):
    doc = json.loads(SYNTHETIC.read_text(encoding="utf-8"))
    doc["context"]["gpu_l2_bytes"] = str(60 * 2**20)
    for ws, gbs in ((16777216, 9000.0), (33554432, 8000.0), (67108864, 7000.0)):
        doc["benchmarks"].append({
            "name": f"cache/read/ws:{ws}/manual_time", "run_name": f"cache/read/ws:{ws}/manual_time",
            "run_type": "iteration", "repetitions": 1, "repetition_index": 0, "threads": 1,
            "iterations": 10, "real_time": 1.0, "cpu_time": 1.0, "time_unit": "us",
            "bytes_per_second": gbs * 1e9})
    path = tmp_path / "with-l2.json"
    path.write_text(json.dumps(doc), encoding="utf-8")
    where, explained = pattern_text.explained_file(path)
    assert (where.l2_gbs, where.l2_name) == (9000.0, "cache/read/ws:16777216")  # 32 MiB > 30
    transpose = next(e for e in explained if e.expression == "(i%32)*32+i/32")
    # 32 lanes of 4 B in 32 sectors: an eighth of what the L2 sends is used
    assert transpose.l2_bound_gbs == pytest.approx(9000.0 / 8)
    assert transpose.bound == "L2-to-SM" and transpose.predicted_gbs == pytest.approx(1125.0)
    assert transpose.lines[1].startswith("L2-to-SM-bound")


def test_the_latency_under_load_from_the_loaded_chase(tmp_path):
    doc = json.loads(SYNTHETIC.read_text(encoding="utf-8"))
    for sms, gbs, ns in ((0, 0.0, 340.0), (64, 3000.0, 400.0), (131, 4500.0, 660.0)):
        name = f"latency/loaded/load:read/sms:{sms}/manual_time"
        doc["benchmarks"].append({
            "name": name, "run_name": name, "run_type": "iteration", "repetitions": 1,
            "repetition_index": 0, "threads": 1, "iterations": 10, "real_time": 1.0,
            "cpu_time": 1.0, "time_unit": "us", "latency_ns": ns, "load_gbs": gbs})
    path = tmp_path / "loaded.json"
    path.write_text(json.dumps(doc), encoding="utf-8")
    where, explained = pattern_text.explained_file(path)
    assert set(where.loaded) == {"read"}
    coalesced = next(e for e in explained if e.expression == "i" and e.word == "f32")
    # B = sms * bif / L(B): L(B) read off the curve at the B it predicts
    b = coalesced.littles_gbs
    assert b == pytest.approx(SMS * 8192 / where.loaded["read"].latency(b), rel=1e-6)
    assert coalesced.latency_ns > 340.0 and "loaded latency at that rate" in coalesced.lines[1]


def test_save_on_a_full_disk_is_one_line_and_leaves_no_half_file(fake, tmp_path, monkeypatch):
    from gmbtools.data import files
    real = files.write_whole

    def full(path, data):
        if path.name == "explanation.md":
            raise OSError(errno.ENOSPC, "No space left on device", str(path))
        return real(path, data)

    monkeypatch.setattr(files, "write_whole", full)
    options = pattern.Options(expressions=("i", "i*8"), binary=fake.path, save=True,
                              out=tmp_path / "results")
    with pytest.raises(GmbError, match="No space left on device") as caught:
        pattern.measure(options, repo=tmp_path, now=NOW)
    assert caught.value.exit_code == 74 and "explanation.md" in str(caught.value)
    folder = tmp_path / "results" / "nvidia-h200" / "20261124-120000-pattern"
    assert sorted(p.name for p in folder.iterdir()) == ["pattern.json.gz"]


# --- the prediction model on a GPU run (results/, where the checkout has it) -------------------

MODEL_RUN = Path(__file__).resolve().parents[2] / "results" / "nvidia-h100-80gb-hbm3" / \
    "20261127-155827-pattern-model"
TRANSPOSED = "(i%32)*32+i/32"  # lanes each in a line of their own: the L1 queue (model.md)
# The H100's records predate the L2's replay: they count 64 B of DRAM per pick of the hash, where
# the replay finds 52 (picks that meet in a granule the L2 still holds); it is judged on the H200's
HASH = "(i*2654435761)%n"


@pytest.mark.skipif(not MODEL_RUN.is_dir(), reason="results/ is not in this checkout")
def test_the_model_predicts_every_committed_pattern_within_5_percent():
    ratios = {}
    for part in ("read", "offset", "aos", "strided"):
        where, explanations = pattern_explain.explain_file(MODEL_RUN / part / "pattern.json.gz")
        assert where.params is not None  # the run measured the model's parameters
        for e in explanations:
            assert e.bound in e.model_bounds  # the model's bound, not the fallback's
            ratios[(e.op, e.expression)] = e.gbs / e.predicted_gbs
    assert len(ratios) == 17
    assert all(abs(r - 1) <= 0.05 for key, r in ratios.items() if key != ("gather", HASH)), ratios
    # the transposed index: 32 lines a load keep the L1's data stage near its rate, and the
    # loads queue there (without the queue's wait: 0.92)
    assert ratios[("gather", TRANSPOSED)] < 1


FRESH_RUN = MODEL_RUN.parent / "20261128-043559-pattern"  # today's model printed its own ratios


@pytest.mark.skipif(not FRESH_RUN.is_dir(), reason="results/ is not in this checkout")
def test_a_fresh_run_measures_every_pattern_within_5_percent_of_its_prediction():
    where, explanations = pattern_explain.explain_file(FRESH_RUN / "pattern.json.gz")
    assert where.params is not None and len(explanations) == 13
    for e in explanations:
        if e.expression != HASH:
            assert abs(e.gbs / e.predicted_gbs - 1) <= 0.05, e.expression


H200_RUN = MODEL_RUN.parent.parent / "nvidia-h200" / "20261203-174529-pattern"


@pytest.mark.skipif(not H200_RUN.is_dir(), reason="results/ is not in this checkout")
def test_scattered_misses_cost_what_the_random_gather_makes_them_cost():
    """A granule a pick over 1 and 2 GiB, all misses, within 2 % of the DRAM bound whose page
    cost comes from gather/random with its indices free (0.944 with them charged)."""
    _, explanations = pattern_explain.explain_file(H200_RUN / "pattern.json.gz")
    ratios = {e.expression: e.gbs / e.predicted_gbs for e in explanations}
    for span in (33554432, 16777216):
        expression = f"((i*2654435761)%{span})*16"
        assert abs(ratios[expression] - 1) <= 0.02, expression
        assert next(e for e in explanations if e.expression == expression).bound == "DRAM"
    assert sum(abs(r - 1) <= 0.05 for r in list(ratios.values())[:13]) >= 11


def test_a_patterns_shape_follows_its_step_and_its_shared_words():
    from gmbtools.analysis import pattern_model
    base = {"model_dram_bytes": 2 * 2**26, "model_efficiency": 1.0, "pattern_threads": 2**24,
            "model_ld_sectors_per_req": 32.0, "bytes_in_flight_per_sm": 8192.0}
    strided = pattern_model.pattern_shape("gather", 4, 1, 256, {**base, "pattern_lane_step": 8.0})
    assert (strided.op, strided.read_step, strided.write_step) == ("copy", 32.0, None)
    assert strided.resident_threads == 2048 and strided.lines_per_request == 8.0
    # no lane step, every byte used: streaming whole granules, a line per sector
    blocked = pattern_model.pattern_shape("gather", 4, 1, 256, base)
    assert blocked.read_step is None and blocked.lines_per_request == 32.0
    # ... unless the binary counted them: lanes 37 words apart within 4 KiB wrap onto 28 lines
    counted = pattern_model.pattern_shape("gather", 4, 1, 256, {**base, "pattern_lines_per_req": 28.0})
    assert counted.lines_per_request == 28.0
    # the run kernel's instructions (its SASS): the block slot's, as a built-in copy's
    assert pattern_model.pattern_shape("gather", 4, 1, 256, {
        **base, "model_warp_instructions": 41.0}).instructions == 41.0
    # no lane step, most of each granule unused: a page each, every lane alone in its line
    hashed = pattern_model.pattern_shape("gather", 4, 1, 256, {**base, "model_dram_bytes": 2**30})
    assert hashed.read_step == float("inf") and hashed.lone_loads
    # lanes sharing words: DRAM moves fewer bytes than the GB/s counts
    pairs = {**base, "model_dram_bytes": 1.5 * 2**26, "pattern_distinct_per_req": 16.0}
    assert pattern_model.pattern_shape("gather", 4, 1, 256, pairs).efficiency == \
        pytest.approx(4 / 3)
    scatter = pattern_model.pattern_shape("scatter", 4, 1, 256, {**base, "pattern_lane_step": 2.0})
    assert (scatter.read_step, scatter.write_step) == (None, 8.0)
    # a scattered set the L2 holds, re-read far apart: the whole launch's DRAM bytes are few,
    # but warps near each other use a sector of each granule (the windows' bytes): lone loads
    hot = {**base, "model_dram_bytes": 2**23 + 2**26, "pattern_window_dram_bytes": 68 * 2**24}
    hot["model_efficiency"] = 2**27 / hot["model_dram_bytes"]
    assert pattern_class.local_efficiency(hot) == pytest.approx(2**27 / (68 * 2**24))
    shape = pattern_model.pattern_shape("gather", 4, 1, 256, hot)
    assert shape.read_step == float("inf") and shape.lone_loads
    assert pattern_class.classify(hot, "gather", "f32", 4, 32.0)[0] == "scattered"
    # a set re-read from far apart whose nearby warps use whole granules: not scattered, in the
    # shape as in the class (the whole launch's efficiency, not its cap at 1, over the windows')
    reread = {**base, "model_dram_bytes": 2**22, "model_efficiency": 2**26 / 2**22,
              "pattern_window_dram_bytes": 2**26}
    assert pattern_model.pattern_shape("read", 4, 1, 256, reread).read_step is None
    assert pattern_class.classify(reread, "read", "f32", 4, 32.0)[0] != "scattered"


def test_the_twin_is_the_built_in_of_the_same_bound_and_cost():
    import pandas as pd
    from gmbtools.analysis import pattern_twin
    runs = pd.DataFrame({
        "name": ["gather/random", "stride/f32/read/s:32", "warp/permute_across",
                 "offset/f32/read/off:1", "scatter/random", "read/f32/ilp:1/grid:full",
                 "ref/memcpy_d2d"],
        "model_gbs": [340.0, 329.0, 2002.0, 2362.0, 300.0, 2500.0, float("nan")],
        "model_bound": ["DRAM", "DRAM", "latency", "latency", "DRAM", "latency", ""]})
    gathers = pattern_twin.candidates(runs, "gather")
    assert list(gathers["name"]) == ["gather/random", "stride/f32/read/s:32",
                                     "warp/permute_across", "offset/f32/read/off:1"]
    # nearest cost of the same bound: the transposed 8-wide index (2302) costs as off:1
    twin = pattern_twin.model_twin("latency", 2302.0, gathers, "warp/permute_across")
    assert (twin.name, twin.same_cost) == ("offset/f32/read/off:1", True)
    # the class's twin first where it costs the same
    assert pattern_twin.model_twin("latency", 2150.0, gathers, "warp/permute_across").name == \
        "warp/permute_across"
    # a hash DRAM-bound at 243 GB/s: no built-in costs the same, the nearest is said
    hashed = pattern_twin.model_twin("DRAM", 243.0, gathers, "gather/random")
    assert (hashed.name, hashed.same_cost) == ("stride/f32/read/s:32", False)
    assert pattern_twin.model_twin("L2 to SM", 900.0, gathers) is None
    assert pattern_twin.candidates(runs, "write").empty


@pytest.mark.skipif(not FRESH_RUN.is_dir(), reason="results/ is not in this checkout")
def test_a_hash_shaped_like_the_random_gather_is_told_apart_by_the_model():
    _, explanations = pattern_text.explained_file(FRESH_RUN / "pattern.json.gz")
    by = {e.expression: e for e in explanations}
    hashed = by["(i*2654435761)%n"]
    assert hashed.like == "gather/random" and hashed.like_ratio < 0.8  # the shape's twin
    assert not hashed.model_twin.same_cost
    assert any(line.startswith("by the model no built-in of this run costs the same")
               for line in hashed.lines)
    # a pattern whose class's twin costs otherwise gets the built-in of its cost
    pitched = by["(i%32)*8+(i/32)%8+(i/256)*256"]
    assert pitched.shaped_like == "warp/permute_across"
    assert pitched.like == "offset/f32/read/off:1" and abs(pitched.like_ratio - 1) <= 0.05
    # --json carries the model's twin as plain values
    record = json.loads(json.dumps(pattern_text.records(explanations)))[5]
    assert record["expression"] == "(i*2654435761)%n"
    assert record["model_twin"] == {"name": "stride/f32/read/s:32", "bound": "DRAM",
                                    "predicted_gbs": pytest.approx(329, abs=1),
                                    "same_cost": False}
    # every twin named by the model measures within 15 % of the pattern
    for e in explanations:
        if e.model_twin is not None and e.model_twin.same_cost and e.like_ratio:
            assert abs(e.like_ratio - 1) <= 0.15, e.expression
