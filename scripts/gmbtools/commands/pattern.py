"""`gmb pattern EXPR...`: measure the user's own index expressions and explain what they cost.

One run of one flavor's binary (built as `gmb run` builds it, or `--binary`): every expression
(`--gmb_pattern=EXPR`, one benchmark each) plus what the explanation compares them with, the
driver's copy and fill (the roof), the DRAM chase (the latency of Little's law) and, with
--compare, the built-ins each class behaves like. Google Benchmark's JSON comes on stdout; the
binary's own lines on stderr are passed on as they come, but its one-line error becomes gmb's.
analysis/pattern_explain.py turns the JSON into the explanation, present/pattern_text.py words
it; --save keeps everything in a new folder
`results/<gpu_slug>/<YYYYmmdd-HHMMSS>-pattern/` (pattern.json.gz, explanation.md and, for two
expressions or more, pattern.png).

Standard library only, like `gmb run` (the figure needs matplotlib and says so where it is
missing).
"""

import json
import os
import re
import shlex
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager, redirect_stdout
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import TextIO

from gmbtools.analysis import pattern_class
from gmbtools.analysis import pattern_explain as explain
from gmbtools.commands import binaries, run_options, stopping
from gmbtools.commands.pattern_binary import run_binary
from gmbtools.commands.repo import find_repo
from gmbtools.data import files, packing, results
from gmbtools.data.files import WRITE_FAULT_STATUS
from gmbtools.data.flavors import BINARIES
from gmbtools.errors import GmbError
from gmbtools.present import pattern_text

# Options gmb pattern sets itself: the last copy of a flag wins, so a user's copy would change
# what the explanation reads; refuse it, saying what to use instead.
_RESERVED = {
    "--benchmark_filter": "gmb pattern picks the benchmarks (--no-compare: fewer)",
    "--benchmark_format": "gmb pattern reads JSON on stdout",
    "--benchmark_out": "--save keeps the JSON",
    "--benchmark_out_format": "--save keeps the JSON",
    "--benchmark_repetitions": "use --repetitions R",
    "--benchmark_list_tests": "gmb pattern runs the benchmarks",
    "--gmb_pattern": "give the expressions as arguments",
    "--gmb_info": "gmb pattern runs the benchmarks",
    "--gmb_progress": "gmb pattern shows progress itself on a terminal",
}
_OWN_OPTIONS = {"--gmb_pattern_op": "--op", "--gmb_pattern_word": "--word",
                "--gmb_pattern_k": "--k", "--gmb_pattern_block": "--block",
                "--gmb_pattern_n": "--n", "--gmb_pattern_bytes": "--bytes",
                "--gmb_pattern_threads": "--threads"}


@dataclass(frozen=True)
class Options:
    """What the user asked `gmb pattern` for (see subcommands/pattern.py for the flags). None: the
    binary's default."""

    expressions: tuple[str, ...]
    op: str | None = None
    word: str | None = None
    k: int | None = None
    block: int | None = None
    n: int | None = None
    bytes: str | None = None
    threads: int | None = None
    flavor: str = "default"
    device: int = 0
    repetitions: int = 3
    compare: bool = True
    json: bool = False
    save: bool = False
    binary: Path | None = None  # a built binary instead of building the flavor's
    preset: str | None = None
    cuda_archs: str | None = None
    out: Path | None = None  # results root for --save; default <repo>/results
    passthrough: tuple[str, ...] = ()
    gmb_command: str = "scripts/gmb pattern"


def check_passthrough(extra: list[str]) -> tuple[str, ...]:
    """--benchmark_*/--gmb_* options for the binary, less those gmb pattern sets itself."""
    for arg in extra:
        if not arg.startswith(run_options.PASSTHROUGH_PREFIXES):
            raise GmbError(f"unrecognized argument {arg!r} (only --benchmark_*=VALUE and "
                           "--gmb_*=VALUE options are passed on to the benchmark)", 2)
        name = arg.split("=", 1)[0]
        if name in _OWN_OPTIONS:
            raise GmbError(f"{name} is set by gmb pattern: use {_OWN_OPTIONS[name]}", 2)
        if name in _RESERVED:
            raise GmbError(f"{name} is set by gmb pattern: {_RESERVED[name]}", 2)
    return tuple(extra)


def benchmark_filter(op: str | None, word: str | None, compare: bool,
                     k: int | None = None) -> str:
    """gmembench's filter (POSIX extended): the patterns, the roof's two references, the DRAM
    chase, the prediction model's sources, and with `compare` the built-ins a pattern's class
    may behave like (a coalesced one's with as many words per thread, `k`)."""
    l2_sets = "|".join(str(ws) for ws in explain.L2_SETS)
    names = ["pattern/", f"{explain.MEMCPY}$", f"{explain.MEMSET}$", f"{explain.CHASE}$",
             f"{explain.L2_READS}({l2_sets})$", f"{explain.LOADED}(read|copy)/",
             *explain.MODEL_SOURCES]
    if compare:
        word = word or "f32"
        if twin := pattern_class.coalesced_twin(op or "read", word, k):  # one the built-ins have
            names.append(f"{twin}$")
        gathers = ["offset/f32/read/off:1", "stride/f32/read/s:2", "stride/f32/read/s:8",
                   "stride/f32/read/s:32", "warp/broadcast", "warp/permute_segment", "warp/permute_across",
                   "gather/random"]
        twins = {pattern_class.twin_for_op(g, op or "read") for g in gathers} - {None}
        names += sorted(re.escape(t) + "$" for t in twins)
    return "^(" + "|".join(names) + ")"


