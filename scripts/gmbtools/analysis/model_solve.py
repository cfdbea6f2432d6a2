"""Terms the prediction model finds by solving itself for their probes (`model_bounds`): the
time with which a bound gives a probe's GB/s, and the cache that keeps each such term with the
parameters it was found from."""

import dataclasses


def time_for(gbs: float | None, bound) -> float | None:
    """The time (ns) with which `bound(ns)` (GB/s, falling as the time grows) gives a probe's
    `gbs`, by bisection; 0 where the bound with none is already at or below it, None without
    the probe or a bound (nan)."""
    if not gbs or not bound(0.0) == bound(0.0):
        return None
    if bound(0.0) <= gbs:
        return 0.0
    lo, hi = 0.0, 20000.0
    if not bound(hi) < gbs:
        return None
    for _ in range(60):
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if bound(mid) > gbs else (lo, mid)
    return lo


def solved(p, key: str, find):
    """A term found by solving the model for its probe (`find()`), kept on `p` with the
    parameters it was found from (the very objects: `p` a `model_params.Params`) and found
    again when any has changed."""
    inputs = tuple(getattr(p, f.name) for f in dataclasses.fields(p) if f.name != "solved")
    cached = p.solved.get(key)
    if cached is None or len(cached[0]) != len(inputs) or \
            any(a is not b for a, b in zip(cached[0], inputs)):
        cached = (inputs, find())
        p.solved[key] = cached
    return cached[1]
