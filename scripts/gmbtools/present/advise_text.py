"""What `gmb advise` prints: per kernel, its global loads and stores, the most sectors first,
with what each costs, the built-in it behaves like and the fix; or the same as JSON."""

from gmbtools.analysis.advise_match import Advice


def text(advice: list[Advice], results: str | None) -> str:
    lines: list[str] = []
    kernel = None
    for a in advice:
        if a.access.kernel != kernel:
            kernel = a.access.kernel
            lines += ["" if lines else None, f"kernel {kernel}"]
            lines += ["  where | op | bytes/lane | requests | sectors/req (ideal) | lines/req | "
                      "share | class | behaves like"]
        op = "load" if a.access.operation == "Load" else "store"
        what = a.kind if a.stride is None else f"{a.kind}, {a.stride} elements apart"
        twin = a.twin or "-"
        if a.twin and a.twin_gbs is not None:
            twin += f" ({a.twin_gbs:.1f} GB/s in {results})"
        lines.append(f"  {a.access.where} | {op} | {a.access.word_bytes:g} | "
                     f"{a.access.requests:.0f} | {a.sectors_per_request:.3g} "
                     f"({a.ideal_per_request:.3g}) | {a.lines_per_request:.3g} | "
                     f"{a.share:.0%} | {what} | {twin}")
    for kernel, group in _expensive(advice).items():
        lines.append("")
        saved = sum(a.saved_share for a in group)
        first = group[0]
        what = first.kind if first.stride is None else f"{first.kind}, {first.stride} apart"
        lines.append(f"{kernel}: {len(group)} of its accesses ({what}, like "
                     f"{first.twin or 'no built-in'}; first {first.access.where}: "
                     f"{first.access.sass}) move up to {max(a.excess for a in group):.3g}x the "
                     f"sectors they need; at their ideal counts the kernel would move "
                     f"{saved:.0%} fewer sectors between the L2 and the SMs." + (f" Fix: {first.fix}." if first.fix else ""))
    return "\n".join(line for line in lines if line is not None) + "\n"


def as_json(advice: list[Advice]) -> list[dict]:
    return [{"kernel": a.access.kernel, "where": a.access.where, "address": a.access.address,
             "sass": a.access.sass, "operation": a.access.operation,
             "word_bytes": a.access.word_bytes, "requests": a.access.requests,
             "lanes": a.access.lanes, "sectors_per_request": a.sectors_per_request,
             "ideal_sectors_per_request": a.ideal_per_request,
             "lines_per_request": a.lines_per_request, "share_of_kernel_sectors": a.share,
             "class": a.kind, "stride": a.stride, "behaves_like": a.twin,
             "behaves_like_gbs": a.twin_gbs, "fix": a.fix,
             "sectors_saved_share": a.saved_share} for a in advice]


def _expensive(advice: list[Advice]) -> dict[str, list[Advice]]:
    """Per kernel, its accesses that move more than their ideal sectors (over 5 % of the
    kernel's), the most saved first."""
    out: dict[str, list[Advice]] = {}
    for a in sorted(advice, key=lambda v: -v.saved_share):
        if a.saved_share > 0.05:
            out.setdefault(a.access.kernel, []).append(a)
    return out
