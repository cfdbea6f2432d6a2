"""Every command of every ```sh block in README.md and docs/*.md is run or checked.

- `scripts/gmb summary|load|plot|report|compare ...` (and `gmb ...`, the installed command) run
  for real on a copy of fixtures/docs/run (trimmed from a committed H200 run by
  fixtures/trim_run.py): every `results/<slug>/<stamp>` path (and RESULTS_DIR) is replaced by
  that copy, A.json/B.json by two of its files, /tmp/... by a folder under tmp_path; each must
  exit 0 and write what it promises.
- `build/<preset>/gmembench[-ca|-cg] ...`, `scripts/gmb run ...`, `scripts/gmb ncu ...`: every
  filter must select at least one name of fixtures/docs/names.txt with gmembench's rules
  (re.search on the name without or with `/manual_time`; a leading `-` negates). On a machine
  with a GPU, binaries run with `--benchmark_list_tests=true` and `gmb run` runs for real when
  its filter selects at most 10 benchmarks.
- `scripts/test`, `scripts/setup`, `pip install`, `cmake`, `python3 -m pytest`: recognised and
  skipped (the suite runs them itself).
Anything else fails: a documented command needs a rule here first.
"""

import json
import os
import re
import shlex
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

from conftest import GMB, SCRIPTS

REPO = SCRIPTS.parent
DOC_FILES = [REPO / "README.md", *sorted((REPO / "docs").glob("*.md"))]
DOCS_FIXTURES = Path(__file__).resolve().parent / "fixtures" / "docs"
FIXTURE_RUN = DOCS_FIXTURES / "run"
# `gmembench --benchmark_list_tests` output: the names with Google Benchmark's suffix.
NAMES = [n.removesuffix("/manual_time")
         for n in (DOCS_FIXTURES / "names.txt").read_text().splitlines() if n]
README_LIMIT = 12288  # bytes: the front page must stay a front page

FIGURES = ("stride", "offset", "flavors", "reuse", "aos_soa", "word_ilp", "working_set")
ANALYSIS = {"summary", "load", "plot", "report", "compare"}
SKIPPED = {
    "scripts/test": "scripts/test is the test suite itself",
    "scripts/setup": "scripts/setup runs at the start of scripts/test",
    "cmake": "scripts/test configures and builds with cmake itself",
    "pip": "installing the package is test_install's job",
    "pip3": "installing the package is test_install's job",
}
RESULTS_PATH = re.compile(r"results/[A-Za-z0-9._-]+/\d{8}-\d{6}[A-Za-z0-9._-]*|RESULTS_DIR")
BINARY = re.compile(r"build/[A-Za-z0-9._-]+/(gmembench(?:-ca|-cg)?)")
ENV_ASSIGNMENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*=.*")
SHELL_OPERATORS = {"|", "||", "&&", ";", ">", ">>", "<", "&"}
# Python syntax that POSIX extended regexes (std::regex::extended) lack: class escapes, (?...)
# groups, lazy quantifiers.
PYTHON_ONLY = re.compile(r"\\[dDwWsSbB]|\(\?|[*+?}]\?")
LIST_LIMIT = 10  # `gmb run` runs for real on a GPU only when its filter selects at most this


# --- extraction -------------------------------------------------------------------------------

@dataclass(frozen=True)
class Command:
    doc: str  # path relative to the repository
    line: int  # line of the command's first line in the document
    text: str

    def __str__(self):
        return f"{self.doc}:{self.line}: {self.text}"


def _strip_comment(line: str) -> str:
    """The line without a trailing `# comment` (a # that starts a word, outside quotes)."""
    quote = None
    for i, ch in enumerate(line):
        if quote:
            if ch == quote:
                quote = None
        elif ch in "'\"":
            quote = ch
        elif ch == "#" and (i == 0 or line[i - 1].isspace()):
            return line[:i].rstrip()
    return line.rstrip()


