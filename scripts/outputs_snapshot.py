#!/usr/bin/env python3
"""Every output of the analysis commands on committed results, as one manifest of hashes.

Run it before and after a change that must not change behaviour (a refactor of gmbtools), on
the same machine, and compare the two manifests: `diff BEFORE/manifest.txt AFTER/manifest.txt`
prints nothing when every output is byte-identical. What it runs, each on a fresh copy of its
inputs under OUT_DIR/work:

- `gmb summary`, `gmb report` (report.md and every figure), `gmb compare --flavors` (with and
  without --all), `gmb load` (text and --csv) on the H100 and H200 reference runs, a run that
  was stopped and resumed, and a node folder with each of its GPU folders;
- `gmb compare A B` across the two reference runs;
- the peer matrix's matrix.md and matrix.png written again from a committed matrix.json;
- `gmb pattern` (text, --json, --save) with a stand-in binary that prints a committed
  calibration run;
- `gmb fleet report` on a fleet of two tasks made from a reference run.

Text outputs have OUT_DIR's path replaced by `<out>`, folder stamps by `<stamp>` and wall times
by `<t>`, so the two manifests differ only where the outputs do. Figures are compared by their bytes (matplotlib's Agg output is deterministic
for the same versions). Usage: python3 scripts/outputs_snapshot.py OUT_DIR
"""

import gzip
import hashlib
import importlib
import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
GMB = REPO / "scripts" / "gmb"
H100 = REPO / "results" / "nvidia-h100-80gb-hbm3"
H200 = REPO / "results" / "nvidia-h200"
RUNS = {
    "h100-reference": H100 / "20261123-184153",
    "h200-reference": H200 / "20261123-214741",
    "h100-stopped-resumed": H100 / "20261125-202947",
    "h100-node": H100 / "20261125-222925",
    "h200-node-one-gpu": H200 / "20261123-132638",
}
PEERS = H100 / "20261125-222845-peers"
PATTERN_RUNS = {
    "h100-five": H100 / "20261125-130607-pattern-calibration" / "five.json.gz",
    "h100-stride": H100 / "20261125-130607-pattern-calibration" / "stride.json.gz",
    "h200-aos": H200 / "20261125-130353-pattern-calibration" / "aos.json.gz",
}
STAND_IN = """#!{python}
import gzip, sys
sys.stdout.write(gzip.open({path!r}, "rt", encoding="utf-8").read())
"""
TEXT_SUFFIXES = {".md", ".txt", ".csv", ".json", ".log", ".stdout", ".stderr"}
# What differs between two runs of the same code: a new folder's stamp, a wall time.
VOLATILE = ((re.compile(rb"\d{8}-\d{6}"), b"<stamp>"), (re.compile(rb"took [0-9.]+ s"), b"took <t> s"))


def module(*names: str):
    """The first of these modules that imports: the same function before and after a move."""
    for name in names:
        try:
            return importlib.import_module(name)
        except ModuleNotFoundError:
            continue
    raise SystemExit(f"outputs_snapshot: none of {names} imports")


class Snapshot:
    def __init__(self, out: Path):
        self.out = out
        self.work = out / "work"
        self.captured = out / "captured"
        self.count = 0

    def gmb(self, case: str, *args: str, cwd: Path | None = None) -> None:
        """Run `gmb ARGS`; keep its exit status, stdout and stderr under captured/CASE."""
        proc = subprocess.run([sys.executable, str(GMB), *args], cwd=cwd or self.work,
                              capture_output=True, text=True, timeout=900)
        self.count += 1
        where = self.captured / case
        where.mkdir(parents=True, exist_ok=True)
        stem = f"{self.count:03d}-{args[0]}"
        (where / f"{stem}.stdout").write_text(f"$ gmb {' '.join(args)}\nexit {proc.returncode}\n"
                                              + proc.stdout)
        (where / f"{stem}.stderr").write_text(proc.stderr)

    def copy(self, source: Path, case: str) -> Path:
        target = self.work / case
        shutil.copytree(source, target)
        return target

    def manifest(self) -> str:
        lines = []
        for path in sorted(p for p in self.out.rglob("*") if p.is_file()):
            if path.name == "manifest.txt":
                continue
            data = path.read_bytes()
            if path.suffix in TEXT_SUFFIXES:
                data = data.replace(str(self.out).encode(), b"<out>")
                for pattern, replacement in VOLATILE:
                    data = pattern.sub(replacement, data)
            if path.suffix == ".gz":  # gzip headers hold a time: compare the content
                data = gzip.decompress(data)
            lines.append(f"{hashlib.sha256(data).hexdigest()}  {path.relative_to(self.out)}")
        return "\n".join(lines) + "\n"


