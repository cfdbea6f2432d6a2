"""The figures of `gmb plot`, one function each, in a module per figure kind.

Each takes `frame.medians_frame` (one row per flavor and benchmark) and returns a `Drawn`: the
figure, the exact values it shows (a DataFrame, so tests can compare them with the input) and
one sentence on what it shows; or raises `Skip` when the run has no benchmark of its family.
Values are medians; an errored benchmark is marked as such, never drawn as a number.

sweeps: stride, offset. flavor_bars: flavors, reuse, readonly. memory_paths: paths. layouts:
aos_soa, word_ilp. caches: working_set. latencies: latency, inflight. ladder_bars:
transpose_ladder, reduce_ladder. model_fit: model. link_sweep: peer_stride. common: what several of them share. `plot.FIGURES` looks each
function up here (`figures.<name>`); no module is named after a function it re-exports, so
`gmbtools.figures.<name>` is always the function.
"""

from gmbtools.present.figures.caches import working_set
from gmbtools.present.figures.flavor_bars import flavors, readonly, reuse
from gmbtools.present.figures.ladder_bars import reduce_ladder, transpose_ladder
from gmbtools.present.figures.latencies import inflight, latency
from gmbtools.present.figures.layouts import aos_soa, word_ilp
from gmbtools.present.figures.link_sweep import peer_stride
from gmbtools.present.figures.memory_paths import paths
from gmbtools.present.figures.model_fit import model
from gmbtools.present.figures.sweeps import _spaced, offset, stride

__all__ = ["aos_soa", "flavors", "inflight", "latency", "model", "offset", "paths", "peer_stride", "readonly",
           "reduce_ladder", "reuse", "stride", "transpose_ladder", "word_ilp", "working_set"]
