"""What `gmb advise` prints: per kernel, its global loads and stores, the most sectors first,
with what each costs and the built-in it behaves like; then its time, what its bytes would
take coalesced and the predicted time with each group of accesses fixed; or the same as JSON."""

from gmbtools.analysis.advise_match import Advice, bad_groups
from gmbtools.analysis.advise_whatif import Fix, KernelWhatIf

_HEADER = ("  where | op | bytes/lane | requests | sectors/req (ideal) | lines/req | share | "
           "class | behaves like")


def text(advice: list[Advice], whatifs: list[KernelWhatIf], results: str | None) -> str:
    lines = [f"GB/s of the built-ins: {results}" if results else
             "GB/s of the built-ins: none (give --results DIR of this GPU)"]
    timed = {w.kernel: w for w in whatifs}
    for kernel in dict.fromkeys(a.access.kernel for a in advice):
        mine = [a for a in advice if a.access.kernel == kernel]
        lines += ["", f"kernel {kernel}", _HEADER] + [_row(same) for same in alike(mine)]
        if kernel in timed:
            lines += _whatif(timed[kernel])
        else:
            lines += _sectors_only(mine)
    return "\n".join(lines) + "\n"


def short_name(kernel: str) -> str:
    """A kernel's name without its parameter list."""
    return kernel.split("(")[0] if "(" in kernel else kernel


def alike(mine: list[Advice]) -> list[list[Advice]]:
    """The accesses, those of one line that behave alike (an unrolled loop's) in one row."""
    rows: dict[tuple, list[Advice]] = {}
    for a in mine:
        key = (a.access.where, a.access.operation, a.access.word_bytes, a.kind, a.stride,
               round(a.sectors_per_request, 2), round(a.lines_per_request, 2))
        rows.setdefault(key, []).append(a)
    return list(rows.values())


def _row(same: list[Advice]) -> str:
    a = same[0]
    op = "load" if a.access.operation == "Load" else "store"
    if len(same) > 1:
        op += f" x{len(same)}"
    twin = a.twin or "-"
    if a.twin and a.twin_gbs is not None:
        twin += f" ({a.twin_gbs:.1f} GB/s)"
    requests = sum(x.access.requests for x in same)
    share = sum(x.share for x in same)
    return (f"  {a.access.where} | {op} | {a.access.word_bytes:g} | {requests:.0f} | "
            f"{a.sectors_per_request:.3g} ({a.ideal_per_request:.3g}) | "
            f"{a.lines_per_request:.3g} | {share:.0%} | {_what(a)} | {twin}")


def _what(a: Advice) -> str:
    return a.kind if a.stride is None else f"{a.kind}, {a.stride} elements apart"


def _whatif(w: KernelWhatIf) -> list[str]:
    t = w.time
    runs = f"{t.launches} launch{'es' if t.launches != 1 else ''}"
    dram = f"{t.dram_bytes / 1e6:.1f} MB of DRAM, " if t.dram_bytes is not None else ""
    out = [f"  time: {t.seconds * 1e3:.3f} ms a launch ({runs}); {dram}"
           f"{w.needed_bytes / 1e6:.1f} MB needed"]
    if w.rate is not None and w.floor_seconds is not None:
        out.append(f"  coalesced: {w.floor_seconds * 1e3:.3f} ms, those bytes at the best "
                   f"{w.rate.kind} of this GPU ({w.rate.name}, {w.rate.gbs:.1f} GB/s); "
                   f"measured / coalesced {t.seconds / w.floor_seconds:.2f}")
    if not w.fixes:
        out.append("  every access moves the sectors it needs: the access pattern is not what "
                   "costs the rest (bytes in flight? docs/inflight.md)")
    for fix in w.fixes:
        first = fix.group[0]
        where = ", ".join(dict.fromkeys(a.access.where for a in fix.group))
        code = f": {first.access.code}" if first.access.code else ""
        many = len(fix.group) > 1
        out.append(f"  fix {fix.label} ({len(fix.group)} access{'es' if many else ''} at "
                   f"{where}{code}): {fix.seconds * 1e3:.3f} ms predicted, "
                   f"{t.seconds / fix.seconds:.2f}x faster ({w.bound}{_at(fix)}). "
                   f"{_fix(first)}")
    return out


