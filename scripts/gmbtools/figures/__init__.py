"""The figures of `gmb plot`, one function each, in a module per figure kind.

Each takes `frame.medians_frame` (one row per flavor and benchmark) and returns a `Drawn`: the
figure, the exact values it shows (a DataFrame, so tests can compare them with the input) and
one sentence on what it shows; or raises `Skip` when the run has no benchmark of its family.
Values are medians; an errored benchmark is marked as such, never drawn as a number.

sweeps: stride, offset. flavor_bars: flavors, reuse, readonly. memory_paths: paths. layouts:
aos_soa, word_ilp. caches: working_set. latencies: latency, inflight. ladder_bars:
transpose_ladder, reduce_ladder. common: what several of them share. `plot.FIGURES` looks each
function up here (`figures.<name>`); no module is named after a function it re-exports, so
`gmbtools.figures.<name>` is always the function.
"""

from .caches import working_set
from .flavor_bars import flavors, readonly, reuse
from .ladder_bars import reduce_ladder, transpose_ladder
from .latencies import inflight, latency
from .layouts import aos_soa, word_ilp
from .memory_paths import paths
from .sweeps import _spaced, offset, stride

__all__ = ["aos_soa", "flavors", "inflight", "latency", "offset", "paths", "readonly",
           "reduce_ladder", "reuse", "stride", "transpose_ladder", "word_ilp", "working_set"]