def sh_commands(path: Path) -> list[Command]:
    """The commands of every ```sh block of one markdown file."""
    doc = str(path.relative_to(REPO))
    commands, in_block, pending, start = [], False, "", 0
    for number, raw in enumerate(path.read_text().splitlines(), start=1):
        if not in_block:
            in_block = raw.strip() == "```sh"
            continue
        if raw.strip().startswith("```"):
            assert not pending, f"{doc}:{start}: a block ends inside a continued command"
            in_block = False
            continue
        line = _strip_comment(raw)
        if not pending and not line.strip():
            continue
        if not pending:
            start = number
        if line.endswith("\\"):
            pending += line[:-1].strip() + " "
            continue
        commands.append(Command(doc, start, pending + line.strip()))
        pending = ""
    assert not in_block, f"{doc}: a ```sh block is never closed"
    return commands


ALL_COMMANDS = [c for path in DOC_FILES for c in sh_commands(path)]


# --- gmembench's filter semantics -------------------------------------------------------------

def selected(regex: str, names=NAMES) -> list[str]:
    """Names `--benchmark_filter=regex` selects in gmembench (include/gmb/name_filter.hpp): a
    search on the name without or with `/manual_time`; a leading `-` selects every name that
    does not match; "" and "all" select everything. gmembench's regexes are POSIX extended:
    Python's re agrees on the syntax the docs use, and the Python-only escapes and groups are
    refused."""
    negate = regex.startswith("-")
    spec = regex[1:] if negate else regex
    assert not PYTHON_ONLY.search(spec), f"{regex!r}: gmembench's regexes are POSIX extended"
    pattern = re.compile(spec if spec not in ("", "all") else ".")

    def matches(name):
        return bool(pattern.search(name) or pattern.search(name + "/manual_time"))

    return [n for n in names if matches(n) != negate]


def option_values(args: list[str], option: str) -> list[str]:
    """Every value of `--option=VALUE` or `--option VALUE` in args."""
    values = []
    for i, arg in enumerate(args):
        if arg.startswith(option + "="):
            values.append(arg.split("=", 1)[1])
        elif arg == option and i + 1 < len(args):
            values.append(args[i + 1])
    return values


def without_option(args: list[str], option: str) -> list[str]:
    out, skip = [], False
    for arg in args:
        if skip:
            skip = False
        elif arg == option:
            skip = True
        elif not arg.startswith(option + "="):
            out.append(arg)
    return out


def check_filters(args: list[str], option: str) -> int:
    """Assert every filter of `option` selects a name; return the fewest any selects."""
    fewest = len(NAMES)
    for regex in option_values(args, option):
        chosen = selected(regex)
        assert chosen, f"{option}={regex!r} selects no benchmark of fixtures/docs/names.txt"
        fewest = min(fewest, len(chosen))
    return fewest


# --- the machine ------------------------------------------------------------------------------

def gpu_count() -> int:
    if not shutil.which("nvidia-smi"):
        return 0
    try:
        listed = subprocess.run(["nvidia-smi", "-L"], capture_output=True, text=True, timeout=60)
    except (OSError, subprocess.TimeoutExpired):
        return 0
    return sum(line.startswith("GPU ") for line in listed.stdout.splitlines())


GPUS = gpu_count()


def skip_if_device_missing(args: list[str]) -> None:
    for value in option_values(args, "--device"):
        if int(value) >= GPUS:
            pytest.skip(f"names GPU {value}; this machine has {GPUS}")


# --- the classes of commands ------------------------------------------------------------------

def split(command: Command) -> tuple[dict[str, str], list[str]]:
    """(leading VAR=value assignments, the words of the command)."""
    words = shlex.split(command.text)
    env = {}
    while words and ENV_ASSIGNMENT.fullmatch(words[0]) and not words[0].startswith("--"):
        name, value = words.pop(0).split("=", 1)
        env[name] = value
    assert words, f"{command}: no command"
    return env, words


def classify(words: list[str]) -> str:
    first = words[0]
    if first in ("scripts/gmb", "gmb"):
        sub = words[1] if len(words) > 1 else ""
        if sub in ANALYSIS:
            return "analysis"
        if sub in ("run", "ncu", "fleet", "pattern"):
            return f"gmb-{sub}"
        return "unknown"
    if BINARY.fullmatch(first):
        return "binary"
    if first in SKIPPED:
        return "skipped"
    if first.startswith("python") and words[1:3] == ["-m", "pip"]:
        return "skipped"
    if first.startswith("python") and words[1:3] == ["-m", "pytest"]:
        return "pytest"
    return "unknown"


