"""`gmb compare`: pair the benchmarks of two runs by name and tabulate the bandwidth ratio B/A
beside the spread of the repetitions, flagging the differences larger than the noise.

A pair's noise is max(3 × sqrt(cv_A² + cv_B²), 0.5 %), cv being each side's coefficient of
variation of bytes_per_second over the repetitions (`results.median_by_name` gives it, from the
`cv` aggregate or the iteration rows); a side without repetitions (cv n/a) counts as 0, and the
output says so. A pair is flagged when |B/A − 1| exceeds its noise. Benchmarks in only one file
and benchmarks that errored on either side are listed by name, never as numbers.

Standard library only, so that it runs on the GPU machines as well.
"""

import csv
import math
import re
from dataclasses import dataclass
from pathlib import Path

from gmbtools.data import results
from gmbtools.data.flavors import json_name
from gmbtools.data.results import Median, Results
from gmbtools.errors import GmbError
from gmbtools.present.summary import cell, gpu_name

NOISE_SIGMAS = 3.0
NOISE_FLOOR = 0.005  # 0.5 %: below this, differences are not flagged whatever the cvs say

# (A, B) of `--flavors`: tables ca/default, cg/default and cg/ca (the caching study's one).
FLAVOR_PAIRS = (("default", "ca"), ("default", "cg"), ("ca", "cg"))

CSV_COLUMNS = ("a", "b", "benchmark", "status", "a_gbs", "b_gbs", "ratio", "a_cv", "b_cv",
               "noise", "note")


@dataclass(frozen=True)
class Side:
    """One file of a comparison: the label that names it in headers, and its medians."""

    label: str
    path: Path
    medians: dict[str, Median]


@dataclass(frozen=True)
class Pair:
    """A benchmark measured on both sides: median bytes/s and cv (a fraction, or None)."""

    name: str
    a: float
    b: float
    cv_a: float | None
    cv_b: float | None

    @property
    def ratio(self) -> float:
        return self.b / self.a

    @property
    def noise(self) -> float:
        return noise(self.cv_a, self.cv_b)

    @property
    def flagged(self) -> bool:
        return abs(self.ratio - 1.0) > self.noise


@dataclass(frozen=True)
class Comparison:
    """B against A: the pairs with numbers on both sides (in A's file order), the names with no
    number on a side (and why), and the names only one side has."""

    a: Side
    b: Side
    pairs: list[Pair]
    errors: dict[str, str]
    only_a: list[str]
    only_b: list[str]

    @property
    def flagged(self) -> list[Pair]:
        """The flagged pairs, largest |log ratio| first."""
        return _by_size([p for p in self.pairs if p.flagged])


def noise(cv_a: float | None, cv_b: float | None) -> float:
    """The flag threshold for |ratio − 1|: max(3 × sqrt(cv_A² + cv_B²), 0.5 %)."""
    cv_a, cv_b = cv_a or 0.0, cv_b or 0.0
    return max(NOISE_SIGMAS * math.sqrt(cv_a**2 + cv_b**2), NOISE_FLOOR)


def side(path: Path, label: str, loaded: Results | None = None) -> Side:
    """A file's medians (loading it unless `loaded` is given) under `label`; GmbError for a file
    that holds no benchmarks."""
    loaded = loaded if loaded is not None else results.load(path)
    if (why := results.problem(loaded)) is not None:
        raise GmbError(why)
    return Side(label, path, results.median_by_name(loaded.records))


def compare(a: Side, b: Side, name_filter: re.Pattern[str] | None = None) -> Comparison:
    """Pair `a` and `b` by benchmark name (those matching `name_filter`, if given)."""
    names_a = [n for n in a.medians if name_filter is None or name_filter.search(n)]
    names_b = [n for n in b.medians if name_filter is None or name_filter.search(n)]
    common = [n for n in names_a if n in b.medians]
    if not common:
        matching = f" matching --filter {name_filter.pattern!r}" if name_filter else ""
        raise GmbError(f"{a.path} and {b.path} have no benchmark{matching} in common")
    pairs, errors = [], {}
    for name in common:
        ma, mb = a.medians[name], b.medians[name]
        why = [f"{s.label}: {w}" for s, w in ((a, _no_rate(ma)), (b, _no_rate(mb))) if w]
        if why:
            errors[name] = "; ".join(why)
        else:
            pairs.append(Pair(name, ma.bytes_per_second or 0.0, mb.bytes_per_second or 0.0,
                              ma.cv, mb.cv))
    return Comparison(a, b, pairs, errors,
                      only_a=[n for n in names_a if n not in b.medians],
                      only_b=[n for n in names_b if n not in a.medians])


