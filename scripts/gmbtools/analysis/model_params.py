"""The per-GPU parameters of the prediction model (`model_predict`), each measured by the run
itself and each taken from one named benchmark of one family, so a prediction never uses a
number measured by the benchmark it predicts (docs/model.md):

| parameter | what | from |
|---|---|---|
| `read_gbs` | what DRAM delivers to streaming reads | the read curve's: the most its streaming SMs moved |
| `write_gbs` | ... to streaming writes | `ref/memset` |
| `copy_gbs` | ... to reads and writes in equal parts | `ref/memcpy_d2d` |
| `read_curve`, `copy_curve`, `mix_curve` | the DRAM latency under a load of reads, of copies, of a mix a fifth written | `latency/loaded/load:read|copy/*` and the calibration's `model/loaded/load:read|copy|mix/*` at other loads (the mix's idle point the read's) |
| `block_rate` | blocks the GPU starts per ns (256-thread blocks, 8 per SM) | `inflight/blocks/block:256/bpsm:8`, else `write/f32/ilp:1/grid:full` (1 KiB per block) |
| `block_slot_ns` | how long an empty block holds an SM's slot | `inflight/blocks/block:256/bpsm:1`, `model/blocks/block:128/bpsm:1` (`load_slot_ns`) |
| `load_slot_ns` | ... a block that loads and stores | `read/f32/ilp:1/grid:full`: its round less the latency and the start wait (`block_slot_ns`) |
| `round_ns` | a persistent warp's round beyond its load's latency | `inflight/read/w:4/ilp:1/block:32/bpsm:1/grid:persistent` (`read/f32/ilp:1/grid:persistent`) |
| `grid_round_ns`, `async_ns`, `big_slot_ns` | ... a grid's of 6 KiB per SM; what cp.async adds; `load_slot_ns` of 1,024-thread blocks (`model_rounds`) | `model/inflight/read_async|read/w:4/ilp:1/block:256/bpsm:6/grid:persistent`; `model/inflight/read/w:4/ilp:1/block:1024/bpsm:1/grid:full` |
| `line_ns` | each further 128-B line a warp's round waits for | `latency/chase/ws:<largest>/lanes:32` against `lanes:1`, over 31 lines |
| `l2_gbs` | the L2's rate to the SMs (hot reads of the L2's largest probe, the set nearest 20 MiB) | `model/read/ws:20971520` (`cache/read/ws:S`, the largest within half the L2) |
| `l2_stores_per_ns` | lone stores the L2 takes per ns, one line each | `model/matrix/cols/w:2000/pad:0`: the column walk's GB/s over its 8 B per store (without it the bound takes 128 B of `l2_gbs` per store) |
| `scatter_read`, `scatter_write` | extra DRAM time of loads (stores) one per page | `gather/random` (`stride/f32/read/s:1024`), `scatter/random` (`stride/f32/write/s:1024`) |
| `pages` | the share of that time a step pays (`model_pages`) | `model/stride/f32/{read,write}/s:*`: strided f32 reads, writes at steps of 40 B to 6 KiB |
| `streams` | what DRAM delivers to a persistent grid's streams of reads, writes, copies; of one line per request and of more (`model_streams`) | `inflight/{read,write,copy}/{w:16/ilp:1,w:4/ilp:4}/block:256/bpsm:8/grid:persistent` (`{read,write,copy}/{f32x4/ilp:1,f32/ilp:4}/grid:persistent`) |
| `host_read_gbs`, `host_write_gbs` | the host link's rate, each way | `ref/memcpy_h2d/mem:pinned`, `ref/memcpy_d2h/mem:pinned` |
| `peer_ce_gbs` | the copy engine's pushes to the peer GPU (bytes read + written) | `ref/memcpy_peer/dir:push` |
| `peer_link_gbs` | the peer link's rate each way (NVML's links × their speed) | the context key `gpu_peer_link_gbs` |
| `trees` | a reduce rung's tree in shared memory: the SM's trees' rate, one tree's time (`model_trees`) | `model/reduce/f32/<rung>/loads:none/bpsm:{8,1}`: the trees alone, no load |
| `migrations` | managed pages moved to the GPU by the driver's prefetch, by faults, by faults with read-mostly advice: time against bytes, a line (`model_managed`) | `model/managed/read/{prefetch:gpu,advice:read_mostly,pages:host}/bytes:*`: each at half and twice the family's size |
| `tiles` | the tiled transposes: DRAM's rate for tiles written to their transposed places, a 32 × 32 block's slot, the padded exchange's time (`model_tiles`) | `model/transpose/f32/{moved/block:{32x8,32x32},exchange/pad:1,stores/block:32x32}` |
| `l2_partition` | the L2 from each SM: near (lines it read itself), and on a first read of lines the lowest SM read, for the SMs that find them as near and those that find them farther (`model_chases`) | `model/l2_partition/steps:512` |
| `sm_clock_ghz` | the SM clock, for the L1's lines per cycle | `model/chase/*`: the median `sm_clock_mhz` (`latency/chase/*`) |
| `bulk_chunk_ns` | a bulk copy's turnaround in its block (wait, check, re-issue), each chunk in turn | `model/bulk/read/bytes:2048/stages:8/bpsm:1/warps:4`: a block's chunk over its rate (eight stages: more than the latency needs) |
| `bulk_write_ns` | a bulk write's turnaround in its block (the warp fills the chunk, lane 0 sends it), a line in the chunk's bytes (`model_bulk`) | `model/bulk/write/bytes:2048/stages:8/bpsm:1`, `…/bytes:8192/…`: each block's chunk over its rate |
| `bulk_latency` | one bulk copy at a time: ns per copy against its bytes, a line (`model_bulk`) | `model/bulk/latency/bytes:1536`, `…:49152` |
| `store_part_ns` | DRAM's extra time per byte of stores off their sectors, per extra sector (`model_stores`) | `model/offset/f32/copy/off:3/ilp:4`: the offset copy 12 B off, four per thread |
| `mix` | DRAM's time for a mix of reads and writes off the straight line; a copy's, by its depth (`model_mix`) | `model/mix/f32/reads:{5,7,12}`, `model/mix/f32/reads:8/writes:2`, `model/copy/{f32,f64,f32x4}/ilp:16` |
| `instruction_probes` | a block's slot against its warps' instructions (`model_instructions`) | `model/instructions/f32/extra:{4,16,32,64}`: the f32 copy with more instructions |
| `row_probe` | a block over rows far apart: how much longer it holds its slot (`model_bounds`) | `model/matrix/rows/w:2000/pad:0`: the row-major matrix copy 2,000 wide |
| `drain_probe` | the SM's drain: the rate at which it takes in its warps' loads (`model_latency`) | `model/inflight/read/w:4/ilp:2/block:256/bpsm:4/grid:persistent` (`read/f32/ilp:2/grid:persistent`, `inflight/read/w:4/ilp:4/block:256/bpsm:2/grid:persistent`) |
| `deep_drain_probe` | ... of four loads per thread | `model/inflight/read/w:4/ilp:4/block:256/bpsm:3/grid:persistent` |
| `translations_per_ns` | loads per ns that each need an address translation of their own (`model_translation`) | `model/translation/lines:131072/span:2147483648`: L2 hits scattered over 2 GiB |
| `tlb_reach_bytes` | the span of 2-MiB pages the SM's TLB reaches (`model_translation`) | `tlb/chase/step:2097152/span:*`: the largest span as fast as the smallest |

`params_from(rows, without=FAMILY)` builds them from one file's medians with a family left out:
a parameter whose source is that family is then missing, and every prediction that needs it
says so (NaN), never a number taken from another benchmark in its place.
"""

