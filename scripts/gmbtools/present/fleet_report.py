"""`gmb fleet report DIR`: every task of a fleet job in one table, each GPU against its fleet.

Each GPU's screening benchmarks are divided by the median of the GPUs of the same model in the
job (a latency the other way round), so 1.0 is the fleet's typical GPU and 0.9 is 10% worse;
a GPU more than 5% worse than its fleet on any of them is an outlier. Tasks that failed, timed
out, were interrupted (a stop signal: the warning before the job's time limit), never finished,
never started or wrote unreadable JSON are listed with their reason, never dropped. Writes
DIR/report.md, DIR/fleet.csv and, with matplotlib, DIR/fleet.png.
"""

import csv
import json
import statistics
from dataclasses import dataclass, field
from pathlib import Path

from gmbtools.data import fleet_folder as fleet
from gmbtools.data.results import load, median_by_name, stored
from gmbtools.errors import GmbError
from gmbtools.present.node_summary import FLAG_BELOW

# A GPU this far under its fleet's median is flagged: the node summary's rule, one number.
OUTLIER_BELOW = FLAG_BELOW


@dataclass(frozen=True)
class Metric:
    value: float
    unit: str  # "GB/s" (higher is better) or "ns" (lower is better)

    def ratio_to(self, median: float) -> float:
        """1.0 at the median, below 1 where this GPU is worse, whichever way the unit goes."""
        return self.value / median if self.unit == "GB/s" else median / self.value


@dataclass
class Task:
    """One task of the job: where it ran, how it ended, what it measured."""

    host: str
    folder: str  # relative to the fleet folder; "" for a task that left nothing
    rank: int | None
    gpu_uuid: str | None
    gpu_name: str | None
    state: str  # ok, failed, timeout, interrupted, unfinished, corrupt, missing
    error: str | None
    metrics: dict[str, Metric] = field(default_factory=dict)


@dataclass
class Fleet:
    manifest: fleet.Manifest
    tasks: list[Task]
    medians: dict[tuple[str, str], float]  # (gpu_name, benchmark) -> the fleet's median

    def ratio(self, task: Task, name: str) -> float | None:
        metric = task.metrics.get(name)
        median = self.medians.get((task.gpu_name or "", name))
        return metric.ratio_to(median) if metric and median else None

    def outliers(self, task: Task) -> list[str]:
        return [name for name in sorted(task.metrics)
                if (r := self.ratio(task, name)) is not None and r < OUTLIER_BELOW]

    @property
    def problems(self) -> list[Task]:
        return [t for t in self.tasks if t.state != "ok"]


def collect(folder: Path) -> Fleet:
    """Read the manifest and every task's status and results."""
    manifest = fleet.load_manifest(folder)
    tasks = [_task(path.parent, folder) for path in sorted(folder.glob(f"*/*/{fleet.STATUS}"))]
    seen = {t.rank for t in tasks}
    job = f"slurm-{manifest.job_id}.out" if manifest.job_id else "the job's output"
    # A status too broken to name its rank stands for one of the unseen ranks: not missing too.
    unseen = [rank for rank in range(manifest.tasks) if rank not in seen]
    tasks += [Task(host="?", folder="", rank=rank, gpu_uuid=None, gpu_name=None, state="missing",
                   error=f"no {fleet.STATUS}: the task never started (see {job})")
              for rank in unseen[:max(0, manifest.tasks - len(tasks))]]
    values: dict[tuple[str, str], list[float]] = {}
    for t in tasks:
        for name, metric in t.metrics.items():
            values.setdefault((t.gpu_name or "", name), []).append(metric.value)
    medians = {key: statistics.median(v) for key, v in values.items()}
    return Fleet(manifest=manifest, tasks=tasks, medians=medians)


def _task(where: Path, folder: Path) -> Task:
    relative = str(where.relative_to(folder))
    try:
        status = json.loads((where / fleet.STATUS).read_text())
        if not isinstance(status, dict):
            raise ValueError("not a JSON object")
        wrong = [key for key, kinds in _STATUS_FIELDS.items()
                 if not isinstance(status.get(key), kinds) or isinstance(status.get(key), bool)]
        if wrong:
            raise ValueError(f"missing or wrong {', '.join(wrong)}")
    except (OSError, ValueError) as err:
        return Task(host=where.parent.name, folder=relative, rank=None, gpu_uuid=None,
                    gpu_name=None, state="corrupt", error=f"{fleet.STATUS}: {err}")
    task = Task(host=status["host"], folder=relative, rank=status["rank"],
                gpu_uuid=status.get("gpu_uuid"), gpu_name=status.get("gpu_name"),
                state=status["state"], error=status.get("error"))
    if task.state == "running":
        task.state = "unfinished"
        task.error = ("status.json still says running: the task was killed (the job's time "
                      "limit?) or is still running")
    if task.state == "ok":
        try:
            task.metrics = _metrics(stored(where / fleet.SCREEN_JSON))  # or its .gz
        except GmbError as err:
            task.state, task.error = "corrupt", str(err)
    return task


# What a status.json must hold, and of which type (None: may be absent).
_STATUS_FIELDS = {"host": str, "rank": int, "state": str, "error": (str, type(None)),
                  "gpu_uuid": (str, type(None)), "gpu_name": (str, type(None))}


def _metrics(path: Path) -> dict[str, Metric]:
    """GB/s of each screening benchmark; ns per load for the latency chase."""
    metrics = {}
    for name, m in median_by_name(load(path).records).items():
        if m.error is not None:
            raise GmbError(f"{path.name}: {name}: {m.error}")
        if "latency_ns" in m.counters:
            metrics[name] = Metric(m.counters["latency_ns"], "ns")
        elif m.bytes_per_second:
            metrics[name] = Metric(m.bytes_per_second / 1e9, "GB/s")
    if not metrics:
        raise GmbError(f"{path.name}: no benchmark results")
    return metrics


