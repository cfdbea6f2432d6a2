"""The figures `gmb plot` draws, in order, with their headings: the one list that plot.py draws
from, `gmb plot --help` names and docs/usage.md's table follows (test_figures.py keeps them
alike). Standard library only: the CLI imports it without pandas."""

FIGURES = (
    ("stride", "Bandwidth vs stride"),
    ("offset", "Bandwidth vs offset"),
    ("flavors", "Load caching: default vs ca vs cg"),
    ("reuse", "Re-used lines: default vs ca vs cg"),
    ("readonly", "Read-only path: plain, __ldg, const __restrict__"),
    ("paths", "Paths to memory: constant, texture, host link"),
    ("aos_soa", "Array of structs vs struct of arrays"),
    ("word_ilp", "Word size × elements per thread"),
    ("working_set", "Working-set sweep"),
    ("latency", "Load latency and address translation"),
    ("inflight", "Bytes in flight and loaded latency"),
    ("ladder_transpose", "Optimization ladder: matrix transpose"),
    ("ladder_reduce", "Optimization ladder: sum reduction"),
    ("model", "The model: measured vs predicted"),
    ("peer_stride", "Strides over the peer link"),
)
STEMS = tuple(stem for stem, _ in FIGURES)