from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from gmbtools.analysis import (model_bulk, model_chases, model_instructions, model_latency,
                               model_local, model_managed, model_mix, model_onchip, model_pages,
                               model_rounds, model_stores, model_streams, model_tiles,
                               model_translation, model_trees)
from gmbtools.analysis.littles_law import LoadedCurve, loaded_curve

# Threads an SM holds, by compute capability (the CUDA programming guide's table of
# compute-capability limits); an architecture not listed is assumed to hold 2048.
THREADS_PER_SM = {7.5: 1024, 8.0: 2048, 8.6: 1536, 8.7: 2048, 8.9: 1536, 9.0: 2048,
                  10.0: 2048, 10.3: 2048, 12.0: 1536}
MODEL_BLOCK = 256  # the block size of every streaming family (kernels/*.cuh: k...Block)

SOURCES = {
    "read_curve": "latency/loaded/load:read",
    "copy_curve": "latency/loaded/load:copy",
    "write_gbs": "ref/memset",
    "copy_gbs": "ref/memcpy_d2d",
    "host_read_gbs": "ref/memcpy_h2d/mem:pinned",
    "host_write_gbs": "ref/memcpy_d2h/mem:pinned",
    "peer_ce_gbs": "ref/memcpy_peer/dir:push",
    "block_rate": ("inflight/blocks/block:256/bpsm:8", "write/f32/ilp:1/grid:full"),
    "block_slot_ns": ("inflight/blocks/block:256/bpsm:1", "model/blocks/block:128/bpsm:1",
                      "read/f32/ilp:1/grid:full"),
    "load_slot_ns": ("read/f32/ilp:1/grid:full",),
    "l2_gbs": "cache/read/ws:",
    "l2_stores_per_ns": "model/matrix/cols/w:2000/pad:0",  # a copy: 8 B per store (4 + 4)
    "round_ns": ("inflight/read/w:4/ilp:1/block:32/bpsm:1/grid:persistent",
                 "read/f32/ilp:1/grid:persistent"),
    "line_ns": ("latency/chase/ws:{}/lanes:32", "latency/chase/ws:{}/lanes:1"),
    "chases": "model/chase",
    "bulk_chunk_ns": "model/bulk/read/bytes:2048/stages:8/bpsm:1/warps:4",
    "trees": "model/reduce/f32/*/loads:none/bpsm:*",
    "sm_clock_ghz": ("model/chase/", "latency/chase/"),
}
ROUND_BYTES = {SOURCES["round_ns"][0]: 32 * 4, SOURCES["round_ns"][1]: 4}  # per warp, per thread


