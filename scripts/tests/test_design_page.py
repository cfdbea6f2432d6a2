"""docs/design.md is kept true by the code: its tables of benchmark families, counters and
context keys must list exactly what the C++ sources emit, and its picture of the house must
draw exactly the include directions between folders that the sources have.

What the code emits is read from the sources themselves (include/gmb, kernels, benchmarks),
comments removed:
- families: the first argument of every `bench_name("<family>", ...)` call (the one name
  builder; a call with a computed family fails the test, since it could not be read here);
- counters: `counters["<key>"]`; `SetBytesProcessed` (Google Benchmark's `bytes_per_second`);
  and the `{"<key>", value}` pairs a case measures itself: inside every block that follows the
  type `measurements` (function bodies, `measurements{...}` values) or an assignment to
  `.measured`, where `bench_name(...)` and `name_param(...)` calls (name parts) are left out;
- context keys: `AddCustomContext("<key>", ...)`, and the `{"<key>", value}` pairs and
  `emplace_back("<key>", ...)` inside every block that follows the type of context entries,
  `std::vector<std::pair<std::string, std::string>>`; entries built as `prefix + "<suffix>"`
  get each prefix the code passes as a literal (`entries("health_start_")`; "" is not context).
"""

import re
from pathlib import Path

import pytest

from conftest import SCRIPTS

REPO = SCRIPTS.parent
DESIGN = REPO / "docs" / "design.md"
CPP_FOLDERS = ("include/gmb", "kernels", "benchmarks")
CPP_SUFFIXES = {".cu", ".cuh", ".hpp", ".cpp", ".h"}
KEY = r"([a-z][a-z0-9_]*)"

# --- reading C++ ------------------------------------------------------------------------------

_TOKEN = re.compile(r'//[^\n]*|/\*.*?\*/|"(?:\\.|[^"\\\n])*"|\'(?:\\.|[^\'\\\n])*\'', re.S)


def strip_comments(source: str) -> str:
    """The source without comments; string and character literals kept whole (a "//" inside a
    string is no comment), line breaks kept so positions still map to lines."""
    def keep(m: re.Match) -> str:
        text = m.group(0)
        return text if text[0] in "\"'" else re.sub(r"[^\n]", " ", text)
    return _TOKEN.sub(keep, source)


def sources() -> dict[str, str]:
    """Every C++ source of the layers that emit names, counters and context, comments removed."""
    found = {}
    for folder in CPP_FOLDERS:
        for path in sorted((REPO / folder).rglob("*")):
            if path.suffix in CPP_SUFFIXES:
                found[str(path.relative_to(REPO))] = strip_comments(path.read_text())
    return found


def balanced(text: str, start: int) -> str:
    """The bracketed text that opens at text[start] ('(' or '{'), brackets included."""
    opening = text[start]
    closing = {"(": ")", "{": "}"}[opening]
    depth = 0
    for i in range(start, len(text)):
        if text[i] == opening:
            depth += 1
        elif text[i] == closing:
            depth -= 1
            if depth == 0:
                return text[start:i + 1]
    raise AssertionError(f"unbalanced {opening!r} in a source")


def blocks_after(text: str, marker: re.Pattern) -> list[str]:
    """For each match of `marker`, the next {...} block, unless a ';' comes first (a
    declaration without a body or an initializer list)."""
    found = []
    for m in marker.finditer(text):
        brace, semicolon = text.find("{", m.end()), text.find(";", m.end())
        if brace != -1 and (semicolon == -1 or brace < semicolon):
            found.append(balanced(text, brace))
    return found


def without_calls(text: str, function: str) -> str:
    """`text` with every call of `function` (its arguments included) removed."""
    while (m := re.search(rf"\b{function}\s*\(", text)) is not None:
        call = balanced(text, m.end() - 1)
        text = text[:m.start()] + text[m.end() - 1 + len(call):]
    return text


PAIR = re.compile(rf'\{{\s*"{KEY}"\s*,|emplace_back\(\s*"{KEY}"\s*,')


def pair_keys(block: str) -> set[str]:
    """The literal first members of the string-keyed pairs a block builds."""
    return {a or b for a, b in PAIR.findall(block)}


def add(found: dict[str, set[str]], keys, where: str) -> None:
    for key in keys:
        found.setdefault(key, set()).add(where)


