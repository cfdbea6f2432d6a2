"""A bulk copy's turnaround in its block (`Params.bulk_chunk_ns`): the block waits for each chunk
in turn, checks it (a read) or sends it on (a copy), syncs and issues the next copy into the
freed stage. So a block turns around at most one chunk per this time however many copies it
keeps in flight, and each stage is busy for the copy's latency and this time before it is
filled again (model_bounds: the `chunk turnaround` bound and Little's law). From the
calibration's bulk read (`model/bulk/read/bytes:2048/stages:8/bpsm:1/warps:4`), whose eight
stages are more than the latency needs: a block's chunks over its rate (docs/model.md)."""

import re


def bulk_chunk_ns(sms: int | None, gbs: float | None, name: str) -> float | None:
    """The turnaround from the probe `name`'s GB/s on `sms` SMs (None without them)."""
    shape = dict(re.findall(r"(bytes|bpsm):(\d+)", name))
    if not gbs or not sms or len(shape) < 2:
        return None
    return sms * float(shape["bpsm"]) * float(shape["bytes"]) / gbs