@dataclass
class Params:
    """What the model knows of one GPU in one run (None: the run did not measure it)."""

    sms: int | None = None
    cc: float | None = None
    l2_bytes: float | None = None
    l1_bytes: float | None = None  # the SM's L1 and shared memory
    read_gbs: float | None = None
    write_gbs: float | None = None
    copy_gbs: float | None = None
    read_curve: LoadedCurve | None = None
    copy_curve: LoadedCurve | None = None
    mix_curve: LoadedCurve | None = None  # a fifth of the streams' bytes written
    block_rate: float | None = None  # blocks per ns
    block_slot_ns: float | None = None
    load_slot_ns: float | None = None  # ... a block that loads and stores
    l2_gbs: float | None = None
    l2_stores_per_ns: float | None = None  # lone stores into the L2, one line each
    scatter_read: float | None = None  # extra ns per DRAM byte of loads one per DRAM page
    scatter_write: float | None = None  # ... of stores one per page (each a read-modify-write)
    pages: dict | None = None  # the share of those a step pays, by side (model_pages)
    streams: model_streams.StreamRates | None = None  # a persistent grid's, by width
    host_read_gbs: float | None = None  # the copy engine over the host link, to the GPU
    host_write_gbs: float | None = None  # ... from it
    peer_ce_gbs: float | None = None  # the copy engine's pushes to the peer (read + written)
    peer_link_gbs: float | None = None  # the peer link's rate each way (NVML)
    round_ns: float | None = None  # a persistent warp's round beyond the load's latency
    grid_round_ns: float | None = None  # ... of a grid of 6 KiB per SM, one load per thread
    async_ns: float | None = None  # ... that staging it by cp.async adds (model_rounds)
    big_slot_ns: float | None = None  # load_slot_ns of blocks of 1,024 threads
    line_ns: float | None = None  # each further 128-B line one warp's round waits for
    bulk_chunk_ns: float | None = None  # a block's turnaround of one bulk copy
    bulk_latency: dict | None = None  # bytes -> ns per copy, one at a time (model_bulk)
    bulk_write_ns: dict | None = None  # chunk bytes -> a bulk write's turnaround (model_bulk)
    instruction_probes: tuple | None = None  # (instructions, GB/s, DRAM bytes) per probe
    drain_probe: tuple | None = None  # (word, loads, threads, GB/s) of a persistent read
    deep_drain_probe: tuple | None = None  # ... of four loads per thread
    row_probe: tuple | None = None  # a block over rows far apart (model_instructions)
    # terms model_bounds found by solving the model for their probes, with what they came from
    solved: dict = field(default_factory=dict, compare=False, repr=False)
    store_part_ns: float | None = None  # stores off their sectors (model_stores)
    mix: model_mix.MixTerms | None = None  # mixes off the straight line, deep copies
    chases: model_chases.ChaseProbes | None = None  # the calibration chases (model/chase/*)
    onchip: model_onchip.OnChipProbes | None = None  # hot reads and constant loads (model/*)
    trees: dict | None = None  # (reduce rung, blocks per SM) -> a tree probe's round (model_trees)
    tiles: model_tiles.TileProbes | None = None  # the tiled transposes' probes (model_tiles)
    migrations: dict | None = None  # managed pages' migrations: a line each (model_managed)
    sm_clock_ghz: float | None = None  # the SM clock the chases measured
    l2_partition: model_chases.L2Partition | None = None  # the L2 near and across its halves
    local_lines_per_ns: float | None = None  # a warp's local stores the L2 takes (model_local)
    translations_per_ns: float | None = None  # loads each translated (model_translation)
    tlb_reach_bytes: float | None = None  # the span of pages the SM's TLB reaches
    sources: dict = field(default_factory=dict)  # parameter -> the benchmark it came from

    @property
    def threads_per_sm(self) -> int:
        return THREADS_PER_SM.get(self.cc, 2048) if self.cc is not None else 2048

    def dram_ns_per_byte(self, read_bytes: float, write_bytes: float, read_scatter: float = 0.0,
                         write_scatter: float = 0.0, persistent: bool = False,
                         word_bytes: float | None = None) -> float | None:
        """DRAM time per byte of a mix of reads and writes: each at its own rate, plus the
        turnaround that makes an equal mix run at the copy's rate (never negative), plus the
        page term: `read_scatter` and `write_scatter` (0 to 1) are how far the accesses are from
        streaming (0) to one per DRAM page (1), each costing its share of the scattered
        accesses' extra time; a mix pays its factor (`model_mix`). A persistent grid streams
        at the rates of its own kind, of its words' width (`model_streams`), with no factor."""
        if not (self.read_gbs and self.write_gbs and self.copy_gbs):
            return None
        read_gbs, write_gbs, copy_gbs = self.read_gbs, self.write_gbs, self.copy_gbs
        if persistent and self.streams is not None:
            read_gbs = self.streams.rate("read", word_bytes) or read_gbs
            write_gbs = self.streams.rate("write", word_bytes) or write_gbs
            copy_gbs = self.streams.rate("copy", word_bytes) or copy_gbs
        turn = max(0.0, 2 / copy_gbs - 1 / read_gbs - 1 / write_gbs)
        total = read_bytes + write_bytes
        if total <= 0:
            return None
        ns = (read_bytes / read_gbs + write_bytes / write_gbs
              + turn * min(read_bytes, write_bytes))
        if self.mix is not None and not persistent:  # off the straight line (model_mix)
            ns *= self.mix.mix(write_bytes / total)
        if read_scatter and self.scatter_read is None or write_scatter and self.scatter_write is None:
            return None
        ns += read_bytes * read_scatter * (self.scatter_read or 0.0)
        ns += write_bytes * write_scatter * (self.scatter_write or 0.0)
        return ns / total