def _no_rate(median: Median) -> str | None:
    """Why a benchmark has no bandwidth to compare, or None when it has one."""
    if median.error is not None:
        return median.error
    rate = median.bytes_per_second
    if rate is None:
        return "no bytes_per_second counter"
    if not math.isfinite(rate) or rate <= 0:
        return f"bytes_per_second is {rate}"
    return None


def _by_size(pairs: list[Pair]) -> list[Pair]:
    return sorted(pairs, key=lambda p: abs(math.log(p.ratio)), reverse=True)


def file_labels(a: Path, b: Path) -> tuple[str, str]:
    """Names for two files' columns: their stems (`default`, `ca`), told apart by their folders
    where the stems are the same (`default (20261122-022717)`); `default.json.gz` is `default`."""
    stem_a, stem_b = (Path(p.name.removesuffix(".gz")).stem for p in (a, b))
    if stem_a != stem_b:
        return stem_a, stem_b
    folder_a, folder_b = a.resolve().parent.name, b.resolve().parent.name
    if folder_a != folder_b:
        return f"{stem_a} ({folder_a})", f"{stem_b} ({folder_b})"
    return f"{stem_a} (A)", f"{stem_b} (B)"


# --- markdown ------------------------------------------------------------------------------

def render(comparison: Comparison, show_all: bool = False) -> list[str]:
    """The markdown section of one comparison: its flagged pairs (every pair with `show_all`),
    the flag rule, how many agree, and the names that have no ratio."""
    a, b = comparison.a.label, comparison.b.label
    ratio = f"{b}/{a}"
    flagged = comparison.flagged
    agree = len(comparison.pairs) - len(flagged)
    shown = list(flagged)
    if show_all:  # then the agreeing pairs, also largest difference first
        shown += _by_size([p for p in comparison.pairs if not p.flagged])
    lines = [f"## {cell(ratio)}", "",
             f"`{comparison.b.path}` over `{comparison.a.path}`: medians of the repetitions, "
             "their cv (coefficient of variation) and the ratio.", ""]
    if shown:
        lines += [f"| benchmark | {cell(a)} GB/s | {cell(b)} GB/s | {cell(ratio)} "
                  f"| {cell(a)} cv | {cell(b)} cv | noise | flag |",
                  "|---|---:|---:|---:|---:|---:|---:|:---:|"]
        lines += [_row(p) for p in shown]
    else:
        lines.append("No benchmark differs by more than the noise.")
    rule = (f"`*`: |{cell(ratio)} − 1| > noise = max(3 × √(cv_{cell(a)}² + cv_{cell(b)}²),"
            " 0.5 %)")
    if any(p.cv_a is None or p.cv_b is None for p in comparison.pairs):
        rule += "; a cv of n/a (no repetitions) counts as 0"
    listed = " (listed with --all)" if agree and not show_all else ""
    lines += ["", rule + ".", "",
              f"{agree} of {len(comparison.pairs)} benchmarks agree within the noise{listed}.", ""]
    for label, names in ((a, comparison.only_a), (b, comparison.only_b)):
        if names:
            lines += [f"Only in {cell(label)} ({len(names)}): "
                      + ", ".join(f"`{name}`" for name in names), ""]
    if comparison.errors:
        lines += [f"Errored or without a bandwidth ({len(comparison.errors)}), no ratio:", ""]
        lines += [f"- `{name}`: {cell(why)}" for name, why in comparison.errors.items()] + [""]
    return lines


def _row(pair: Pair) -> str:
    return (f"| `{pair.name}` | {pair.a / 1e9:.1f} | {pair.b / 1e9:.1f} | {pair.ratio:.4f} "
            f"| {_percent(pair.cv_a)} | {_percent(pair.cv_b)} | {pair.noise * 100:.2f} % "
            f"| {'*' if pair.flagged else ''} |")


