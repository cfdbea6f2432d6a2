"""The README's numbers against the committed files they come from (issue 44).

- The headline table of "## Measured" is parsed: each cell is compared, at the precision it is
  printed with, with the median in the JSON of the run its column's GPU links to.
- Every other number the README ties to a run is a claim below: the README's sentence with the
  numbers left out, the run it cites and how each number is read from that run's files. The
  sentence, filled in from the files, must be in the README; a number or wording changed in
  the README fails here until its claim is read again from the file.
"""

import json
import math
import re
from functools import cache

import pytest
from conftest import SCRIPTS

from gmbtools.analysis.headlines import best_of
from gmbtools.data.naming import LATENCY_FAMILIES
from gmbtools.data.results import load, median_by_name, read_text, stored
from gmbtools.present.headline_tables import headline_tables, percent

REPO = SCRIPTS.parent
README = REPO / "README.md"
H200 = "results/nvidia-h200/20261123-214741"
H100 = "results/nvidia-h100-80gb-hbm3/20261123-184153"
H200_INFLIGHT = "results/nvidia-h200/20261123-213218-inflight-full"
H100_INFLIGHT = "results/nvidia-h100-80gb-hbm3/20261123-213551-inflight-full"
H200_TRANSPOSE = "results/nvidia-h200/20261123-105448-ladders-full"
H200_REDUCE = "results/nvidia-h200/20261123-121406-ladders-full"
H100_LADDERS = "results/nvidia-h100-80gb-hbm3/20261123-122232-ladders-full"
H100_MODEL = "results/nvidia-h100-80gb-hbm3/20261128-074929"
H200_MODEL = "results/nvidia-h200/20261202-022619"
H200_TIME = "results/nvidia-h200/20261202-145311"
H200_PATHS = "results/nvidia-h200/20261123-164704-paths-full"
H100_PATHS = "results/nvidia-h100-80gb-hbm3/20261123-184646-paths-full"
PEERS = "results/nvidia-h100-80gb-hbm3/20261125-222845-peers"
H200_NODE = "results/nvidia-h200/20261127-101738"
H200_NODE_GPU0 = H200_NODE + "/gpu0-GPU-d1dff13b-701a-2ea2-c4ef-501761552a4e"
PATTERN = "results/nvidia-h100-80gb-hbm3/20261128-043559-pattern"  # with the model's parameters
H100_BULK = "results/nvidia-h100-80gb-hbm3/20261127-025433-bulk"
H100_BULK_FULL = "results/nvidia-h100-80gb-hbm3/20261127-025520-bulk-reads-full"
FLAVORS = ("default", "ca", "cg")

pytestmark = pytest.mark.skipif(not (REPO / H200).is_dir(), reason="no results/ here")


def readme() -> str:
    """The README with its lines joined, as the sentences read."""
    return " ".join(README.read_text().split())


@cache
def medians(run: str, flavor: str = "default") -> dict:
    return median_by_name(load(stored(REPO / run / f"{flavor}.json")).records)


@cache
def context(run: str) -> dict:
    return load(stored(REPO / run / "default.json")).context


def gbs(run, name):
    return medians(run)[name].gbs


def pct(run, name):
    return medians(run)[name].pct_peak


def counter(run, name, key):
    return medians(run)[name].counters[key]


def best_read(run):
    return best_of(medians(run), "read").gbs


def headline_ratios(run, flavor="default"):
    """summary.md's three ratios of one flavor, as headline_tables prints them."""
    lines = headline_tables(context(run), medians(run, flavor))
    return [line.split("|")[2].strip() for line in lines if line.startswith("| best ")
            and "/" in line.split("|")[1]]


def largest_cv_off_the_host_link(run):
    """The largest cv of any flavor, as summary.md counts it (no latency families), the host
    link (`host/`, `managed/`) left out."""
    return max(m.cv for flavor in FLAVORS for m in medians(run, flavor).values()
               if m.cv is not None and m.error is None and m.family not in LATENCY_FAMILIES
               and m.family not in ("host", "managed"))


def run_seconds(run):
    """The timed run's whole seconds, as `time_run.sh` printed them (time.txt), which its
    NOTES give in bold too."""
    printed = float(re.search(r"exit 0, ([\d.]+) s", (REPO / run / "time.txt").read_text())[1])
    bold = int(re.search(r"\*\*(\d+) s\*\*", (REPO / run / "NOTES.md").read_text())[1])
    assert bold == round(printed), f"{run}/NOTES.md says {bold} s, time.txt {printed} s"
    return bold


def loaded(run, sms, key):
    return counter(run, f"latency/loaded/load:read/sms:{sms}", key)


def warp_loads(run, distinct):
    return counter(run, f"constant/read/distinct:{distinct}/ws:1024/path:constant",
                   "warp_loads_per_ns")