def runs(s: Snapshot) -> None:
    for case, source in RUNS.items():
        folder = s.copy(source, case)
        targets = [folder]
        if (folder / "node.json").is_file():
            targets += sorted(p for p in folder.iterdir() if p.is_dir() and p.name.startswith("gpu"))
        for target in targets:
            tag = case if target == folder else f"{case}-{target.name[:4]}"
            s.gmb(tag, "summary", str(target))
            s.gmb(tag, "report", str(target))
            s.gmb(tag, "compare", "--flavors", str(target))
            s.gmb(tag, "compare", "--flavors", str(target), "--all")
            s.gmb(tag, "load", str(target))
            s.gmb(tag, "load", str(target), "--csv", str(s.work / f"{tag}.csv"))
    a, b = RUNS["h200-reference"], RUNS["h100-reference"]
    s.gmb("across", "compare", str(a / "default.json.gz"), str(b / "default.json.gz"))
    s.gmb("across", "compare", str(a / "default.json.gz"), str(b / "default.json.gz"), "--all")


def peers(s: Snapshot) -> None:
    peer_matrix = module("gmbtools.commands.peers", "gmbtools.peer_matrix")
    presenter = module("gmbtools.present.peer_report", "gmbtools.peer_matrix")
    folder = s.copy(PEERS, "peers")
    doc = json.loads((folder / "matrix.json").read_text())
    (folder / "matrix.md").write_text(presenter.markdown(doc))
    (folder / "matrix.png").unlink()
    getattr(peer_matrix, "_figure")(folder)


def patterns(s: Snapshot) -> None:
    for case, source in PATTERN_RUNS.items():
        where = s.work / f"pattern-{case}"
        where.mkdir(parents=True)
        fake = where / "gmembench"
        fake.write_text(STAND_IN.format(python=sys.executable, path=str(source)))
        fake.chmod(0o755)
        binary = ["--binary", str(fake)]
        s.gmb(f"pattern-{case}", "pattern", "i", *binary, cwd=where)
        s.gmb(f"pattern-{case}", "pattern", "i", "--json", *binary, cwd=where)
        s.gmb(f"pattern-{case}", "pattern", "i", "--save", "--out", str(where / "saved"), *binary,
              cwd=where)
        for saved in (where / "saved").glob("*/*-pattern"):  # the stamp differs: a fixed name
            saved.rename(where / "saved" / "pattern")


def fleet(s: Snapshot) -> None:
    fleet_module = module("gmbtools.data.fleet_folder", "gmbtools.fleet")
    folder = s.work / "fleet"
    folder.mkdir(parents=True)
    fleet_module.save_manifest(folder, fleet_module.Manifest(
        created="now", nodes=1, tasks_per_node=2, tasks=2, binary="gmembench", repetitions=1,
        task_timeout_s=60, time_limit="00:05:00", launcher=["sbatch"]))
    doc = json.loads(gzip.open(RUNS["h100-reference"] / "default.json.gz", "rt").read()
                     .replace("NaN", "null"))
    for rank in range(2):
        where = folder / "node0" / f"GPU-{rank}"
        where.mkdir(parents=True)
        (where / fleet_module.SCREEN_JSON).write_text(json.dumps(doc))
        (where / fleet_module.STATUS).write_text(json.dumps(
            {"host": "node0", "rank": rank, "state": "ok", "gpu_uuid": f"GPU-{rank}",
             "gpu_name": doc["context"]["gpu_name"]}))
    s.gmb("fleet", "fleet", "report", str(folder))


def main(argv: list[str]) -> int:
    if len(argv) != 1:
        print(__doc__.strip().splitlines()[-1], file=sys.stderr)
        return 2
    out = Path(argv[0]).resolve()
    if out.exists():
        print(f"outputs_snapshot: {out} exists; give a new folder", file=sys.stderr)
        return 2
    sys.path.insert(0, str(REPO / "scripts"))
    s = Snapshot(out)
    s.work.mkdir(parents=True)
    for step in (runs, peers, patterns, fleet):
        step(s)
    (out / "manifest.txt").write_text(s.manifest())
    print(f"outputs_snapshot: {s.count} commands, manifest {out / 'manifest.txt'}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