def _at(fix: Fix) -> str:
    return f"; fixed, at {fix.rate.name}'s {fix.rate.gbs:.1f} GB/s" if fix.rate else ""


def _fix(a: Advice) -> str:
    return f"Fix: {a.fix}." if a.fix else ""


def _sectors_only(mine: list[Advice]) -> list[str]:
    """Without the kernel's time (a CSV export): what fixing each group of accesses (one class
    and stride) saves in sectors."""
    out = []
    for group in sorted(bad_groups(mine), key=lambda g: -sum(a.saved_share for a in g)):
        saved = sum(a.saved_share for a in group)
        if saved <= 0.05:
            continue
        first, many = group[0], len(group) > 1
        where = ", ".join(dict.fromkeys(a.access.where for a in group))
        out.append(f"  {len(group)} access{'es' if many else ''} ({_what(first)}, at {where}) "
                   f"move{'' if many else 's'} up to {max(a.excess for a in group):.3g}x the "
                   f"sectors needed; fixed, the kernel moves {saved:.0%} fewer sectors. "
                   f"{_fix(first)}")
    return out


def markdown(advice: list[Advice], whatifs: list[KernelWhatIf], results: str | None,
             command: str) -> str:
    """advice.md of a saved `gmb advise`: the command, the text, and how to read it."""
    return (f"# gmb advise\n\nCommand: `{command}`\n\n```text\n{text(advice, whatifs, results)}"
            f"```\n\n{HOW}\n")


HOW = ("Each row is a global load or store of the kernel (those of one source line that behave "
       "alike in one row): sectors per request against the ideal, 128-B lines per request, its "
       "share of the kernel's sectors, its class and the built-in benchmark it behaves like. The "
       "time lines split a launch's measured time into the bytes it needs at the GPU's best "
       "coalesced kernel and the rest, shared among the groups of accesses that move more "
       "sectors than needed; each fix line is the predicted time with that group fixed. How, "
       "and where it is wrong: docs/advise.md.")


def as_json(advice: list[Advice], whatifs: list[KernelWhatIf], results: str | None) -> dict:
    timed = {w.kernel: w for w in whatifs}
    kernels = []
    for kernel in dict.fromkeys(a.access.kernel for a in advice):
        entry = {"kernel": kernel, "accesses": [_access(a) for a in advice
                                                 if a.access.kernel == kernel]}
        if kernel in timed:
            entry.update(_timed(timed[kernel]))
        kernels.append(entry)
    return {"results": results, "kernels": kernels}


def _access(a: Advice) -> dict:
    return {"where": a.access.where, "code": a.access.code, "address": a.access.address,
            "sass": a.access.sass, "operation": a.access.operation,
            "word_bytes": a.access.word_bytes, "requests": a.access.requests,
            "lanes": a.access.lanes, "sectors_per_request": a.sectors_per_request,
            "ideal_sectors_per_request": a.ideal_per_request,
            "lines_per_request": a.lines_per_request, "share_of_kernel_sectors": a.share,
            "class": a.kind, "stride": a.stride, "behaves_like": a.twin,
            "behaves_like_gbs": a.twin_gbs, "fix": a.fix, "sectors_saved_share": a.saved_share}


def _timed(w: KernelWhatIf) -> dict:
    return {"seconds": w.time.seconds, "launches": w.time.launches,
            "dram_bytes": w.time.dram_bytes, "needed_bytes": w.needed_bytes,
            "coalesced_rate": None if w.rate is None else
            {"kind": w.rate.kind, "benchmark": w.rate.name, "gbs": w.rate.gbs},
            "floor_seconds": w.floor_seconds, "bound": w.bound,
            "fixes": [{"class": f.label, "where": [a.access.where for a in f.group],
                       "addresses": [a.access.address for a in f.group],
                       "predicted_seconds": f.seconds,
                       "fixed_rate": None if f.rate is None else
                       {"benchmark": f.rate.name, "gbs": f.rate.gbs}} for f in w.fixes]}

