"""Every command of every ```sh block in README.md and docs/*.md is run or checked.

- `scripts/gmb summary|load|plot|report|compare ...` (and `gmb ...`, the installed command) run
  for real, as written, from the root of a clean clone (a fresh git repository): every
  `results/<slug>/<stamp>` path it names (and RESULTS_DIR) is there a copy of fixtures/docs/run
  (trimmed from a committed H200 run by fixtures/trim_run.py), A.json/B.json two of its files,
  /tmp/... a folder under tmp_path; each must exit 0, write what it promises and leave
  `git status --porcelain` of the clone empty (a documented command must not change a clone).
- `build/<preset>/gmembench[-ca|-cg] ...`, `scripts/gmb run ...`, `scripts/gmb ncu ...`: every
  filter must select at least one name of fixtures/docs/names.txt with gmembench's rules
  (re.search on the name without or with `/manual_time`; a leading `-` negates). On a machine
  with a GPU, binaries run with `--benchmark_list_tests=true` and `gmb run` runs for real when
  its filter selects at most 10 benchmarks.
- `gmembench --gmb_pattern=EXPR ...` and `scripts/gmb pattern EXPR ...`: every expression is
  evaluated here, over the threads the binary would launch on the fixture run's GPU (an H200),
  and must give each thread's slots defined, distinct elements inside [0, n), as the binary's
  index table requires; `gmb pattern` then runs for real but for the binary (a stand-in).
- `scripts/gmb peers ...`: parsed (measuring every pair of a node is a device run of its own).
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

import numpy as np
import pytest

from conftest import GMB, SCRIPTS, git_commit_all, git_status

REPO = SCRIPTS.parent
DOC_FILES = [REPO / "README.md", *sorted((REPO / "docs").glob("*.md"))]
DOCS_FIXTURES = Path(__file__).resolve().parent / "fixtures" / "docs"
FIXTURE_RUN = DOCS_FIXTURES / "run"
# `gmembench --benchmark_list_tests` output: the names with Google Benchmark's suffix.
NAMES = [n.removesuffix("/manual_time")
         for n in (DOCS_FIXTURES / "names.txt").read_text().splitlines() if n]
README_LIMIT = 12288  # bytes: the front page must stay a front page
# The GPU assumed where a documented command leaves the pattern array at the suite's default.
FIXTURE_ARRAY_BYTES = int(json.loads((FIXTURE_RUN / "default.json").read_text())["context"]
                          ["gmb_array_bytes"])

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

def gpu_count(environ=os.environ) -> int:
    """The GPUs the binaries see: those nvidia-smi lists, fewer where CUDA_VISIBLE_DEVICES
    hides some (`--device=1` does not exist for a binary that sees one GPU)."""
    if not shutil.which("nvidia-smi"):
        return 0
    try:
        listed = subprocess.run(["nvidia-smi", "-L"], capture_output=True, text=True, timeout=60)
    except (OSError, subprocess.TimeoutExpired):
        return 0
    return visible_gpus(sum(line.startswith("GPU ") for line in listed.stdout.splitlines()),
                        environ)


def visible_gpus(listed: int, environ) -> int:
    if "CUDA_VISIBLE_DEVICES" not in environ:
        return listed
    return min(listed, len([d for d in environ["CUDA_VISIBLE_DEVICES"].split(",") if d.strip()]))


def test_visible_gpus_follow_cuda_visible_devices():
    assert visible_gpus(2, {}) == 2
    assert visible_gpus(2, {"CUDA_VISIBLE_DEVICES": "1"}) == 1
    assert visible_gpus(2, {"CUDA_VISIBLE_DEVICES": ""}) == 0
    assert visible_gpus(1, {"CUDA_VISIBLE_DEVICES": "0,1"}) == 1


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
        if sub in ("run", "ncu", "fleet", "pattern", "peers", "advise"):
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
    elif kind == "gmb-peers":
        check_gmb_peers(command, words)
    elif kind == "gmb-advise":
        check_gmb_advise(words)
    else:
        check_gmb_ncu(words)


# --- analysis commands: for real, on the fixture run, in a clean clone -------------------------

PLACEHOLDERS = {"A.json": "default.json", "B.json": "cg.json"}  # the docs' two files to compare


def documented_clone(tmp_path: Path, args: list[str]) -> Path:
    """A clean clone as the command sees it: a git repository with everything committed, where
    each results folder the command names (results/<slug>/<stamp>, RESULTS_DIR) is a copy of the
    fixture run and A.json, B.json two of its files. The command runs there as written."""
    clone = tmp_path / "clone"
    (clone / "scripts").mkdir(parents=True)
    for arg in args:
        for path in RESULTS_PATH.findall(arg):
            if not (clone / path).is_dir():
                shutil.copytree(FIXTURE_RUN, clone / path)
        if arg in PLACEHOLDERS:
            shutil.copy(FIXTURE_RUN / PLACEHOLDERS[arg], clone / arg)
    return git_commit_all(clone)


def run_analysis(command: Command, words: list[str], tmp_path: Path) -> None:
    """Runs the command as written, from the root of a clean clone (documented_clone); it must
    exit 0, write what it promises and leave `git status --porcelain` of the clone empty."""
    sub, args = words[1], words[2:]
    if (REPO / "results").is_dir():
        for arg in args:
            for path in RESULTS_PATH.findall(arg):
                assert path == "RESULTS_DIR" or (REPO / path).is_dir(), \
                    f"{command}: {path} is not a committed results folder"
    clone = documented_clone(tmp_path, args)
    new_args = []
    for arg in args:
        if arg.startswith("/tmp/"):  # the documented path, before any substitution
            arg = str(tmp_path / "tmp" / arg[len("/tmp/"):])
        if "*" in arg or "?" in arg:
            root = Path("/") if arg.startswith("/") else clone
            matched = sorted(str(p) for p in root.glob(arg.lstrip("/")))
            assert matched, f"{command}: {arg} matches no file"
            new_args.extend(matched)
            continue
        new_args.append(arg)
    for regex in option_values(new_args, "--filter"):
        assert any(re.search(regex, n) for n in NAMES), f"--filter {regex!r} selects nothing"

    (tmp_path / "tmp").mkdir(exist_ok=True)
    proc = subprocess.run([sys.executable, str(GMB), sub, *new_args], cwd=clone,
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, f"{command}\n{proc.stdout}\n{proc.stderr}"
    assert "Traceback" not in proc.stderr, proc.stderr
    changed = git_status(clone)
    assert not changed, f"{command}: leaves the checkout changed (write under /tmp/, --out):\n" \
                        f"{changed}"

    def out(option):
        values = option_values(new_args, option)
        return [clone / v for v in values]  # absolute values stay absolute

    folders = [clone / a for a in new_args if not a.startswith("-") and (clone / a).is_dir()]
    targets = out("--out") or folders  # where summary.md, report.md (and its figures/) go
    promised: list[Path] = []
    if sub == "summary":
        promised += [d / "summary.md" for d in targets]
    if sub in ("plot", "report"):
        figures = out("--out") if sub == "plot" and out("--out") else \
            [d / "figures" for d in (targets if sub == "report" else folders)]
        promised += [d / f"{name}.{ext}" for d in figures for name in FIGURES
                     for ext in ("png", "svg") if ext == "png" or "--svg" in new_args]
    if sub == "report":
        promised += [d / "report.md" for d in targets]
    promised += out("--csv") + out("--md")
    if sub in ("load", "compare"):
        assert proc.stdout.strip(), f"{command}: printed nothing"
    for path in promised:
        assert path.is_file() and path.stat().st_size > 0, f"{command}: {path} not written"


@pytest.mark.parametrize("text", [
    "scripts/gmb summary results/nvidia-h200/20261123-214741",  # beside the committed JSON
    "scripts/gmb load results/nvidia-h200/20261123-214741 --csv all.csv",  # into the checkout
])
def test_a_command_that_writes_into_the_checkout_fails(text, tmp_path):
    command = Command("docs/x.md", 1, text)
    with pytest.raises(AssertionError, match="leaves the checkout changed"):
        run_analysis(command, split(command)[1], tmp_path)


# --- pattern expressions: the binary's index-table check, without a GPU -----------------------

# What the binary's table kernel (kernels/pattern_rtc.cuh, gmb_pattern_table) refuses, checked
# here for every documented --gmb_pattern: a slot undefined (division by zero, shift out of
# range), outside [0, n), or repeating an earlier slot of its thread. Without this a command
# that overruns the array passes CI on machines without a GPU and fails on the first GPU.
PATTERN_VARIABLES = ("i", "lane", "warp", "tid", "block", "k", "n")
PATTERN_TOKEN = re.compile(r"\s*(?:(?P<number>0[xX][0-9a-fA-F]+|0[bB][01]+|\d+)(?P<suffix>\w*)"
                           r"|(?P<name>[A-Za-z_]\w*)"
                           r"|(?P<op><<|>>|<=|>=|==|!=|&&|\|\||[-+*/%<>&|^~!?:(),]))")
# C++'s binary operators, tighter binding higher (all left-associative).
PATTERN_PRECEDENCE = {"||": 1, "&&": 2, "|": 3, "^": 4, "&": 5, "==": 6, "!=": 6, "<": 7,
                      "<=": 7, ">": 7, ">=": 7, "<<": 8, ">>": 8, "+": 9, "-": 9, "*": 10,
                      "/": 10, "%": 10}
# Types: GMB_INT is gmb_int (every variable; 64-bit signed, as gmb_i64); literals and what is
# computed from literals alone keep C++'s own type (bits, signed) until they meet a variable,
# so `-1u` is 4294967295 as on the GPU. `bool` (&&, ||, comparisons of literals) acts as int.
GMB_INT, INT = None, (32, True)
EVERY_THREAD = 1 << 25  # slots: up to this many, every thread is evaluated (~1 s); else samples
PATTERN_CHUNK = 1 << 21  # threads evaluated at once (bounds the arrays at 16 MiB each)
WORD_BYTES = {"f32": 4, "f64": 8, "f32x2": 8, "f32x4": 16}


def _literal(text: str, suffix: str) -> tuple:
    """("num", value, type): an integer literal with C++'s type for it, the first of int,
    unsigned int, 64-bit signed, 64-bit unsigned that holds it (l/ll: 64-bit only; u: unsigned
    only; a decimal without u: signed only)."""
    base = {"0x": 16, "0X": 16, "0b": 2, "0B": 2}.get(text[:2], 8 if text[0] == "0" else 10)
    value = int(text[2:] if base in (2, 16) else text, base)
    s = suffix.lower()
    assert re.fullmatch(r"u?(l|ll)?|(l|ll)u", s) and "lL" not in suffix and "Ll" not in suffix, \
        f"invalid integer literal {text + suffix!r}"
    for bits in (64,) if "l" in s else (32, 64):
        for signed in (True, False):
            allowed = "u" not in s if signed else "u" in s or base != 10
            if allowed and value < 1 << (bits - signed):
                return ("num", value, (bits, signed))
    raise AssertionError(f"integer literal {text + suffix!r} is too large")


def parse_pattern(expr: str):
    """The expression as a tree of tuples, from the tokens kernels/pattern_rtc.cuh's grammar
    allows (include/gmb/pattern_expr.hpp refuses the rest): nothing is passed to eval."""
    tokens, pos = [], 0
    while expr[pos:].strip():
        m = PATTERN_TOKEN.match(expr, pos)
        assert m, f"pattern {expr!r}: unexpected {expr[pos:].strip()[:10]!r}"
        if m["number"]:
            tokens.append(_literal(m["number"], m["suffix"]))
        elif m["name"]:
            assert m["name"] in (*PATTERN_VARIABLES, "min", "max"), \
                f"pattern {expr!r}: unknown name {m['name']!r}"
            tokens.append(m["name"])
        else:
            tokens.append(m["op"])
        pos = m.end()
    at = 0

    def peek():
        return tokens[at] if at < len(tokens) else None

    def take(expected=None):
        nonlocal at
        token = peek()
        assert token is not None and expected in (None, token), \
            f"pattern {expr!r}: expected {expected or 'more'}, found {token}"
        at += 1
        return token

    def conditional():  # a ? b : c, right-associative, below every binary operator
        cond = binary(1)
        if peek() != "?":
            return cond
        take("?")
        yes = conditional()
        take(":")
        return ("?:", cond, yes, conditional())

    def binary(lowest):
        left = unary()
        while isinstance(peek(), str) and PATTERN_PRECEDENCE.get(peek(), 0) >= lowest:
            op = take()
            left = (op, left, binary(PATTERN_PRECEDENCE[op] + 1))
        return left

    def unary():
        if peek() in ("+", "-", "~", "!"):
            return ("unary" + take(), unary())
        token = take()
        if isinstance(token, tuple):
            return token
        if token == "(":
            inner = conditional()
            take(")")
            return inner
        if token in ("min", "max"):
            take("(")
            a = conditional()
            take(",")
            b = conditional()
            take(")")
            return (token, a, b)
        assert token in PATTERN_VARIABLES, f"pattern {expr!r}: unexpected {token!r}"
        return ("var", token)

    tree = conditional()
    assert peek() is None, f"pattern {expr!r}: unexpected {peek()!r}"
    return tree


def _wrap(v, t):
    """v (int64 storage) as a value of type t: 64-bit types are the int64 bits themselves,
    32-bit ones are kept exact in the int64 (wrapped)."""
    if t is GMB_INT or t[0] == 64:
        return v
    return v & 0xFFFFFFFF if not t[1] else ((v + (1 << 31)) & 0xFFFFFFFF) - (1 << 31)


def _common(a, b):
    """C++'s usual arithmetic conversions; a variable on either side makes it gmb_int."""
    if a is GMB_INT or b is GMB_INT:
        return GMB_INT
    return (a[0], a[1] and b[1]) if a[0] == b[0] else max(a, b)