def params_from(rows: pd.DataFrame, without: str | None = None) -> Params:
    """The parameters of one file's medians (`frame.medians_frame` rows of one file), leaving
    out every benchmark of the family `without`."""
    if without is not None:
        rows = rows.loc[rows["family"] != without]
    ok = rows.loc[rows["error"].isin(["None", "nan", ""]) | rows["error"].isna()]
    p = Params(sms=_context(rows, "gpu_sms", int), cc=_context(rows, "gpu_cc", float),
               l2_bytes=_context(rows, "gpu_l2_bytes", float),
               l1_bytes=_context(rows, "gpu_l1_shared_per_sm_bytes", float))
    by_name = dict(zip(ok["name"], ok.index))

    def value(name: str, column: str = "gbs") -> float | None:
        index = by_name.get(name)
        if index is None or column not in ok.columns:
            return None
        v = ok.at[index, column]
        return float(v) if pd.notna(v) else None

    def take(key: str, number: float | None, source: str) -> None:
        if number is not None:
            setattr(p, key, number)
            p.sources[key] = source

    for load, key in (("read", "read_curve"), ("copy", "copy_curve")):
        curve = loaded_curve(ok, load) if "load" in ok.columns else None
        # the latency family's loads and the calibration's, or the calibration's alone
        measured = ((ok["family"] == "latency") & (ok["variant"] == "loaded")).any()
        source = SOURCES[key] if measured else f"model/loaded/load:{load}"
        if curve is not None and len(curve.gbs) > 1:
            take(key, curve, source + "/*")
    take("mix_curve", model_latency.mix_curve_from(ok, p.read_curve), model_latency.MIX_SOURCE)
    if p.read_curve is not None:
        take("read_gbs", p.read_curve.most_gbs, p.sources["read_curve"])
    take("write_gbs", value(SOURCES["write_gbs"]), SOURCES["write_gbs"])
    for key in ("copy_gbs", "host_read_gbs", "host_write_gbs", "peer_ce_gbs"):
        take(key, value(SOURCES[key]), SOURCES[key])
    take("peer_link_gbs", _context(rows, "gpu_peer_link_gbs", float), "gpu_peer_link_gbs")
    rate = value(SOURCES["block_rate"][0], "blocks_per_us")
    if rate is not None:
        take("block_rate", rate / 1e3, SOURCES["block_rate"][0])
    else:  # blocks of one f32 store per thread: 1 KiB each, nothing to wait for
        gbs = value(SOURCES["block_rate"][1])
        take("block_rate", None if gbs is None else gbs / (MODEL_BLOCK * 4), SOURCES["block_rate"][1])
    for name in SOURCES["block_slot_ns"][:2]:  # empty blocks: the family's, the calibration's
        if p.block_slot_ns is None:
            take("block_slot_ns", value(name, "block_slot_ns"), name)
    streams = model_streams.rates_from(value)
    if streams is not None:  # a source each, so each source's family is left out in its turn
        p.streams = streams
        p.sources.update({f"streams/{op}/{width}": name
                          for (op, width), name in streams.names.items()})
    # before the page terms, which are fitted against the line with the mix's factor on it
    take("mix", model_mix.terms_from(ok, p), model_mix.SOURCES)
    model_pages.scatter_terms(p, ok, take)
    take("pages", model_pages.curves_from(p, ok), model_pages.PROBES.format("*") + "*")
    take("chases", model_chases.probes_from(ok, p.l1_bytes, p.l2_bytes), SOURCES["chases"] + "/*")
    take("l2_partition", model_chases.partition_from(ok), model_chases.PARTITION + "*")
    take("onchip", model_onchip.probes_from(ok, p.l1_bytes, p.l2_bytes), "model/{read,constant}/*")
    model_rounds.take_terms(p, value, take, SOURCES, ROUND_BYTES)
    if p.block_slot_ns is None and p.load_slot_ns is not None:
        take("block_slot_ns", p.load_slot_ns, p.sources["load_slot_ns"])
    if p.load_slot_ns is None and p.block_slot_ns is not None:
        take("load_slot_ns", p.block_slot_ns, p.sources["block_slot_ns"])
    _line_term(p, ok, take)
    take("trees", model_trees.tree_rounds(ok, p.sms) or None, SOURCES["trees"])
    take("tiles", model_tiles.probes_from(value, p.sms, p.threads_per_sm), model_tiles.PROBE + "*")
    take("migrations", model_managed.lines_from(ok), model_managed.PROBES + "*")
    take("local_lines_per_ns", model_local.store_rate_from(ok), model_local.PROBE)
    take("translations_per_ns", model_translation.loads_per_ns(value), model_translation.PROBE)
    take("tlb_reach_bytes", model_translation.reach_bytes(ok), model_translation.TLB_CHASES + "*")
    clock = model_chases.sm_clock_ghz(ok, SOURCES["sm_clock_ghz"])
    if clock:
        take("sm_clock_ghz", clock[1], clock[0])
    model_bulk.take_terms(p.sms, ok, value, take, SOURCES["bulk_chunk_ns"])
    take("instruction_probes", model_instructions.probes_from(ok), model_instructions.PROBES + "*")
    take("row_probe", model_instructions.row_probe_from(ok), model_instructions.ROW_PROBE)
    take("store_part_ns", model_stores.store_part_ns(ok, p), model_stores.PROBE)
    for key, sources in (("drain_probe", model_latency.DRAIN_SOURCES),
                         ("deep_drain_probe", model_latency.DEEP_DRAIN)):
        drain = model_latency.drain_from(value, sources)
        if drain is not None:
            take(key, drain[1], drain[0])
    l2 = model_onchip.l2_read(ok, p.l2_bytes)
    if p.onchip is not None and "l2" in p.onchip.read_gbs:  # the calibration's, first
        l2 = p.onchip.names["l2"], p.onchip.read_gbs["l2"]
    if l2 is not None:
        take("l2_gbs", l2[1], l2[0])
    stores = value(SOURCES["l2_stores_per_ns"])
    take("l2_stores_per_ns", stores and stores / 8, SOURCES["l2_stores_per_ns"])
    return p