def test_the_docs_have_commands():
    assert len(DOC_FILES) > 1, "docs/*.md not found"
    assert ALL_COMMANDS, "no ```sh block found"
    kinds = {classify(split(c)[1]) for c in ALL_COMMANDS}
    assert {"analysis", "binary", "gmb-run"} <= kinds


@pytest.mark.parametrize("command", ALL_COMMANDS, ids=str)
def test_documented_command(command, tmp_path):
    env, words = split(command)
    kind = classify(words)
    assert kind != "unknown", f"{command}: not a command this test knows; add a rule for it"
    if kind != "skipped":
        assert not SHELL_OPERATORS & set(words), f"{command}: one command per line, please"
    if kind == "skipped":
        pytest.skip(SKIPPED.get(words[0], "installing the package is test_install's job"))
    if kind == "pytest":
        pytest.skip("the Python test suite itself")
    if kind == "analysis":
        run_analysis(command, words, tmp_path)
    elif kind == "binary":
        check_binary(command, env, words)
    elif kind == "gmb-run":
        check_gmb_run(command, words, tmp_path)
    elif kind == "gmb-fleet":
        check_gmb_fleet(command, words, tmp_path)
    elif kind == "gmb-pattern":
        check_gmb_pattern(command, words, tmp_path)
    else:
        check_gmb_ncu(words)


# --- analysis commands: for real, on the fixture run ------------------------------------------