def _unsigned64(t) -> bool:  # the one type whose /, %, >> and comparisons differ from int64's
    return t == (64, False)


def _u64(v):
    return np.asarray(v, np.int64).view(np.uint64)


def _evaluate(node, env):
    """(value as int64 storage, undefined mask, type) of one node over the threads of env.
    Both sides of ?: are computed and selected per thread, so an undefined value counts only
    where it is selected; && and || likewise count their right side only where evaluated.
    Stricter than the binary in two corners, both undefined C++: an undefined operand of && or
    || (the binary's bool conversion drops the mark) and a literal-only `1 << 32` count here."""
    kind = node[0]
    if kind == "num":
        return np.int64(node[1] - (1 << 64) if node[1] >= 1 << 63 else node[1]), False, node[2]
    if kind == "var":
        return env[node[1]], False, GMB_INT
    if kind.startswith("unary"):
        v, bad, t = _evaluate(node[1], env)
        op = kind[5:]
        if op == "!":
            return (v == 0).astype(np.int64), bad, t if t is GMB_INT else INT
        return _wrap(-v if op == "-" else ~v if op == "~" else v, t), bad, t
    if kind == "?:":
        c, cbad, _ = _evaluate(node[1], env)
        (a, abad, ta), (b, bbad, tb) = _evaluate(node[2], env), _evaluate(node[3], env)
        t = _common(ta, tb)
        return (np.where(c != 0, _wrap(a, t), _wrap(b, t)),
                cbad | np.where(c != 0, abad, bbad), t)
    (a, abad, ta), (b, bbad, tb) = _evaluate(node[1], env), _evaluate(node[2], env)
    if kind in ("&&", "||"):
        evaluated = (a != 0) if kind == "&&" else (a == 0)
        value = (a != 0) & (b != 0) if kind == "&&" else (a != 0) | (b != 0)
        return value.astype(np.int64), abad | (bbad & evaluated), INT
    if kind in ("<<", ">>"):  # the left operand's type (gmb_int if either is); a count
        t = GMB_INT if tb is GMB_INT else ta  # outside [0, bits) is undefined
        wrong = (b < 0) | (b >= (64 if t is GMB_INT else t[0]))
        b = np.where(wrong, 0, b)
        if kind == "<<":
            v = a << b
        else:
            v = (_u64(a) >> _u64(b)).view(np.int64) if _unsigned64(t) else a >> b
        return _wrap(v, t), abad | bbad | wrong, t
    t = _common(ta, tb)
    a, b, bad = _wrap(a, t), _wrap(b, t), abad | bbad
    x, y = (_u64(a), _u64(b)) if _unsigned64(t) else (a, b)
    if kind in ("<", "<=", ">", ">=", "==", "!="):
        v = {"<": np.less, "<=": np.less_equal, ">": np.greater, ">=": np.greater_equal,
             "==": np.equal, "!=": np.not_equal}[kind](x, y)
        return v.astype(np.int64), bad, t if t is GMB_INT else INT
    if kind in ("min", "max"):
        return np.where((x < y) if kind == "min" else (x > y), a, b), bad, t
    if kind in ("/", "%"):  # C++ truncates toward zero: fmod is C's %, and then / is exact
        zero = y == 0
        y = np.where(zero, 1, y)
        r = np.fmod(x, y)
        v = r if kind == "%" else (x - r) // y
        return _wrap(np.asarray(v).view(np.int64) if _unsigned64(t) else v, t), bad | zero, t
    v = {"+": np.add, "-": np.subtract, "*": np.multiply, "&": np.bitwise_and,
         "|": np.bitwise_or, "^": np.bitwise_xor}[kind](a, b)
    return _wrap(v, t), bad, t