def _percent(fraction: float | None) -> str:
    return "n/a" if fraction is None else f"{fraction * 100:.3f} %"


# --- CSV -----------------------------------------------------------------------------------

def write_csv(comparisons: list[Comparison], out: Path) -> None:
    """Every name of every comparison, one row each, numbers unrounded: GB/s (10⁹ B/s) medians,
    ratio B/A, cvs and noise as fractions. `status` is flagged, agrees, error, only_a or only_b;
    `note` says why a row has no numbers."""
    with out.open("w", newline="", encoding="utf-8") as stream:
        writer = csv.writer(stream)
        writer.writerow(CSV_COLUMNS)
        for c in comparisons:
            labels = (c.a.label, c.b.label)
            for p in c.pairs:
                writer.writerow((*labels, p.name, "flagged" if p.flagged else "agrees",
                                 p.a / 1e9, p.b / 1e9, p.ratio, _blank(p.cv_a), _blank(p.cv_b),
                                 p.noise, ""))
            blanks = ("",) * 6
            rows = [(name, "error", why) for name, why in c.errors.items()]
            rows += [(name, "only_a", f"not in {c.b.label}") for name in c.only_a]
            rows += [(name, "only_b", f"not in {c.a.label}") for name in c.only_b]
            for name, status, note in rows:
                writer.writerow((*labels, name, status, *blanks, note))


def _blank(value: float | None) -> float | str:
    return "" if value is None else value


# --- the two forms of the command ----------------------------------------------------------

def compare_files(a: Path, b: Path, name_filter: re.Pattern[str] | None) -> list[Comparison]:
    """`gmb compare A.json B.json`: one comparison; an unreadable file is an error."""
    label_a, label_b = file_labels(a, b)
    return [compare(side(a, label_a), side(b, label_b), name_filter)]


def compare_flavors(folder: Path, name_filter: re.Pattern[str] | None
                    ) -> tuple[list[Comparison], list[str], list[str]]:
    """`gmb compare --flavors RESULTS_DIR`: ca/default, cg/default and cg/ca of one run; the
    lines to print before them: a title, and a line for each flavor file that is missing or
    gives nothing (its tables are skipped) or whose context names another flavor; and the files
    that gave nothing (`results.problems`), for the command's warnings."""
    loaded = results.load_folder(folder)
    files = results.readable(loaded)
    lines = [f"# gmb compare: flavors of `{folder}` "
             f"({gpu_name({f: r.context for f, r in files.items()})})", ""]
    for flavor, value in loaded.items():
        skipped = ", ".join(f"{b}/{a}" for a, b in FLAVOR_PAIRS if flavor in (a, b))
        if value is None:
            lines += [f"**Skipped:** `{json_name(flavor)}` is not in this folder (no {skipped}).",
                      ""]
        elif (why := results.problem(value)) is not None:
            lines += [f"**Skipped:** {cell(why)} (no {skipped}).", ""]
        elif value.context.get("gmb_flavor") != flavor:
            lines += [f"**Warning:** `{json_name(flavor)}`'s context says gmb_flavor = "
                      f"`{value.context.get('gmb_flavor')}`.", ""]
    sides = {flavor: side(r.path, flavor, r) for flavor, r in files.items()}
    comparisons = [compare(sides[a], sides[b], name_filter)
                   for a, b in FLAVOR_PAIRS if a in sides and b in sides]
    if all(value is None for value in loaded.values()):
        raise GmbError(results.no_flavor_file(folder))
    if not comparisons:
        names = ", ".join(json_name(flavor) for flavor in loaded)
        unread = "".join(f"; {why}" for why in results.problems(loaded))
        raise GmbError(f"{folder}: fewer than two readable flavor files of {names}; "
                       f"nothing to compare{unread}")
    return comparisons, lines, results.problems(loaded)


def markdown(comparisons: list[Comparison], preamble: list[str], show_all: bool,
             name_filter: re.Pattern[str] | None = None) -> str:
    """The whole printed text: `preamble` lines, then each comparison's section."""
    lines = list(preamble)
    if name_filter is not None:
        lines += [f"Only benchmarks whose name matches `{name_filter.pattern}`.", ""]
    for comparison in comparisons:
        lines += render(comparison, show_all)
    return "\n".join(lines).rstrip() + "\n"