# --- what the code emits (name -> the files that emit it) -------------------------------------

def code_families() -> dict[str, set[str]]:
    found: dict[str, set[str]] = {}
    for path, text in sources().items():
        for m in re.finditer(r"\bbench_name\s*\(", text):
            first = re.match(r'\s*"([^"]*)"\s*,', text[m.end():])
            if first is None:
                if re.match(r"\s*const std::string& family", text[m.end():]):
                    continue  # the definition, in include/gmb/naming.hpp
                line = text.count("\n", 0, m.start()) + 1
                pytest.fail(f"{path}:{line}: bench_name is called with a computed family; "
                            "give it a literal so the design page's test can read it")
            add(found, [first.group(1)], path)
    return found


MEASUREMENTS = re.compile(
    r"\bmeasurements\b|std::vector<std::pair<std::string,\s*double>>|\.measured\s*=")
CONTEXT_ENTRIES = re.compile(r"std::vector<std::pair<std::string,\s*std::string>>")


def code_counters() -> dict[str, set[str]]:
    found: dict[str, set[str]] = {}
    for path, text in sources().items():
        add(found, re.findall(rf'counters\[\s*"{KEY}"\s*\]', text), path)
        if "SetBytesProcessed(" in text:
            add(found, ["bytes_per_second"], path)
        if "SetItemsProcessed(" in text:
            add(found, ["items_per_second"], path)
        for block in blocks_after(text, MEASUREMENTS):
            add(found, pair_keys(without_calls(without_calls(block, "bench_name"), "name_param")),
                path)
    return found


def code_context_keys() -> dict[str, set[str]]:
    found: dict[str, set[str]] = {}
    prefixes, suffixes = set(), {}
    for path, text in sources().items():
        add(found, re.findall(rf'AddCustomContext\(\s*"{KEY}"', text), path)
        for block in blocks_after(text, CONTEXT_ENTRIES):
            add(found, pair_keys(block), path)
            for suffix in re.findall(rf'\{{\s*prefix\s*\+\s*"{KEY}"', block):
                suffixes.setdefault(suffix, set()).add(path)
        prefixes |= set(re.findall(r'\.entries\(\s*"([a-z0-9_]+)"\s*\)', text))
    for prefix in prefixes:
        for suffix, paths in suffixes.items():
            for path in paths:
                add(found, [prefix + suffix], path)
    return found


# --- what the design page lists ---------------------------------------------------------------

def section(heading: str) -> str:
    """The text under a '## ' or '### ' heading of docs/design.md, up to the next heading."""
    text = DESIGN.read_text()
    m = re.search(rf"^#+ {re.escape(heading)}\s*$", text, re.M)
    assert m, f"docs/design.md has no heading '{heading}'"
    rest = text[m.end():]
    end = re.search(r"^#", rest, re.M)
    return rest[:end.start()] if end else rest


def listed(heading: str) -> set[str]:
    """The `names` in the first cell of every table row under `heading` (a trailing '/' of a
    family dropped)."""
    names = set()
    for line in section(heading).splitlines():
        cells = line.split("|")
        if line.startswith("|") and len(cells) > 2 and not set(cells[1].strip()) <= set("-: "):
            names |= {n.rstrip("/") for n in re.findall(r"`([^`]+)`", cells[1])}
    return names


def compare(kind: str, heading: str, in_code: dict[str, set[str]]) -> None:
    on_page = listed(heading)
    missing = sorted(set(in_code) - on_page)
    extra = sorted(on_page - set(in_code))
    lines = [f"{kind} {k} (from {', '.join(sorted(in_code[k]))}) is not in docs/design.md, "
             f"section '{heading}'" for k in missing]
    lines += [f"{kind} {k} is in docs/design.md, section '{heading}', but no source emits it"
              for k in extra]
    assert not lines, "\n".join(lines)


def test_every_family_is_on_the_design_page_and_no_other():
    assert len(code_families()) > 10, "the family extraction found almost nothing"
    compare("benchmark family", "Benchmark families", code_families())


def test_every_counter_is_on_the_design_page_and_no_other():
    counters = code_counters()
    # The extraction must see each way a counter is set, or it silently finds less.
    for known in ("pct_peak", "health_flags", "bytes_per_second", "latency_ns", "rung"):
        assert known in counters, f"the counter extraction no longer finds {known}"
    compare("counter", "Counters", counters)