def pattern_fault(expr: str, threads: int, k: int, block: int, n: int) -> str | None:
    """What the binary says about the first thread with a bad slot (benchmarks/pattern.cu,
    build_table), or None. Every thread is evaluated when threads * k <= EVERY_THREAD; beyond,
    the first and the last PATTERN_CHUNK threads and PATTERN_CHUNK spread evenly between (the
    extremes of monotone and periodic expressions; the first bad thread found may then not be
    the first of all)."""
    tree = parse_pattern(expr)
    if threads * k <= EVERY_THREAD:
        chunks = [np.arange(s, min(s + PATTERN_CHUNK, threads), dtype=np.int64)
                  for s in range(0, threads, PATTERN_CHUNK)]
    else:
        chunks = [np.arange(PATTERN_CHUNK, dtype=np.int64),
                  np.linspace(PATTERN_CHUNK, threads - PATTERN_CHUNK - 1, PATTERN_CHUNK,
                              dtype=np.int64),
                  np.arange(threads - PATTERN_CHUNK, threads, dtype=np.int64)]
    for t in chunks:
        tid = t % block  # threadIdx.x; lane, warp and block as gmb_index_of computes them
        env = {"i": t, "lane": tid % 32, "warp": t // 32, "tid": tid, "block": t // block,
               "n": np.int64(n)}
        values, undefined, wrong = [], [], np.zeros(t.shape, bool)
        with np.errstate(all="ignore"):  # int64 wraps around, as on the GPU
            for slot in range(k):
                v, bad, _ = _evaluate(tree, {**env, "k": np.int64(slot)})
                v, bad = np.broadcast_to(v, t.shape), np.broadcast_to(bad, t.shape)
                wrong |= bad | (v < 0) | (v >= n)
                for earlier in values:
                    wrong |= v == earlier
                values.append(v)
                undefined.append(bad)
        if not wrong.any():
            continue
        j = int(np.argmax(wrong))
        thread, mine = f"thread i={t[j]}", [int(v[j]) for v in values]
        for s, v in enumerate(mine):  # in the binary's order: undefined, range, repeat
            at = f" (k={s})" if k > 1 else ""
            if undefined[s][j]:
                return f"{thread}{at} divides by zero or shifts by a negative count or 64 or more"
            if not 0 <= v < n:
                return f"{thread}{at} touches element {v}, outside [0, n={n})"
            if v in mine[:s]:
                return f"{thread} touches element {v} in slots k={mine.index(v)} and k={s}"
    return None