def _line_term(p: Params, rows: pd.DataFrame, take) -> None:
    """The wait for each further line of a warp's request: the idle chase of a warp's 32 lines
    at once against one thread's in DRAM, over the 31 more lines: the calibration chases, else
    the latency family's at its largest working set."""
    probes = p.chases
    if probes is not None and {("dram", 1), ("dram", 32)} <= set(probes.ns):
        take("line_ns", max(0.0, (probes.ns[("dram", 32)] - probes.ns[("dram", 1)]) / 31),
             probes.names[("dram", 32)])
        return
    chases = rows.loc[(rows["family"] == "latency") & (rows["variant"] == "chase")]
    if chases.empty or "ws" not in chases.columns:
        return
    ws = pd.to_numeric(chases["ws"], errors="coerce").max()
    one, warp = (chases.loc[chases["name"] == pattern.format(int(ws)), "latency_ns"]
                 for pattern in reversed(SOURCES["line_ns"]))
    if one.empty or warp.empty or not finite(float(one.iloc[0]), float(warp.iloc[0])):
        return
    take("line_ns", max(0.0, (float(warp.iloc[0]) - float(one.iloc[0])) / 31),
         SOURCES["line_ns"][0].format(int(ws)))


def _context(rows: pd.DataFrame, column: str, kind):
    values = pd.to_numeric(rows.get(column, pd.Series(dtype=float)), errors="coerce").dropna()
    return kind(values.iloc[0]) if not values.empty else None


def finite(*values) -> bool:
    return all(v is not None and np.isfinite(v) and v > 0 for v in values)
