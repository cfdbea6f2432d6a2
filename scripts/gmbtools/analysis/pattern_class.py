"""What kind of access a pattern is, from the shape counters the binary measures on its index
table (lane step, distinct elements per warp instruction, 128-B alignment of its runs) and the
model's sectors per request: broadcast, coalesced, misaligned, reversed, strided, permuted,
scattered; the built-in benchmark it behaves like, and a fix where one is known."""

import math

LINE_BYTES, SECTOR_BYTES, WARP = 128, 32, 32
# Words the built-in read/write/copy families measure (the others have no coalesced twin).
BUILTIN_WORDS = ("f32", "f64", "f32x2", "f32x4")
BUILTIN_ILPS = (1, 2, 4, 8)  # ... and words per thread (read/f32/ilp:4/grid:full)
STRIDES = (1, 2, 3, 4, 8, 16, 32, 64, 128, 256, 512, 1024)  # stride/f32/read/s:S
_TOLERANCE = 1e-6
# A pattern without one lane step whose DRAM efficiency is at least this uses most of each
# granule it brings (a permutation within blocks), below it scattered (pattern_model: the same)
BLOCKED = 0.5

SUGGESTIONS = {
    "aos": "an array of structures? load whole structures through shared memory (aos_staged/) "
           "or store a structure of arrays (soa/)",
    "transpose": "a transpose through shared memory (the transpose/ ladder's tiled rung)",
    # The expression gives each slot k its element: one without k reads the same one K times.
    "wider": "wider words (--word f32x4) or more elements per thread (--k 4, with an index that "
             "uses k, e.g. (i/32)*128+k*32+lane) keep more bytes in flight",
    "sort": "sort or bucket the indices so a warp's lanes fall in few 128-B segments",
    "align": "align the start (pad the array or shift the index) to 128 B",
}


def pattern_sectors(counters: dict[str, float], op: str) -> float | None:
    """Sectors per request of the side that follows the expression: the loads of read, copy and
    gather, the stores of write and scatter (whose other side is coalesced)."""
    key = "model_st_sectors_per_req" if op in ("write", "scatter") else "model_ld_sectors_per_req"
    return counters.get(key, counters.get("model_sectors_per_req"))


def coalesced_sectors(word_bytes: int) -> int:
    """The fewest sectors a warp instruction can need: 32 lanes' words in whole sectors."""
    return math.ceil(WARP * word_bytes / SECTOR_BYTES)


def twin_for_op(gather_twin: str | None, op: str) -> str | None:
    """The built-in that does to its memory what `op` does, from the one a gather matches.
    offset/, stride/, warp/ and gather/ read through their map and write coalesced (a gather);
    their write and copy variants match scatter and copy; a pure read or write has none."""
    if gather_twin is None or gather_twin.split("/")[0] in ("read", "write", "copy"):
        return gather_twin  # a coalesced twin, chosen for the op already
    if op == "gather":
        return gather_twin
    siblings = {"scatter": (("offset/f32/read/", "offset/f32/write/"),
                            ("stride/f32/read/", "stride/f32/write/"),
                            ("gather/random", "scatter/random")),
                "copy": (("offset/f32/read/", "offset/f32/copy/"),
                         ("stride/f32/read/", "stride/f32/both/"))}
    for prefix, sibling in siblings.get(op, ()):
        if gather_twin.startswith(prefix):
            return sibling + gather_twin[len(prefix):]
    return None


def classify(counters: dict[str, float], op: str, word: str, word_bytes: int | None,
             sectors: float | None, k: int | None = 1) -> tuple[str, str | None, str]:
    """(class, the built-in benchmark it behaves like or None, one sentence on the shape); `k`:
    the pattern's elements per thread (a coalesced one's twin keeps as many in flight)."""
    kind, twin, sentence = _classify(counters, op, word, word_bytes, sectors, k)
    return kind, twin_for_op(twin, op), sentence