def _size(text: str) -> int:
    """include/gmb/sizing.hpp's parse_bytes: "1G", "512M", "64MiB", "8388608"."""
    m = re.fullmatch(r"(\d+)(b|k|kib|m|mib|g|gib|t|tib)?", text, re.IGNORECASE)
    assert m, f"{text!r} is not a size"
    return int(m[1]) << 10 * "bkmgt".index((m[2] or "b")[0].lower())


def check_patterns(command: Command, args: list[str]) -> None:
    """Each --gmb_pattern of the binary's arguments over the launch the binary would make
    (benchmarks/pattern.cu, pattern_cases): n from --gmb_pattern_n, else _bytes, else the
    suite's array (--gmb_bytes, else the fixture run's gmb_array_bytes: a committed H200 run's,
    the GPU assumed here), / the word; threads from --gmb_pattern_threads, else n / K."""
    def last(option, default):
        return (option_values(args, option) or [default])[-1]

    word = last("--gmb_pattern_word", "f32")
    word_bytes = WORD_BYTES.get(word) or int(word[1:])
    k, block = int(last("--gmb_pattern_k", 1)), int(last("--gmb_pattern_block", 256))
    array, pattern_bytes = last("--gmb_bytes", None), last("--gmb_pattern_bytes", None)
    array_bytes = -(-_size(array) // 2**20) * 2**20 if array else FIXTURE_ARRAY_BYTES  # whole MiB
    n = int(last("--gmb_pattern_n", 0)) or \
        (_size(pattern_bytes) if pattern_bytes else array_bytes) // word_bytes
    threads = int(last("--gmb_pattern_threads", 0)) or n // k
    for expr in option_values(args, "--gmb_pattern"):
        fault = pattern_fault(expr, threads, k, block, n)
        assert fault is None, f"{command}: --gmb_pattern '{expr}': {fault} (n={n}, " \
                              f"threads={threads}, K={k}: the binary refuses it)"


def gmb_pattern_binary_args(words: list[str]) -> list[str]:
    """The binary's arguments for `gmb pattern ...`, as gmb pattern makes them."""
    from gmbtools.commands import pattern
    from gmbtools.commands.cli import build_parser

    args, extra = build_parser().parse_known_args(words[1:])
    options = pattern.Options(
        expressions=(*args.expressions, *(a for a in extra if not a.startswith("-"))),
        op=args.op, word=args.word, k=args.k, block=args.block, n=args.n, bytes=args.bytes,
        threads=args.threads, passthrough=tuple(a for a in extra if a.startswith("-")))
    return pattern.command("gmembench", options)[1:]


# --- GPU-only commands: filters checked everywhere, run where a GPU is ------------------------

def check_binary(command: Command, env: dict[str, str], words: list[str]) -> None:
    args = words[1:]
    checked = any(option_values(args, o) for o in ("--benchmark_filter", "--gmb_pattern"))
    check_filters(args, "--benchmark_filter")
    check_patterns(command, args)
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
    from gmbtools.data import fleet_folder
    from gmbtools.commands.cli import build_parser

    args, extra = build_parser().parse_known_args(words[1:])
    assert not extra, f"{command}: unknown options {extra}"
    if args.fleet_command == "submit":
        pytest.skip("options parsed; test_fleet.py submits to a real Slurm")
    assert args.fleet_command == "report", f"{command}: not a step users type"
    # No fleet folder is committed: a documented one is a placeholder, never a real stamp.
    assert not re.search(r"\d{8}-\d{6}", str(args.fleet_dir)), \
        f"{command}: no such fleet folder is committed; write its stamp as YYYYmmdd-HHMMSS"
    folder = tmp_path / "fleet"
    folder.mkdir()
    fleet_folder.save_manifest(folder, fleet_folder.Manifest(
        created="now", nodes=1, tasks_per_node=2, tasks=2, binary="gmembench", repetitions=1,
        task_timeout_s=60, time_limit="00:05:00", launcher=["sbatch"]))
    doc = json.loads((FIXTURE_RUN / "default.json").read_text())
    for rank in range(2):
        where = folder / "node0" / f"GPU-{rank}"
        where.mkdir(parents=True)
        (where / fleet_folder.SCREEN_JSON).write_text(json.dumps(doc))
        (where / fleet_folder.STATUS).write_text(json.dumps(
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
    synthetic run): its options parse, it explains, --save writes its folder (under tmp). The
    expressions are checked first, as the binary checks them."""
    check_patterns(command, gmb_pattern_binary_args(words))
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


def check_gmb_peers(command: Command, words: list[str]) -> None:
    """Parsed here (options and passthrough as gmb checks them); measuring every pair of a node
    is a device run of its own (test_peer_matrix.py runs it with a stand-in binary)."""
    from gmbtools.commands import peers as peer_matrix
    from gmbtools.commands.cli import build_parser

    args, extra = build_parser().parse_known_args(words[1:])
    peer_matrix.check_passthrough(extra)
    assert args.command == "peers", f"{command}: not gmb peers"
    pytest.skip("options parsed; every pair of a node is a device run of its own")


def check_gmb_ncu(words: list[str]) -> None:
    assert option_values(words[2:], "--filter"), "gmb ncu needs --filter"
    check_filters(words[2:], "--filter")
    pytest.skip("filter checked; profiling under Nsight Compute is a device run of its own")


def check_gmb_advise(words: list[str]) -> None:
    """A documented `gmb advise`: its results folder exists; a committed export it names runs
    for real; an application after -- needs Nsight Compute and a GPU: its options are checked
    by the parser (with --help standing in for the profile)."""
    args = words[2:]
    for folder in option_values(args, "--results"):
        assert (REPO / folder).is_dir(), f"gmb advise --results {folder}: no such folder"
    if "--" in args:
        done = subprocess.run([sys.executable, str(GMB), "advise", *args[:args.index("--")],
                               "--help"], capture_output=True, text=True)
        assert done.returncode == 0, done.stderr
        pytest.skip("options checked; profiling an application is a device run of its own")
    done = subprocess.run([sys.executable, str(GMB), "advise", *args], cwd=REPO,
                          capture_output=True, text=True)
    assert done.returncode == 0, done.stderr


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


# docs/pattern.md:75 as it was: `i * 8` over the default n / K threads, past the array's end.
OLD_PATTERN_EXAMPLE = Command("docs/pattern.md", 75, "build/release/gmembench --gmb_pattern="
                              "'i * 8' --gmb_pattern_op=gather --benchmark_filter="
                              "'^(pattern/|stride/f32/read/s:8$)'")


def _pattern_args(command: Command) -> list[str]:
    words = split(command)[1]
    return gmb_pattern_binary_args(words) if words[0] == "scripts/gmb" else words[1:]


def test_pattern_check_refuses_an_index_past_the_array():
    gmb = Command("docs/x.md", 1, "scripts/gmb pattern i 'i * 8' --op gather")
    for old in (OLD_PATTERN_EXAMPLE, gmb):
        refused = rf"^{old.doc}:{old.line}: .*'i \* 8': thread i=\d+ touches element \d+, " \
                  rf"outside \[0, n={FIXTURE_ARRAY_BYTES // 4}\)"
        with pytest.raises(AssertionError, match=refused):
            check_patterns(old, _pattern_args(old))
    fixed = [c for c in ALL_COMMANDS if "--gmb_pattern='i * 8'" in c.text]
    assert fixed, "docs/pattern.md's gmembench --gmb_pattern example is gone"
    hashed = Command("docs/x.md", 1, "gmembench --gmb_pattern='(i * 2654435761u) % n'")
    for command in (*fixed, hashed, Command("docs/x.md", 1, gmb.text + " --threads 16777216")):
        check_patterns(command, _pattern_args(command))  # no assertion


@pytest.mark.parametrize("expr, k, fault", [
    ("i * 4 + k", 4, None),
    ("i", 2, "thread i=0 touches element 0 in slots k=0 and k=1"),
    ("block * 256 + tid == i && warp * 32 + lane == i ? i : n", 1, None),
    ("(i - 3) / 2 + 1", 1, None),  # C++ truncates: -3 / 2 is -1
    ("i == 2 ? 2 : i * (i - 2) / (i - 2)", 1, None),  # undefined only where selected
    ("i / (i - 1)", 1, "thread i=1 divides by zero or shifts by a negative count or 64 or more"),
    ("i + -1u", 1, "thread i=0 touches element 4294967295, outside [0, n=1024)"),  # unsigned int
    ("min(i, 1023) * 0x4000000000000000 / 0x4000000000000000", 1,  # int64 wraps around
     "thread i=2 touches element -2, outside [0, n=1024)"),
])
def test_pattern_evaluation(expr, k, fault):
    assert pattern_fault(expr, threads=256, k=k, block=256, n=1024) == fault


@pytest.mark.parametrize("expr", ["i = 1", "i += 1", "1.5", "1e5", "x", "i, 2", "min(i)", "(i",
                                  "0x", "8lL", "__import__('os')"])
def test_pattern_grammar_refused(expr):
    with pytest.raises(AssertionError):
        parse_pattern(expr)


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