OUTPUTS = ("report.md", "fleet.csv", "fleet.png")  # what write() writes into the fleet folder


def write(folder: Path) -> tuple[Path, Fleet]:
    """report.md, fleet.csv and (with matplotlib) fleet.png in the fleet folder."""
    data = collect(folder)
    report, csv, png = (folder / name for name in OUTPUTS)
    _write_csv(csv, data)
    figure = _figure(png, data)
    report.write_text(render(data, figure))
    return report, data


def render(data: Fleet, figure: str | None) -> str:
    m = data.manifest
    ok = [t for t in data.tasks if t.state == "ok"]
    names = sorted({name for t in ok for name in t.metrics})
    lines = [
        "# gmembench fleet report", "",
        f"Job {m.job_id or '(not recorded)'}: {m.nodes} node(s) x {m.tasks_per_node} GPU(s), "
        f"{m.tasks} task(s), submitted {m.created}; `{Path(m.binary).name}` "
        f"`--gmb_sweep=screen`, {m.repetitions} repetitions.", "",
        f"- GPUs screened: {len(ok)} of {m.tasks}",
        f"- outliers (a benchmark below {OUTLIER_BELOW:.2f} x its fleet's median): "
        f"{sum(1 for t in ok if data.outliers(t))}",
        f"- tasks failed, interrupted, unfinished or missing: {len(data.problems)}", "",
    ]
    if ok:
        lines += ["## Each GPU against its fleet", "",
                  "Ratio to the median of the job's GPUs of the same model (latency inverted): "
                  "1.000 is the typical GPU, below it worse; ⚠ marks an outlier.", "",
                  "| host | GPU | model | " + " | ".join(f"`{n}`" for n in names) + " |",
                  "|---|---|---|" + "---:|" * len(names)]
        for t in sorted(ok, key=lambda t: (t.host, t.gpu_uuid or "")):
            cells = []
            for name in names:
                r = data.ratio(t, name)
                cells.append("" if r is None else f"{r:.3f}" + (" ⚠" if r < OUTLIER_BELOW
                                                                 else ""))
            lines.append(f"| {t.host} | `{t.gpu_uuid}` | {t.gpu_name} | " + " | ".join(cells)
                         + " |")
        lines += ["", "Fleet medians:", "", "| model | benchmark | median |", "|---|---|---:|"]
        lines += [f"| {model} | `{name}` | {value:.1f} {_unit(data, name)} |"
                  for (model, name), value in sorted(data.medians.items())]
        lines.append("")
    if figure:
        lines += [f"![each GPU against its fleet]({figure})", ""]
    if data.problems:
        lines += ["## Tasks that did not screen their GPU", "",
                  "| host | rank | folder | state | reason |", "|---|---:|---|---|---|"]
        lines += [f"| {t.host} | {'' if t.rank is None else t.rank} | `{t.folder}` | {t.state} | "
                  f"{(t.error or '').replace('|', '/')} |" for t in data.problems]
        lines.append("")
    return "\n".join(lines)


def _unit(data: Fleet, name: str) -> str:
    units = {t.metrics[name].unit for t in data.tasks if name in t.metrics}
    return units.pop() if len(units) == 1 else ""


def _write_csv(path: Path, data: Fleet) -> None:
    with open(path, "w", newline="", encoding="utf-8") as file:
        out = csv.writer(file)
        out.writerow(["host", "gpu_uuid", "gpu_name", "rank", "state", "error", "benchmark",
                      "value", "unit", "fleet_median", "ratio", "outlier"])
        for t in data.tasks:
            if not t.metrics:
                out.writerow([t.host, t.gpu_uuid, t.gpu_name, t.rank, t.state, t.error,
                              "", "", "", "", "", ""])
            for name, metric in sorted(t.metrics.items()):
                r = data.ratio(t, name)
                out.writerow([t.host, t.gpu_uuid, t.gpu_name, t.rank, t.state, t.error, name,
                              metric.value, metric.unit,
                              data.medians.get((t.gpu_name or "", name)), r,
                              int(r is not None and r < OUTLIER_BELOW)])


def _figure(path: Path, data: Fleet) -> str | None:
    """Each GPU's ratio per benchmark, the outlier line drawn; None without matplotlib or data."""
    ok = [t for t in data.tasks if t.state == "ok"]
    if not ok:
        return None
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return None
    names = sorted({name for t in ok for name in t.metrics})
    fig, ax = plt.subplots(figsize=(max(6.0, 1.1 * len(names)), 4.0))
    for t in ok:
        xs = [i for i, n in enumerate(names) if data.ratio(t, n) is not None]
        ys = [data.ratio(t, names[i]) for i in xs]
        flagged = bool(data.outliers(t))
        ax.plot(xs, ys, "o-" if flagged else "o", alpha=0.9 if flagged else 0.5,
                label=f"{t.host} {(t.gpu_uuid or '')[:12]}" if flagged else None)
    ax.axhline(1.0, color="grey", lw=0.8)
    ax.axhline(OUTLIER_BELOW, color="red", lw=0.8, ls="--", label=f"outlier ({OUTLIER_BELOW})")
    ax.set_xticks(range(len(names)), names, rotation=30, ha="right", fontsize=7)
    ax.set_ylabel("ratio to the fleet's median (higher is better)")
    ax.set_title(f"{len(ok)} GPU(s): each against the median of its model")
    ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)
    return path.name