def array_over_global(run):
    walk = "texture/read/cols/block:256x1/path:"
    return gbs(run, walk + "array") / gbs(run, walk + "global")


def host_over_memcpy(op):
    engine = {"read": "ref/memcpy_h2d/mem:pinned", "write": "ref/memcpy_d2h/mem:pinned"}[op]
    return min(gbs(run, f"host/{op}/f32x4/ilp:4") / gbs(run, engine)
               for run in (H200_PATHS, H100_PATHS))


@cache
def peer_pair():
    """GPU 0 with partner 1 in the peer matrix."""
    pairs = json.loads((REPO / PEERS / "matrix.json").read_text())["pairs"]
    return next(p for p in pairs if (p["device"], p["partner"]) == (0, 1))


def peer_context(key):
    return json.loads(read_text(REPO / PEERS / peer_pair()["file"]))["context"][key]


# The quick sweep's bulk read of 128 KiB per SM, one block per SM checked by one warp.
BULK_ONE_WARP = "bulk/read/bytes:32768/stages:4/bpsm:1/warps:1"


def bulk_reads(run):
    return [m for name, m in medians(run).items() if name.startswith("bulk/read/")]


def best_bulk_read(run):
    return max(m.gbs for m in bulk_reads(run))


def smallest_bulk_in_flight(run, share):
    """The fewest bytes in flight per SM at which some bulk read reaches `share` of the best
    plain read of the run."""
    floor = share * best_read(run)
    return min(m.counters["bytes_in_flight_per_sm"] for m in bulk_reads(run) if m.gbs >= floor)


def model_counts(run=H100_MODEL):
    text = (REPO / run / "summary.md").read_text()
    return re.search(r"(\d+) of (\d+) benchmarks within 5%", text).groups()


