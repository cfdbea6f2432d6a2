"""What DRAM gives a persistent grid's streams (`Params.streams`). A persistent grid's resident
blocks loop over the array, each warp a request per round at the grid's stride, and DRAM moves
less for it than for a grid of one block per tile; less again when each warp's request is one
128-B line (4-B words) than when it is several lines in a row (8- and 16-B words). The H100's
rates: docs/model.md.

Each rate comes from the inflight family's persistent streams of 8 blocks of 256 threads per SM
(one 16-B word per thread: wide; four 4-B words: narrow), else from the coalesced family's
twins; a rate the run lacks falls back to the wide one of the same kind, then to the full
grid's (`model_params.Params.dram_ns_per_byte`).
"""

from dataclasses import dataclass, field

INFLIGHT = "inflight/{op}/w:{w}/ilp:{ilp}/block:256/bpsm:8/grid:persistent"
SOURCES = {
    (op, width): (INFLIGHT.format(op=op, w=w, ilp=ilp), f"{op}/{word}/ilp:{ilp}/grid:persistent")
    for op in ("read", "write", "copy")
    for width, w, ilp, word in (("wide", 16, 1, "f32x4"), ("narrow", 4, 4, "f32"))
}
NARROW_WORD = 4.0  # bytes per lane: a warp's request is one 128-B line


@dataclass
class StreamRates:
    """GB/s by (op, "wide" | "narrow"), and the benchmark each came from."""

    gbs: dict = field(default_factory=dict)
    names: dict = field(default_factory=dict)

    def rate(self, op: str, word_bytes: float | None = None) -> float | None:
        """The rate of `op`'s stream of words of `word_bytes` (None: wide), or None."""
        narrow = word_bytes is not None and word_bytes <= NARROW_WORD
        found = self.gbs.get((op, "narrow")) if narrow else None
        return found or self.gbs.get((op, "wide"))


def rates_from(value) -> StreamRates | None:
    """The rates `value(name)` (GB/s or None) gives: the first of each pair of sources."""
    rates = StreamRates()
    for key, names in SOURCES.items():
        for name in names:
            gbs = value(name)
            if gbs:
                rates.gbs[key], rates.names[key] = gbs, name
                break
    return rates if rates.gbs else None