def _classify(counters: dict[str, float], op: str, word: str, word_bytes: int | None,
              sectors: float | None, k: int | None) -> tuple[str, str | None, str]:
    distinct = counters.get("pattern_distinct_per_req")
    step = counters.get("pattern_lane_step")
    aligned = counters.get("pattern_aligned_fraction")
    w = word_bytes or 0
    if (distinct is not None and distinct <= 1 + 0.05) or (step is not None and step == 0):
        return ("broadcast", "warp/broadcast",
                "broadcast: the whole warp takes one element, 1 sector per request")
    if step is not None and abs(abs(step) - 1) < _TOLERANCE:
        twin = coalesced_twin(op, word, k)
        if step < 0:
            return ("reversed", twin, "reversed: consecutive lanes take consecutive elements "
                    "downwards, the same sectors as a coalesced access in the other order")
        if aligned is not None and aligned < 1 - _TOLERANCE:
            fewest = coalesced_sectors(w)
            return ("misaligned", "offset/f32/read/off:1" if word == "f32" else None,
                    f"misaligned runs: consecutive lanes take consecutive elements, but "
                    f"{aligned:.0%} of the runs start on a 128-B boundary; a run that "
                    f"straddles one costs a sector more ({fewest + 1} instead of {fewest})")
        return ("coalesced", twin, "coalesced: consecutive lanes take consecutive elements in "
                "128-B aligned runs, the fewest sectors a warp can need")
    if step is not None and abs(step) > 1:
        s = round(abs(step))
        apart = s * w
        twin = f"stride/f32/read/s:{s}" if w == 4 and s in STRIDES else None
        if not apart:
            return ("strided", twin, f"strided: lanes {s} elements apart")
        efficiency = local_efficiency(counters)
        if apart >= SECTOR_BYTES and efficiency is not None and efficiency >= 0.9 and w == 4:
            # Nearby warps take the rest of each sector: DRAM moves every line once; what is
            # left is the sectors each request moves between the L2 and the SM (a transpose).
            return ("transposed", "warp/permute_across",
                    f"transposed: lanes {s} elements ({apart} B) apart, every lane its own "
                    f"32-B sector, but nearby warps use the rest of each sector (DRAM "
                    f"efficiency {efficiency:.2g}): the cost is {sectors or 32:.3g} sectors per "
                    f"request between the L2 and the SM")
        how = ("every lane needs its own 32-B sector" if apart >= SECTOR_BYTES
               else f"a 32-B sector serves {SECTOR_BYTES // apart} lanes")
        return ("strided", twin, f"strided: lanes {s} elements ({apart} B) apart: {how}")
    # The lane step varies: a permutation when it costs no more sectors than a coalesced access.
    if sectors is not None and w and sectors <= coalesced_sectors(w) + _TOLERANCE:
        return ("permuted", "warp/permute_segment", "permuted within segments: the lanes "
                "shuffle the elements of aligned runs, the same sectors as coalesced")
    if sectors is None or not w:
        return ("unknown", None, "no shape counters to classify it by")
    efficiency = local_efficiency(counters)
    if efficiency is not None and efficiency >= BLOCKED:
        # Nearby warps take the rest of each sector (a permutation within blocks): DRAM
        # streams every line once; the cost is the lines each request touches, as a warp
        # whose lanes take a line each (warp/permute_across), not DRAM's pages.
        return ("permuted in blocks", "warp/permute_across", f"permuted in blocks: "
                f"{sectors:.3g} sectors per request, but nearby warps use the rest of each "
                f"sector (DRAM efficiency {efficiency:.2g}): the cost is the lines each "
                f"request touches, not DRAM's pages")
    return ("scattered", "gather/random", f"scattered: {sectors:.3g} sectors per request "
            f"where a coalesced access needs {coalesced_sectors(w)}")


def local_efficiency(counters: dict, efficiency: float | None = None) -> float | None:
    """The DRAM efficiency of the granules the loads bring as warps near each other use them
    (the traffic model's windows of 64 warps: `pattern_window_dram_bytes`), where the run
    reports it: `efficiency` (`model_efficiency` unless given) is over the whole launch, so a
    set re-read from the L2 far apart counts there as used, scattered or not; else
    `efficiency`."""
    if efficiency is None:
        efficiency = counters.get("model_efficiency")
    window, dram = counters.get("pattern_window_dram_bytes"), counters.get("model_dram_bytes")
    if efficiency is not None and window and dram and math.isfinite(window) and window > 0:
        return efficiency * dram / window
    return efficiency


def suggestion(kind: str | None, step: float | None, word: str, word_bytes: int | None,
               k: int | None) -> str | None:
    """The known fix for this class, if there is one."""
    if kind == "transposed":
        return SUGGESTIONS["transpose"]
    if kind == "strided" and step is not None and word_bytes:
        if abs(step) * word_bytes >= LINE_BYTES:  # lanes a line or more apart: transpose-like
            return SUGGESTIONS["transpose"]
        return SUGGESTIONS["aos"] if word == "f32" else None
    if kind == "coalesced" and word == "f32" and k == 1:
        return SUGGESTIONS["wider"]
    return {"scattered": SUGGESTIONS["sort"], "misaligned": SUGGESTIONS["align"]}.get(kind or "")


def coalesced_twin(op: str, word: str, k: int | None = 1) -> str | None:
    """The coalesced built-in of the same operation, word and words per thread (read, write or
    copy on a block per tile), if the built-in families have the word and that many."""
    if word not in BUILTIN_WORDS or (k or 1) not in BUILTIN_ILPS:
        return None
    family = {"read": "read", "write": "write"}.get(op, "copy")
    return f"{family}/{word}/ilp:{k or 1}/grid:full"