# (README sentence with {} for each number, the runs it cites, each number: (value, format)).
CLAIMS = [
    ("best copy / `ref/memcpy_d2d` {} (H200) and {} (H100), best read / theoretical peak {} and "
     "{}, best write / `ref/memset` {} and {}", (H200, H100),
     lambda: [(r, "s") for pair in zip(headline_ratios(H200), headline_ratios(H100))
              for r in pair]),
    ("A default run takes {} s on the H200, build included", (H200_TIME,),
     lambda: [(run_seconds(H200_TIME), "d")]),
    ("the H200's largest cv of a bandwidth over the 5 repetitions is {}, the host link", (H200,),
     lambda: [(percent(largest_cv_off_the_host_link(H200)), "s")]),
    ("`read/f32/ilp:1/grid:full` reads {} GB/s on the H200 ({}% of peak) and {} on the H100 "
     "({}%)", (H200, H100),
     lambda: [(gbs(H200, "read/f32/ilp:1/grid:full"), ",.0f"),
              (pct(H200, "read/f32/ilp:1/grid:full"), ".1f"),
              (gbs(H100, "read/f32/ilp:1/grid:full"), ",.0f"),
              (pct(H100, "read/f32/ilp:1/grid:full"), ".1f")]),
    ("Empty 256-thread blocks start at {} (H200) and {} (H100) per µs, 64-thread ones at {} and "
     "{} (`inflight/blocks/`)", (H200, H100),
     lambda: [(counter(run, f"inflight/blocks/block:{block}", "blocks_per_us"), spec)
              for block, spec in (("256/bpsm:8", ",.0f"), ("64/bpsm:32", ",.1f"))
              for run in (H200, H100)]),
    ("the same 8 KiB in flight per SM read {}% of the H200 and {}% of the H100 (all from the "
     "reference runs)", (H200, H100),
     lambda: [(pct(run, "inflight/read/w:4/ilp:1/block:256/bpsm:8/grid:persistent"), ".1f")
              for run in (H200, H100)]),
    ("eight 16-B loads at only 256 threads per SM read {}% and {}%", (H200_INFLIGHT, H100_INFLIGHT),
     lambda: [(pct(run, "inflight/read/w:16/ilp:8/block:128/bpsm:2/grid:persistent"), ".1f")
              for run in (H200_INFLIGHT, H100_INFLIGHT)]),
    ("{} ns idle on the H200, {} ns at {} TB/s, {} ns at {} TB/s; {} ns idle and {} ns at {} TB/s "
     "on the H100", (H200_INFLIGHT, H100_INFLIGHT),
     lambda: [(loaded(H200_INFLIGHT, 0, "latency_ns"), ".0f"),
              (loaded(H200_INFLIGHT, 48, "latency_ns"), ".0f"),
              (loaded(H200_INFLIGHT, 48, "load_gbs") / 1000, ".1f"),
              (loaded(H200_INFLIGHT, 131, "latency_ns"), ".0f"),
              (loaded(H200_INFLIGHT, 131, "load_gbs") / 1000, ".1f"),
              (loaded(H100_INFLIGHT, 0, "latency_ns"), ".0f"),
              (loaded(H100_INFLIGHT, 128, "latency_ns"), ".0f"),
              (loaded(H100_INFLIGHT, 128, "load_gbs") / 1000, ".1f")]),
    ("{} of {} within 5 % on an H100", (H100_MODEL,),
     lambda: [(n, "s") for n in model_counts()]),
    ("{} of {} on an H200", (H200_MODEL,), lambda: [(n, "s") for n in model_counts(H200_MODEL)]),
    ("the transpose climbs from {} GB/s (one thread per column) to {} "
     "(`transpose/f32/best/n:16384`, {}% of the copy, {} of `ref/memcpy_d2d`", (H200_TRANSPOSE,),
     lambda: [(gbs(H200_TRANSPOSE, "transpose/f32/thread_per_col/n:16384"), ".1f"),
              (gbs(H200_TRANSPOSE, "transpose/f32/best/n:16384"), ".1f"),
              (100 * gbs(H200_TRANSPOSE, "transpose/f32/best/n:16384")
               / gbs(H200_TRANSPOSE, "transpose/f32/copy/n:16384"), ".1f"),
              (gbs(H200_TRANSPOSE, "transpose/f32/best/n:16384")
               / gbs(H200_TRANSPOSE, "ref/memcpy_d2d"), ".3f")]),
    ("n:11568 misses the 0.90 bar ({},", (H200_TRANSPOSE,),
     lambda: [(gbs(H200_TRANSPOSE, "transpose/f64/best/n:11568")
               / gbs(H200_TRANSPOSE, "ref/memcpy_d2d"), ".3f")]),
    ("The reduction climbs from {} to {} GB/s (`reduce/f32/one_pass`, {}% of the best read), "
     "level with CUB's {}", (H200_REDUCE,),
     lambda: [(next(m.gbs for name, m in medians(H200_REDUCE).items()
                    if name.startswith("reduce/f32/") and m.counters.get("rung") == 0), ".1f"),
              (gbs(H200_REDUCE, "reduce/f32/one_pass"), ".1f"),
              (100 * gbs(H200_REDUCE, "reduce/f32/one_pass") / best_read(H200_REDUCE), ".1f"),
              (gbs(H200_REDUCE, "reduce/f32/cub"), ".1f")]),
    ("the top transpose rung is {} GB/s (f32 n:16384) against a {} GB/s `ref/memcpy_d2d`, and "
     "`reduce/f32/one_pass` {} GB/s, {}% above CUB's {}", (H100_LADDERS,),
     lambda: [(gbs(H100_LADDERS, "transpose/f32/best/n:16384"), ".1f"),
              (gbs(H100_LADDERS, "ref/memcpy_d2d"), ".1f"),
              (gbs(H100_LADDERS, "reduce/f32/one_pass"), ".1f"),
              (100 * (gbs(H100_LADDERS, "reduce/f32/one_pass")
                      / gbs(H100_LADDERS, "reduce/f32/cub") - 1), ".1f"),
              (gbs(H100_LADDERS, "reduce/f32/cub"), ".1f")]),
    ("one thread per SM issuing bulk reads reaches {} GB/s on the H100, {} of the best plain "
     "read of the same run, from {} KiB in flight per SM", (H100_BULK_FULL,),
     lambda: [(best_bulk_read(H100_BULK_FULL), ",.0f"),
              (best_bulk_read(H100_BULK_FULL) / best_read(H100_BULK_FULL), ".2f"),
              (smallest_bulk_in_flight(H100_BULK_FULL, 0.97) / 1024, ".0f")]),
    ("one warp that also checks every word holds it to {}", (H100_BULK,),
     lambda: [(gbs(H100_BULK, BULK_ONE_WARP) / best_read(H100_BULK), ".2f")]),
    ("The TMA rung (`tile_tma`: tiles moved by tensor copies) reaches {} GB/s, {} of "
     "`ref/memcpy_d2d`", (H100_BULK,),
     lambda: [(gbs(H100_BULK, "transpose/f32/tile_tma/n:16384"), ".1f"),
              (gbs(H100_BULK, "transpose/f32/tile_tma/n:16384")
               / gbs(H100_BULK, "ref/memcpy_d2d"), ".3f")]),
    ("bandwidth keeps sinking ({} GB/s at `s:16`, {} at `s:1024`)", (H200,),
     lambda: [(gbs(H200, f"stride/f32/read/s:{s}"), ".0f") for s in (16, 1024)]),
    ("({}× slower at 32 on the H200)", (H200_PATHS,),
     lambda: [(warp_loads(H200_PATHS, 1) / warp_loads(H200_PATHS, 32), ".1f")]),
    ("down columns ({}× on the H200, {}× on the H100)", (H200_PATHS, H100_PATHS),
     lambda: [(array_over_global(run), ".2f") for run in (H200_PATHS, H100_PATHS)]),
    ("reach at least {} (read) and {} (write) of `cudaMemcpy` on both", (H200_PATHS, H100_PATHS),
     lambda: [(math.floor(100 * host_over_memcpy(op)) / 100, ".2f") for op in ("read", "write")]),
    ("On two H100s joined by {} NVLinks ({} GB/s one way), a kernel pulls {} GB/s from its "
     "neighbour, {} of the copy engine", (PEERS,),
     lambda: [(peer_context("gpu_peer_links"), "s"),
              (float(peer_context("gpu_peer_link_gbs")), ".0f"),
              (peer_pair()["cells"]["copy_pull"]["gbs"], ".1f"),
              (peer_pair()["cells"]["ratio_pull"]["ratio"], ".3f")]),
    ("pushing both ways, two H200s move {}, {} of it", (H200_NODE,),
     lambda: [(gbs(H200_NODE_GPU0, "peer/copy/f32x4/ilp:4/dir:both"), ".1f"),
              (gbs(H200_NODE_GPU0, "peer/copy/f32x4/ilp:4/dir:both")
               / gbs(H200_NODE_GPU0, "ref/memcpy_peer/dir:both"), ".3f")]),
]