def run_analysis(command: Command, words: list[str], tmp_path: Path) -> None:
    sub, args = words[1], words[2:]
    runs: dict[str, Path] = {}

    def run_copy(path: str) -> str:
        if path not in runs:
            runs[path] = tmp_path / f"run{len(runs) + 1}"
            shutil.copytree(FIXTURE_RUN, runs[path])
        return str(runs[path])

    placeholders = {"A.json": "default.json", "B.json": "cg.json"}
    new_args = []
    for arg in args:
        if arg.startswith("/tmp/"):  # the documented path, before any substitution
            arg = str(tmp_path / "tmp" / arg[len("/tmp/"):])
        arg = RESULTS_PATH.sub(lambda m: run_copy(m.group(0)), arg)
        if arg in placeholders:
            arg = str(Path(run_copy("placeholders")) / placeholders[arg])
        if "*" in arg or "?" in arg:
            matched = sorted(str(p) for p in Path("/").glob(arg.lstrip("/")))
            assert matched, f"{command}: {arg} matches no file"
            new_args.extend(matched)
            continue
        new_args.append(arg)
    for regex in option_values(new_args, "--filter"):
        assert any(re.search(regex, n) for n in NAMES), f"--filter {regex!r} selects nothing"

    (tmp_path / "tmp").mkdir(exist_ok=True)
    proc = subprocess.run([sys.executable, str(GMB), sub, *new_args], cwd=tmp_path,
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, f"{command}\n{proc.stdout}\n{proc.stderr}"
    assert "Traceback" not in proc.stderr, proc.stderr

    def out(option):
        values = option_values(new_args, option)
        return [tmp_path / v for v in values]  # absolute values stay absolute

    folders = [Path(a) for a in new_args if not a.startswith("-") and Path(a).is_dir()]
    promised: list[Path] = []
    if sub == "summary":
        promised += [f / "summary.md" for f in folders]
    if sub in ("plot", "report"):
        figures = out("--out") or [f / "figures" for f in folders]
        promised += [d / f"{name}.{ext}" for d in figures for name in FIGURES
                     for ext in ("png", "svg") if ext == "png" or "--svg" in new_args]
    if sub == "report":
        promised += [f / "report.md" for f in folders]
    promised += out("--csv") + out("--md")
    if sub in ("load", "compare"):
        assert proc.stdout.strip(), f"{command}: printed nothing"
    for path in promised:
        assert path.is_file() and path.stat().st_size > 0, f"{command}: {path} not written"


# --- GPU-only commands: filters checked everywhere, run where a GPU is ------------------------

def check_binary(command: Command, env: dict[str, str], words: list[str]) -> None:
    args = words[1:]
    checked = bool(option_values(args, "--benchmark_filter"))
    check_filters(args, "--benchmark_filter")
    if not GPUS:
        if checked:
            return
        pytest.skip("needs a GPU (nvidia-smi -L lists none); no filter to check without one")
    skip_if_device_missing(args)
    binary = REPO / "build" / "release" / BINARY.fullmatch(words[0]).group(1)
    if not binary.is_file():
        pytest.skip(f"{binary.relative_to(REPO)} is not built")
    info = "--gmb_info" in args
    argv = [str(binary), *args, *([] if info else ["--benchmark_list_tests=true"])]
    proc = subprocess.run(argv, cwd=REPO, env={**os.environ, **env}, capture_output=True,
                          text=True, timeout=120)
    assert proc.returncode == 0, f"{command}\n{proc.stderr}"
    if info:
        assert isinstance(json.loads(proc.stdout), dict)
    else:
        assert [line for line in proc.stdout.splitlines() if line.strip()], "no name printed"


def check_gmb_run(command: Command, words: list[str], tmp_path: Path) -> None:
    args = words[2:]
    if not option_values(args, "--benchmark_filter"):
        pytest.skip("runs the whole suite: the full run is the device run itself")
    fewest = check_filters(args, "--benchmark_filter")
    if not GPUS:
        return
    skip_if_device_missing(args)
    if fewest > LIST_LIMIT:
        pytest.skip(f"the filter selects {fewest} benchmarks (> {LIST_LIMIT}): the full run is"
                    " the device run itself")
    args = without_option(without_option(without_option(args, "--out"), "--repetitions"),
                          "--benchmark_min_time")
    argv = [sys.executable, str(GMB), "run", *args, "--out", str(tmp_path), "--repetitions", "1",
            "--benchmark_min_time=0.001"]
    proc = subprocess.run(argv, cwd=REPO, capture_output=True, text=True, timeout=1800)
    assert proc.returncode == 0, f"{command}\n{proc.stdout[-4000:]}\n{proc.stderr[-4000:]}"
    assert list(tmp_path.glob("*/*/summary.md")), "no results folder with summary.md"


def check_gmb_fleet(command: Command, words: list[str], tmp_path: Path) -> None:
    """`report` runs for real on a fleet of two tasks made from the fixture run; `submit` is
    parsed here (test_fleet.py submits for real to a real Slurm)."""
    from gmbtools import fleet
    from gmbtools.cli import build_parser

    args, extra = build_parser().parse_known_args(words[1:])
    assert not extra, f"{command}: unknown options {extra}"
    if args.fleet_command == "submit":
        pytest.skip("options parsed; test_fleet.py submits to a real Slurm")
    assert args.fleet_command == "report", f"{command}: not a step users type"
    folder = tmp_path / "fleet"
    folder.mkdir()
    fleet.save_manifest(folder, fleet.Manifest(
        created="now", nodes=1, tasks_per_node=2, tasks=2, binary="gmembench", repetitions=1,
        task_timeout_s=60, time_limit="00:05:00", launcher=["sbatch"]))
    doc = json.loads((FIXTURE_RUN / "default.json").read_text())
    for rank in range(2):
        where = folder / "node0" / f"GPU-{rank}"
        where.mkdir(parents=True)
        (where / fleet.SCREEN_JSON).write_text(json.dumps(doc))
        (where / fleet.STATUS).write_text(json.dumps(
            {"host": "node0", "rank": rank, "state": "ok", "gpu_uuid": f"GPU-{rank}",
             "gpu_name": doc["context"]["gpu_name"]}))
    proc = subprocess.run([sys.executable, str(GMB), "fleet", "report", str(folder)],
                          capture_output=True, text=True)
    assert proc.returncode == 0, f"{command}\n{proc.stderr}"
    assert "- GPUs screened: 2 of 2" in (folder / "report.md").read_text()


# A stand-in for gmembench: prints the synthetic pattern run (fixtures/pattern) as the binary
# prints its JSON, whatever it is asked.
FAKE_PATTERN_BINARY = """#!{python}
import sys
sys.stdout.write(open({fixture!r}, encoding="utf-8").read())
"""


def check_gmb_pattern(command: Command, words: list[str], tmp_path: Path) -> None:
    """Runs the documented command for real but for the binary (a stand-in that prints a
    synthetic run): its options parse, it explains, --save writes its folder (under tmp)."""
    synthetic = Path(__file__).resolve().parent / "fixtures" / "pattern" / "synthetic.json"
    doc = json.loads(synthetic.read_text(encoding="utf-8"))
    doc["benchmarks"] = [b for b in doc["benchmarks"] if not b.get("error_occurred")]
    fixture = tmp_path / "run.json"
    fixture.write_text(json.dumps(doc, ensure_ascii=False), encoding="utf-8")
    fake = tmp_path / "gmembench"
    fake.write_text(FAKE_PATTERN_BINARY.format(python=sys.executable, fixture=str(fixture)))
    fake.chmod(0o755)
    args = [*words[2:], "--binary", str(fake)]
    if "--save" in args:
        args += ["--out", str(tmp_path / "results")]
    proc = subprocess.run([sys.executable, str(GMB), "pattern", *args], cwd=tmp_path,
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, f"{command}\n{proc.stdout}\n{proc.stderr}"
    assert "Traceback" not in proc.stderr, proc.stderr
    if "--save" in args:
        assert list((tmp_path / "results").glob("*/*-pattern/explanation.md")), "nothing saved"


def check_gmb_ncu(words: list[str]) -> None:
    assert option_values(words[2:], "--filter"), "gmb ncu needs --filter"
    check_filters(words[2:], "--filter")
    pytest.skip("filter checked; profiling under Nsight Compute is a device run of its own")


# --- the checks of the extraction and of the pages themselves ---------------------------------

def test_extraction():
    path = DOCS_FIXTURES / "extraction.md"
    assert [c.text for c in sh_commands(path)] == [
        "scripts/gmb run --flavors default,cg",
        "build/release/gmembench --benchmark_filter='^a #b$' --gmb_info",
        "scripts/gmb compare A.json B.json --all",
    ]
    assert [c.line for c in sh_commands(path)] == [4, 6, 8]


def test_filter_semantics():
    names = ["copy/f32x4/ilp:1/grid:full", "stride/f32/read/s:8", "ref/memset"]
    assert selected("^copy/f32x4/ilp:1/grid:full$", names) == names[:1]
    assert selected("s:8/", names) == names[1:2]  # matches only with /manual_time
    assert selected("-^ref/", names) == names[:2]
    assert selected("^nothing/", names) == []
    assert selected("all", names) == selected("", names) == names
    with pytest.raises(AssertionError):
        selected(r"^stride/f32/read/s:\d+$", names)


def test_readme_is_a_front_page():
    size = len((REPO / "README.md").read_bytes())
    assert size <= README_LIMIT, f"README.md is {size} bytes; move sections into docs/"


LINK = re.compile(r"\]\(([^)\s]+)\)")


def _anchors(path: Path) -> set[str]:
    """GitHub's heading anchors: lower case, punctuation dropped, spaces to hyphens."""
    anchors = set()
    for line in path.read_text().splitlines():
        if line.startswith("#"):
            text = line.lstrip("#").strip().lower()
            anchors.add(re.sub(r"[^\w\- ]", "", text).replace(" ", "-"))
    return anchors


@pytest.mark.parametrize("doc", DOC_FILES, ids=lambda p: str(p.relative_to(REPO)))
def test_relative_links_resolve(doc):
    """Links into results/ are checked only where results/ exists (the tests must pass
    without it); links out of the repository (../shared/DESIGN.md) are not checked."""
    for target in LINK.findall(doc.read_text()):
        if re.match(r"[a-z]+:", target):
            continue
        file_part, _, anchor = target.partition("#")
        path = (doc.parent / file_part).resolve() if file_part else doc
        if REPO not in path.parents and path != REPO:
            continue
        if (REPO / "results") in [path, *path.parents] and not (REPO / "results").is_dir():
            continue
        assert path.exists(), f"{doc.relative_to(REPO)}: {target} does not exist"
        if anchor:
            assert anchor in _anchors(path), f"{doc.relative_to(REPO)}: no heading #{anchor}"
