"""A bulk copy's turnaround in its block (`Params.bulk_chunk_ns`): the block waits for each chunk
in turn, checks it (a read) or sends it on (a copy), syncs and issues the next copy into the
freed stage. So a block turns around at most one chunk per this time however many copies it
keeps in flight, and each stage is busy for the copy's latency and this time before it is
filled again (model_bounds: the `chunk turnaround` bound and Little's law). From the
calibration's bulk read (`model/bulk/read/bytes:2048/stages:8/bpsm:1/warps:4`), whose eight
stages are more than the latency needs: a block's chunks over its rate (docs/model.md).

One copy at a time (`bulk/latency/bytes:B`): a warp waits for each copy, then checks its bytes,
so each copy takes a fixed part (the copy's round trip) and a part per byte (the rest of the
copy and the check): the time per copy, bytes / GB/s, is linear in the bytes. The calibration's
copies of 1.5 and 48 KiB (`model/bulk/latency/bytes:1536|49152`) give the line
(`latency_probes`, `latency_gbs`).

A read's warps check each chunk, a share each, while the block turns it around: a chunk whose
share takes a warp longer than the turnaround holds the block that long, at the line's part per
byte (`turnaround_ns`; docs/model.md, one bulk copy at a time).

A write's warp fills each chunk in shared memory before lane 0 sends it, so its turnaround has
a part per byte too: the calibration's bulk writes of 2 and 8 KiB, eight stages each (more than
the latency needs: a block's chunk over its rate, as the read's), give a line in the chunk's
bytes (`write_probes`, `write_turnaround_ns`). `chunk_turnaround_ns` picks a shape's."""

import re

import pandas as pd

LATENCY_PROBES = "model/bulk/latency/bytes:"
WRITE_PROBES = "model/bulk/write/bytes:"


def bulk_chunk_ns(sms: int | None, gbs: float | None, name: str) -> float | None:
    """The turnaround from the probe `name`'s GB/s on `sms` SMs (None without them)."""
    shape = _shape(name)
    if not gbs or not sms or len(shape) < 2:
        return None
    return sms * shape["bpsm"] * shape["bytes"] / gbs


def _shape(name: str) -> dict:
    """The chunk's bytes and the blocks per SM a bulk probe's name gives (those it has)."""
    return {key: float(value) for key, value in re.findall(r"(bytes|bpsm):(\d+)", name)}


def _line(probes: dict) -> tuple[float, float]:
    """(ns at no bytes, ns per byte): the straight line through the smallest and the largest
    of two or more probes (bytes -> ns)."""
    (b0, t0), (b1, t1) = min(probes.items()), max(probes.items())
    per_byte = (t1 - t0) / (b1 - b0)
    return t0 - per_byte * b0, per_byte


def take_terms(sms: int | None, rows: pd.DataFrame, value, take, probe: str) -> None:
    """The bulk terms of one run's rows (`model_params.params_from`'s `value` and `take`): the
    read probe `probe`'s turnaround, the one-at-a-time line, the write probes' line."""
    take("bulk_chunk_ns", bulk_chunk_ns(sms, value(probe), probe), probe)
    take("bulk_latency", latency_probes(rows), LATENCY_PROBES + "*")
    take("bulk_write_ns", write_probes(rows, sms), WRITE_PROBES + "*")


def write_probes(rows: pd.DataFrame, sms: int | None) -> dict | None:
    """Chunk bytes -> a block's turnaround of one chunk (ns) of the calibration's bulk writes on
    `sms` SMs (None without two)."""
    probes = rows.loc[rows["name"].str.startswith(WRITE_PROBES) & (rows["gbs"] > 0)]
    found = {}
    for name, gbs in zip(probes["name"], probes["gbs"]):
        ns = bulk_chunk_ns(sms, gbs, name)
        if ns:
            found[_shape(name)["bytes"]] = ns
    return found if len(found) >= 2 else None


def write_turnaround_ns(probes: dict | None, chunk_bytes: float) -> float | None:
    """A bulk write's turnaround of a chunk of `chunk_bytes`: on the probes' line (a fixed part
    and a part per byte), never below 0."""
    if not probes or not chunk_bytes:
        return None
    fixed, per_byte = _line(probes)
    return max(0.0, fixed + per_byte * chunk_bytes)


def chunk_turnaround_ns(p, s) -> float | None:
    """The turnaround of one chunk of the bulk shape `s` on the run's parameters `p`: a write's
    on the write probes' line at the bytes its warp fills (the read's where the run lacks
    them), a read's or a copy's from the read probe (`turnaround_ns`)."""
    if s.op == "write" and p.bulk_write_ns:
        return write_turnaround_ns(p.bulk_write_ns, s.filled_bytes)
    return turnaround_ns(p.bulk_chunk_ns, p.bulk_latency, s.checked_bytes)


def latency_probes(rows: pd.DataFrame) -> dict | None:
    """Copy bytes -> ns per copy of the calibration's one-at-a-time copies (None without
    two)."""
    probes = rows.loc[rows["name"].str.startswith(LATENCY_PROBES) & (rows["gbs"] > 0)]
    found = {float(name[len(LATENCY_PROBES):]): float(name[len(LATENCY_PROBES):]) / gbs
             for name, gbs in zip(probes["name"], probes["gbs"])}
    return found if len(found) >= 2 else None


def turnaround_ns(chunk_ns: float | None, probes: dict | None,
                  checked_bytes: float) -> float | None:
    """A block's turnaround of one chunk: `chunk_ns`, or the time one warp takes to check
    `checked_bytes` (its share of a chunk) at the one-at-a-time line's part per byte, whichever
    is longer (the check alone where the run has no line)."""
    if not chunk_ns or not checked_bytes or not probes:
        return chunk_ns
    return max(chunk_ns, checked_bytes * _line(probes)[1])


def latency_gbs(probes: dict | None, row) -> float | None:
    """GB/s of a `bulk/latency/bytes:B` row: B over the time per copy on the probes' line."""
    size = pd.to_numeric(row.get("bytes"), errors="coerce")
    if not probes or pd.isna(size):
        return None
    fixed, per_byte = _line(probes)
    ns = fixed + per_byte * float(size)
    return float(size) / ns if ns > 0 else None
