"""A bulk copy's turnaround in its block (`Params.bulk_chunk_ns`): the block waits for each chunk
in turn, checks it (a read) or sends it on (a copy), syncs and issues the next copy into the
freed stage, so every chunk also costs the block this time beside the latency. From the
calibration's bulk read (`model/bulk/read/bytes:2048/stages:8/bpsm:1/warps:4`): its round (the
SMs' chunks in flight over its rate) less the loaded latency at its rate and a persistent warp's
round (`Params.round_ns`), over the chunks a block handles per round (docs/model.md)."""

import re


def bulk_chunk_ns(p, gbs: float | None, name: str) -> float | None:
    """The turnaround from the probe `name`'s GB/s (None where the run lacks what it needs); `p`
    the model_params.Params built so far (the SMs, the read curve, a persistent warp's round)."""
    shape = dict(re.findall(r"(bytes|stages|bpsm):(\d+)", name))
    if not gbs or p.read_curve is None or not p.sms or len(shape) < 3:
        return None
    size, stages, bpsm = (float(shape[k]) for k in ("bytes", "stages", "bpsm"))
    round_ns = p.sms * bpsm * size * stages / gbs
    return max(0.0, (round_ns - p.read_curve.latency(gbs) - (p.round_ns or 0.0)) / stages)