def command(binary: str, options: Options, progress: bool = False) -> list[str]:
    """The binary's command line: the expressions, the options given, then the user's own."""
    given = (("op", options.op), ("word", options.word), ("k", options.k),
             ("block", options.block), ("n", options.n), ("bytes", options.bytes),
             ("threads", options.threads))
    return [
        binary,
        f"--device={options.device}",
        *(f"--gmb_pattern={expr}" for expr in options.expressions),
        *(f"--gmb_pattern_{key}={value}" for key, value in given if value is not None),
        "--benchmark_filter="
        + benchmark_filter(options.op, options.word, options.compare, options.k),
        f"--benchmark_repetitions={options.repetitions}",
        "--benchmark_format=json",
        *(["--gmb_progress=pattern"] if progress else []),
        *options.passthrough,
    ]


def measure(options: Options, repo: Path | None = None, now: datetime | None = None) -> int:
    """Build, run, explain (and save); the exit status. Raises GmbError when the binary fails,
    and, after printing everything, when a pattern errored."""
    start = time.monotonic()
    say = sys.stderr if options.json else sys.stdout  # --json: stdout holds the JSON alone
    repo = repo or find_repo()
    env = binaries.device_env()
    binary = _binary(options, repo, env)
    cmd = command(binary, options, progress=sys.stderr.isatty())
    print(f"gmb: {shlex.join(cmd)}", file=say, flush=True)
    with stopping.Stopper() as stopper:  # a stop ends the binary; nothing is saved
        stdout = run_binary(cmd, repo, env, stopper)
    with tempfile.TemporaryDirectory(prefix="gmb-pattern-") as scratch:
        path = Path(scratch) / "pattern.json"
        path.write_text(stdout, encoding="utf-8")
        loaded = results.load(path)
        where, explanations = pattern_text.explained(loaded)
        if not explanations:
            raise GmbError(f"{Path(binary).name} printed no pattern/ benchmark: is it a "
                           "gmembench with the pattern family?")
        if options.json:
            print(json.dumps(pattern_text.records(explanations), indent=2, ensure_ascii=False))
        else:
            print(pattern_text.text(where, explanations), end="", flush=True)
        if options.save:
            folder = _save(path, loaded, where, explanations, options, shlex.join(cmd), repo,
                           now or datetime.now(), say)
            print(folder, file=say, flush=True)
    print(f"gmb: took {time.monotonic() - start:.1f} s", file=say, flush=True)
    errored = [e for e in explanations if e.error]
    if errored:
        raise GmbError(f"{len(errored)} of {len(explanations)} pattern(s) errored: "
                       f"{errored[0].expression}: {errored[0].error}")
    return 0


def _binary(options: Options, repo: Path, env: dict[str, str]) -> str:
    """The user's binary, or the flavor's, built as `gmb run` builds it (on stderr with
    --json, so that stdout holds the JSON alone)."""
    if options.binary is not None:
        binary = options.binary.expanduser().resolve()
        if not binary.is_file():
            raise GmbError(f"{options.binary}: no such benchmark binary")
        return str(binary)
    with _stdout_to_stderr(options.json):
        preset = binaries.build(repo, env, options.preset, options.cuda_archs,
                           [BINARIES[options.flavor]])
    return str(repo / "build" / preset / BINARIES[options.flavor])


@contextmanager
def _stdout_to_stderr(active: bool) -> Iterator[None]:
    """Our prints and file descriptor 1 (where the build's tools write) go to stderr for the
    block."""
    if not active:
        yield
        return
    sys.stdout.flush()
    saved = os.dup(1)
    try:
        os.dup2(2, 1)
        with redirect_stdout(sys.stderr):
            yield
    finally:
        sys.stdout.flush()
        os.dup2(saved, 1)
        os.close(saved)


def _save(path: Path, loaded: results.Results, where: explain.Setting,
          explanations: list[explain.Explanation], options: Options, binary_command: str,
          repo: Path, now: datetime, say: TextIO) -> Path:
    """A new folder (never an old one) with pattern.json.gz, explanation.md and the figure."""
    slug = loaded.context.get("gpu_slug")
    if not isinstance(slug, str) or not binaries.SLUG.fullmatch(slug):
        raise GmbError(f"the run's context has no usable gpu_slug (got {slug!r}); nothing saved")
    root = (options.out or repo / "results").resolve()
    folder = binaries.make_run_dir(root, slug, now, "-pattern")
    shown = binary_command.replace(str(repo.resolve()) + os.sep, "")
    try:  # each file whole or not at all: a full disk leaves no half file
        saved = files.write_whole(folder / "pattern.json", path.read_bytes())
        try:
            packing.pack(saved)
        except OSError:  # the JSON stays, uncompressed
            pass
        files.write_whole(folder / "explanation.md", pattern_text.markdown(
            where, explanations, options.gmb_command, shown))
    except OSError as err:
        raise GmbError(f"{files.write_error(err, folder)}: the explanation above is the whole "
                       f"result; {folder} keeps the files written whole",
                       WRITE_FAULT_STATUS) from None
    print(f"gmb: wrote {folder / 'explanation.md'}", file=say, flush=True)
    if len(explanations) >= 2:
        _figure(folder, where, explanations, say)
    return folder


def _figure(folder: Path, where: explain.Setting, explanations: list[explain.Explanation],
            say: TextIO) -> None:
    """pattern.png where matplotlib is installed; one line where it is not."""
    try:
        from gmbtools.present.pattern_figure import draw

        figure = draw(folder, where, explanations)
    except ImportError as err:
        print(f"gmb: no pattern.png: {err} (python3 -m pip install -r scripts/requirements.txt)",
              file=say, flush=True)
        return
    print(f"gmb: wrote {figure}", file=say, flush=True)