@pytest.mark.parametrize("template, runs, numbers", CLAIMS,
                         ids=[" ".join(c[0].split()[:6]) for c in CLAIMS])
def test_a_readme_number_is_its_files(template, runs, numbers):
    text = readme()
    for run in runs:
        assert run in text, f"README.md does not name {run}, where '{template}' comes from"
    sentence = template.format(*(format(value, spec) for value, spec in numbers()))
    assert sentence in text, f"README.md should say, from {', '.join(runs)}:\n{sentence}"


def measured_section() -> str:
    text = README.read_text()
    return text.split("## Measured\n", 1)[1].split("\n## ", 1)[0]


def test_the_headline_table_is_the_reference_runs():
    section = measured_section()
    runs = dict(re.findall(r"\[(H\d+)\]\((results/[^)]+)/summary\.md\)", section))
    assert set(runs) == {"H200", "H100"}, "the Measured section links each GPU's run"
    rows = [[c.strip() for c in line.strip().strip("|").split("|")]
            for line in section.splitlines() if line.startswith("|")]
    header, body = rows[0], rows[2:]
    columns = {}  # GPU -> (index of its GB/s column, index of its % peak column)
    for i, title in enumerate(header):
        if title.endswith(" GB/s"):
            assert header[i + 1] == "% peak", f"README.md: '{title}' without its % peak"
            columns[title.split()[0]] = (i, i + 1)
    assert set(columns) == set(runs)
    checked = 0
    for row in body:
        name = re.search(r"`([^`]+)`", row[0]).group(1)
        for gpu, (at_gbs, at_pct) in columns.items():
            run = runs[gpu]
            assert gpu in context(run)["gpu_name"], f"{run} is not an {gpu}"
            if name == "gpu_peak_gbs":
                value, percent_of_peak = float(context(run)["gpu_peak_gbs"]), 100
            else:
                value, percent_of_peak = gbs(run, name), pct(run, name)
            for printed, exact in ((row[at_gbs], value), (row[at_pct], percent_of_peak)):
                decimals = len(printed.split(".")[1]) if "." in printed else 0
                assert printed == f"{exact:.{decimals}f}", (
                    f"README.md's {gpu} {name}: {printed}, {run} has {exact}")
                checked += 1
    assert checked >= 20


def test_the_pattern_output_is_its_runs():
    """The README's `gmb pattern` output is that of the run it links, line by line."""
    text = README.read_text()
    block = text.split("```text\n", 1)[1].split("```", 1)[0]
    where = PATTERN + "/explanation.md"
    assert where in text
    explained = (REPO / where).read_text()
    said = {line[2:] for line in explained.splitlines() if line.startswith("- ")}
    for line in block.splitlines():
        assert line.strip() in said, f"not in {where}: {line.strip()}"
    # the range of measured / predicted its table prints, as the README says it
    ratios = [float(m) for m in re.findall(r"^\|[^|]*\|[^|]*\|[^|]*\|[^|]*\|[^|]*\|[^|]*\| ([0-9.]+) \|",
                                           explained, re.M)]
    assert len(ratios) == 13
    assert f"thirteen\nexpressions {min(ratios):.3f} to {max(ratios):.3f} of the model of its day on an H100" \
        in text


def test_the_claims_can_fail():
    """A number off by one in its last place is caught."""
    template, runs, numbers = CLAIMS[3]
    wrong = [(value + 1, spec) for value, spec in numbers()]
    assert template.format(*(format(v, s) for v, s in wrong)) not in readme()