def test_every_context_key_is_on_the_design_page_and_no_other():
    keys = code_context_keys()
    for known in ("gmb_flavor", "gpu_peak_gbs", "gpu_host_link", "health_start_sm_mhz",
                  "gmb_default_flavor_only"):
        assert known in keys, f"the context extraction no longer finds {known}"
    compare("context key", "Context keys", keys)


def test_extraction_reads_what_it_claims():
    """The extraction on a small made-up source: name parts are no counters, a comment hides
    nothing and shows nothing, prefixes multiply."""
    text = strip_comments('''
      c.name = bench_name("fam", "v", {{"ws", 1}});  // {"commented_out", 1}
      c.measured = [=](environment& e) -> measurements {
        measurements m = other(e);
        m.emplace_back("made", 1.0);
        return {{"also_made", 2.0}, {"url", "http://x"}};
      };
      std::vector<std::pair<std::string, std::string>> ctx(const std::string& prefix) {
        return {{"ctx_key", "v"}, {prefix + "tail", "w"}};
      }''')
    measured = set()
    for block in blocks_after(text, MEASUREMENTS):
        measured |= pair_keys(without_calls(without_calls(block, "bench_name"), "name_param"))
    assert measured == {"made", "also_made", "url"}
    assert [pair_keys(b) for b in blocks_after(text, CONTEXT_ENTRIES)] == [{"ctx_key"}]
    assert "commented_out" not in text and '"http://x"' in text


# --- the picture of the house -----------------------------------------------------------------

# Folders of the picture, by the include paths that reach them.
FOLDERS = {"gmb": "include/gmb", "include/gmb": "include/gmb", "kernels": "kernels",
           "benchmarks": "benchmarks", "tests/host": "tests/host", "tests/device": "tests/device"}


def folder_of(path: str) -> str | None:
    return next((f for f in sorted(set(FOLDERS.values()), key=len, reverse=True)
                 if path.startswith(f + "/")), None)


def code_includes() -> dict[tuple[str, str], str]:
    """(folder, included folder) -> one example include, between different folders."""
    edges = {}
    for folder in sorted(set(FOLDERS.values())):
        for path in sorted((REPO / folder).rglob("*")):
            if path.suffix not in CPP_SUFFIXES:
                continue
            for target in re.findall(r'#\s*include\s*"([^"]+)"', path.read_text()):
                to = next((f for prefix, f in FOLDERS.items() if target.startswith(prefix + "/")),
                          None)
                here = folder_of(str(path.relative_to(REPO)))
                if to and to != here:
                    edges.setdefault((here, to), f"{path.relative_to(REPO)} includes {target}")
    return edges


def drawn_includes() -> set[tuple[str, str]]:
    """The solid arrows (A --> B: A includes B) of the mermaid picture, by node labels."""
    m = re.search(r"```mermaid\n(.*?)```", DESIGN.read_text(), re.S)
    assert m, "docs/design.md has no mermaid picture"
    labels = dict(re.findall(r'^\s*(\w+)\["([^"]+)"\]', m.group(1), re.M))
    arrows = re.findall(r"^\s*(\w+)\s*-->\s*(\w+)\s*$", m.group(1), re.M)
    assert arrows, "the picture draws no include arrows"
    return {(labels[a], labels[b]) for a, b in arrows}


def test_the_picture_draws_exactly_the_include_directions_of_the_code():
    in_code, drawn = code_includes(), drawn_includes()
    lines = [f"{a} includes {b} ({why}), but the picture in docs/design.md draws no arrow "
             f"{a} --> {b}: draw it, or remove the include if the layers forbid it"
             for (a, b), why in sorted(in_code.items()) if (a, b) not in drawn]
    lines += [f"the picture in docs/design.md draws {a} --> {b}, but no file of {a} includes "
              f"one of {b}" for a, b in sorted(drawn - set(in_code))]
    assert not lines, "\n".join(lines)


def test_no_source_uses_nvlink_multicast():
    """The design forbids NVLink multicast objects: on shared machines they can take the host's
    GPUs out of service."""
    users = [p for p, text in sources().items() if re.search(r"\bcuMulticast\w*\(", text)]
    assert not users, f"NVLink multicast used in {users} (docs/design.md, 'Beyond one GPU')"
