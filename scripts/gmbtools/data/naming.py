"""Benchmark names, the one piece of C++ knowledge the scripts share (docs/design.md: naming).

A gmembench name is `family/variant/key:value/...`, e.g. `copy/f32x4/ilp:4/grid:persistent` or
`ref/memcpy_d2d`. Google Benchmark appends its own components (`/manual_time`, `/repeats:5`,
...) and, for aggregate rows, `_<aggregate_name>`. Runs of different flavors and dates are paired
by the name without those additions, so every script strips them the same way, here.
"""

import re
from dataclasses import dataclass, field

# Aggregates Google Benchmark computes for every benchmark run with repetitions.
AGGREGATE_NAMES = ("mean", "median", "stddev", "cv")

# Components Google Benchmark appends after the registered name, always at the end, in the order
# min_time, min_warmup_time, iterations, repeats, process_time, manual_time|real_time, threads.
_GB_COMPONENT = re.compile(
    r"manual_time|real_time|process_time"
    r"|(?:repeats|iterations|threads):\d+"
    r"|(?:min_time|min_warmup_time):[^/]+"
)

# Plain decimal numbers only: Python's int()/float() would also take "1_000", "nan" and "inf".
_INT = re.compile(r"[+-]?\d+")
_FLOAT = re.compile(r"[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?")

# Bytes of one element of each type name the families use: `f32x4` is one 16-byte load,
# `w<B>` a B-byte word (vector family); the AoS structs are named by their size in bytes,
# except `a12`, a 12-byte struct aligned (padded) to 16.
_TYPE_BYTES = {"f32": 4, "f64": 8, "f32x2": 8, "f32x4": 16, "a12": 16}
_SIZED_TYPE = re.compile(r"[swp](\d+)")


@dataclass(frozen=True)
class BenchName:
    """A name split per the contract. `params` values stay strings; see `numeric_params`."""

    name: str
    family: str
    variant: str
    params: dict[str, str] = field(default_factory=dict)

# Families whose result is a latency counter (latency_ns), not the bandwidth Google Benchmark
# times: summaries and bandwidth figures leave them out.
LATENCY_FAMILIES = ("latency", "tlb", "model")


def strip_suffixes(name: str, aggregate_name: str | None = None) -> str:
    """Return `name` without Google Benchmark's additions.

    `aggregate_name` is the entry's `aggregate_name`: when given, exactly `_<aggregate_name>` is
    removed (user-defined statistics have their own names); when None, any of the standard
    `_mean _median _stddev _cv` is removed.
    """
    candidates = (aggregate_name,) if aggregate_name else AGGREGATE_NAMES
    for aggregate in candidates:
        suffix = "_" + aggregate
        if name.endswith(suffix):
            name = name[: -len(suffix)]
            break
    parts = name.split("/")
    # Only trailing components are Google Benchmark's; a family may use e.g. `threads:` inside.
    while len(parts) > 1 and _GB_COMPONENT.fullmatch(parts[-1]):
        parts.pop()
    return "/".join(parts)


def split_name(name: str, aggregate_name: str | None = None) -> BenchName:
    """Strip Google Benchmark's additions and split into family, variant and params.

    The family is the first component. Components of the form `key:value` are params (split at
    the first colon, so values may contain colons). Every other component after the family is
    part of the variant, joined by `/`: `stride/f32/read/s:8` has variant `f32/read`, so no part
    of a name is ever dropped.
    """
    base = strip_suffixes(name, aggregate_name)
    family, *rest = base.split("/")
    variant: list[str] = []
    params: dict[str, str] = {}
    for part in rest:
        key, sep, value = part.partition(":")
        if sep:
            params[key] = value
        else:
            variant.append(part)
    return BenchName(name=base, family=family, variant="/".join(variant), params=params)


def type_and_op(variant: str) -> tuple[str, str | None]:
    """The variant's first component is the element type, the rest (if any) the operation:
    `f32/read` -> ("f32", "read"), `f32x4` -> ("f32x4", None)."""
    type_, sep, op = variant.partition("/")
    return type_, (op if sep else None)


def element_bytes(type_: str) -> int | None:
    """Bytes of one element of a type name (`f32x2` -> 8, `w16` -> 16, `p12` -> 12,
    `a12` -> 16); None for a name the contract does not define."""
    if type_ in _TYPE_BYTES:
        return _TYPE_BYTES[type_]
    sized = _SIZED_TYPE.fullmatch(type_)
    return int(sized.group(1)) if sized else None


def to_number(value: str) -> int | float | str:
    """`"4"` -> 4, `"0.5"` -> 0.5; anything else (`"persistent"`, `"64M"`, `"nan"`) stays as is."""
    if _INT.fullmatch(value):
        return int(value)
    if _FLOAT.fullmatch(value):
        return float(value)
    return value


def numeric_params(params: dict[str, str]) -> dict[str, int | float | str]:
    """Params with numeric values converted, for sorting and plotting sweeps by value."""
    return {key: to_number(value) for key, value in params.items()}


def bytes_text(n: float) -> str:
    """1024 -> '1 KiB', 62914560 -> '60 MiB', 12 -> '12 B'."""
    for unit, size in (("GiB", 2**30), ("MiB", 2**20), ("KiB", 2**10)):
        if abs(n) >= size:
            value = n / size
            # .3g would write 1023.7 MiB as 1.02e+03 MiB
            whole = value == round(value) or value >= 100
            return f"{value:.0f} {unit}" if whole else f"{value:.3g} {unit}"
    return f"{n:.0f} B"
