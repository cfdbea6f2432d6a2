"""`gmb fleet submit` and `gmb fleet task`: the screening sweep on every GPU of a Slurm job.

`submit` makes `results/fleet/<YYYYmmdd-HHMMSS>/` with `fleet.json` (what was asked: nodes,
tasks, binary, limits, the job id) and `job.sbatch`, and hands the job to Slurm: `sbatch`, or
`srun` straight away when run inside an allocation. Slurm starts one task per GPU; each runs
`gmb fleet task DIR`, which screens its GPU (`--gmb_sweep=screen`, one flavor) into
`DIR/<host>/<gpu-uuid>/` (`task-<rank>` where no GPU answers) and always leaves `status.json`
saying how it ended: ok, failed (with the binary's one-line error), or timeout. A task Slurm
kills never gets that far: its `status.json` still says `running`, which the report shows.
`gmb fleet report` (fleet_report.py) merges them. Standard library only, like `gmb run`.
"""

import json
import os
import shlex
import socket
import subprocess
import sys
import time
from dataclasses import asdict, dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

from . import run as gmb_run
from .errors import GmbError
from .repo import find_repo

MANIFEST = "fleet.json"
STATUS = "status.json"
SCREEN_JSON = "screen.json"
GMB_SCRIPT = Path(__file__).resolve().parent.parent / "gmb"


@dataclass(frozen=True)
class SubmitOptions:
    """What the user asked `gmb fleet submit` for (see cli.py for the flags)."""

    nodes: int = 1
    gpus_per_node: int = 1
    request_gpus: bool = True  # --gpus-per-task=1 for each task (clusters with GPU GRES)
    partition: str | None = None
    time_limit: str = "00:15:00"
    task_timeout_s: int = 180
    repetitions: int = 3
    binary: Path | None = None  # default: build the default flavor first
    preset: str | None = None
    cuda_archs: str | None = None
    out: Path | None = None  # results root; default <repo>/results
    wait: bool = False
    sbatch_args: tuple[str, ...] = ()


@dataclass
class Manifest:
    """fleet.json: the job as submitted; the report's list of expected tasks comes from it."""

    created: str
    nodes: int
    tasks_per_node: int
    tasks: int
    binary: str
    repetitions: int
    task_timeout_s: int
    time_limit: str
    launcher: list[str]
    job_id: str | None = None
    extra: dict[str, Any] = field(default_factory=dict)


def submit(options: SubmitOptions, repo: Path | None = None) -> Path:
    """Build (unless given a binary), write the fleet folder, hand it to Slurm; return the
    folder. With `wait`, return when the job has ended (sbatch --wait, or srun)."""
    repo = repo or find_repo()
    binary = (options.binary or _build(options, repo)).resolve()
    if not binary.is_file():
        raise GmbError(f"{binary}: no such benchmark binary")
    folder = gmb_run.make_run_dir((options.out or repo / "results").resolve(), "fleet",
                                  datetime.now())
    tasks = options.nodes * options.gpus_per_node
    inside = "SLURM_JOB_ID" in os.environ
    task_command = [sys.executable, str(GMB_SCRIPT), "fleet", "task", str(folder)]
    launcher = _srun(options) + task_command if inside else ["sbatch", "--parsable",
                                                              *(["--wait"] if options.wait else []),
                                                              str(folder / "job.sbatch")]
    manifest = Manifest(
        created=datetime.now().isoformat(timespec="seconds"), nodes=options.nodes,
        tasks_per_node=options.gpus_per_node, tasks=tasks, binary=str(binary),
        repetitions=options.repetitions, task_timeout_s=options.task_timeout_s,
        time_limit=options.time_limit, launcher=launcher,
    )
    (folder / "job.sbatch").write_text(batch_script(options, folder, task_command))
    save_manifest(folder, manifest)
    print(f"gmb: fleet folder {folder}", flush=True)
    print(f"gmb: {shlex.join(launcher)}", flush=True)
    try:
        if inside:
            subprocess.run(launcher)  # each task's status.json says how it went
            return folder
        proc = subprocess.Popen(launcher, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                text=True)
    except FileNotFoundError:
        raise GmbError(f"{launcher[0]} not found: gmb fleet needs Slurm's commands on PATH") \
            from None
    # sbatch --parsable prints "<id>" or "<id>;<cluster>" as soon as the job is queued (then
    # --wait holds it until the job ends).
    job_id = (proc.stdout.readline() if proc.stdout else "").strip().split(";")[0]
    if job_id.isdigit():
        manifest.job_id = job_id
        save_manifest(folder, manifest)
        print(f"gmb: submitted batch job {job_id}", flush=True)
    _, stderr = proc.communicate()
    if not job_id.isdigit():
        reason = _last_line(stderr) or f"exit code {proc.returncode}"
        raise GmbError(f"sbatch failed: {reason} (fleet folder {folder})")
    return folder


def batch_script(options: SubmitOptions, folder: Path, task_command: list[str]) -> str:
    """The job: one task per GPU of every node, each running `gmb fleet task`."""
    lines = [
        "#!/bin/bash",
        "#SBATCH --job-name=gmb-fleet",
        f"#SBATCH --nodes={options.nodes}",
        f"#SBATCH --ntasks-per-node={options.gpus_per_node}",
        f"#SBATCH --time={options.time_limit}",
        f"#SBATCH --output={folder}/slurm-%j.out",
    ]
    if options.request_gpus:
        lines.append("#SBATCH --gpus-per-task=1")
    if options.partition:
        lines.append(f"#SBATCH --partition={options.partition}")
    lines += [f"#SBATCH {arg}" for arg in options.sbatch_args]
    lines += ["", "# A failing task must not stop the others: each one's status.json says how"
              " it ended.", shlex.join(["srun", "--kill-on-bad-exit=0", *task_command]), ""]
    return "\n".join(lines)


def _srun(options: SubmitOptions) -> list[str]:
    """srun inside an existing allocation, with the job's shape."""
    # --overlap: the shell this runs in may itself be a step holding the allocation's CPUs.
    command = ["srun", "--overlap", "--kill-on-bad-exit=0", f"--nodes={options.nodes}",
               f"--ntasks-per-node={options.gpus_per_node}"]
    if options.request_gpus:
        command.append("--gpus-per-task=1")
    return command


def _build(options: SubmitOptions, repo: Path) -> Path:
    """The default flavor, built as `gmb run` builds it: the binary every task runs."""
    preset = gmb_run.build(repo, dict(os.environ), options.preset, options.cuda_archs,
                           ["gmembench"])
    return repo / "build" / preset / "gmembench"


def save_manifest(folder: Path, manifest: Manifest) -> None:
    _write_json(folder / MANIFEST, asdict(manifest))


def load_manifest(folder: Path) -> Manifest:
    path = folder / MANIFEST
    if not path.is_file():
        raise GmbError(f"{folder}: not a fleet folder (no {MANIFEST}; gmb fleet submit makes it)")
    try:
        manifest = Manifest(**json.loads(path.read_text()))
    except (json.JSONDecodeError, TypeError) as err:
        raise GmbError(f"{path}: not a fleet manifest ({err})") from None
    counts = (manifest.nodes, manifest.tasks_per_node, manifest.tasks, manifest.repetitions,
              manifest.task_timeout_s)
    if not all(isinstance(n, int) and not isinstance(n, bool) and n > 0 for n in counts) \
            or not isinstance(manifest.binary, str):
        raise GmbError(f"{path}: not a fleet manifest (counts must be positive integers)")
    return manifest


# --- one task ------------------------------------------------------------------------------

def task(folder: Path) -> int:
    """Screen this task's GPU; never raises for what the GPU or the binary does: status.json
    says it. Returns the exit status Slurm records (0 when the screen passed)."""
    manifest = load_manifest(folder)
    host = os.environ.get("SLURMD_NODENAME") or socket.gethostname().split(".")[0]
    rank = _env_index("SLURM_PROCID")
    # Slurm's GPU binding leaves the task one visible device; otherwise (no GPU request, or a
    # job-wide list) the task's rank on its node picks it.
    visible = [d for d in os.environ.get("CUDA_VISIBLE_DEVICES", "").split(",") if d.strip()]
    device = 0 if len(visible) == 1 else _env_index("SLURM_LOCALID")
    status: dict[str, Any] = {"host": host, "rank": rank, "device": device,
                              "state": "running", "started": _now()}
    deadline = time.monotonic() + manifest.task_timeout_s
    info = _query(manifest.binary, device, deadline)
    uuid = info.get("gpu_uuid") if isinstance(info, dict) else None
    where = folder / host / (uuid if isinstance(uuid, str) and uuid else f"task-{rank}")
    where.mkdir(parents=True, exist_ok=True)
    name = info.get("gpu_name") if isinstance(info, dict) else None
    status.update({"gpu_uuid": uuid if isinstance(uuid, str) else None,
                   "gpu_name": name if isinstance(name, str) else None})
    _write_json(where / STATUS, status)
    if isinstance(info, str):  # the query failed: its one-line reason
        return _finish(where, status, "timeout" if info.startswith("timeout") else "failed", info)
    command = [manifest.binary, f"--device={device}", "--gmb_sweep=screen",
               f"--benchmark_repetitions={manifest.repetitions}",
               f"--benchmark_out={where / SCREEN_JSON}", "--benchmark_out_format=json",
               f"--gmb_health_out={where / 'health.json'}"]
    status["command"] = shlex.join(command)
    outcome = _run_bounded(command, where / "task.log", deadline)
    if outcome is None:
        return _finish(where, status, "ok", None)
    return _finish(where, status, "timeout" if outcome.startswith("timeout") else "failed",
                   outcome)


def _env_index(name: str) -> int:
    text = os.environ.get(name, "0")
    if not text.isdigit():
        raise GmbError(f"{name}={text!r} is not a task index (is this a Slurm task?)")
    return int(text)


def _query(binary: str, device: int, deadline: float) -> dict[str, Any] | str:
    """The binary's --gmb_info JSON (as `gmb run` asks it), or a one-line reason it could not
    say."""
    try:
        return gmb_run.device_info(binary, device, Path.cwd(), dict(os.environ),
                                   timeout=max(1.0, deadline - time.monotonic()))
    except GmbError as err:
        if str(err).startswith("timeout:"):
            return (f"timeout: {binary} --device={device} --gmb_info did not answer within the"
                    " task's time limit")
        return str(err)


def _run_bounded(command: list[str], log: Path, deadline: float) -> str | None:
    """Run the screen with its output in `log`; None when it passed, else a one-line reason."""
    with open(log, "w", encoding="utf-8") as out:
        try:
            proc = subprocess.Popen(command, stdout=out, stderr=subprocess.STDOUT, text=True)
        except OSError as err:
            return f"cannot run {command[0]}: {err.strerror}"
        try:
            returncode = proc.wait(timeout=max(1.0, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
            return "timeout: the screen did not finish within the task's time limit"
    if returncode == 0:
        return None
    text = log.read_text(errors="replace")
    errors = [line for line in text.splitlines() if "error" in line.lower()]
    return (errors[-1].strip() if errors else _last_line(text)) or f"exit code {returncode}"


def _finish(where: Path, status: dict[str, Any], state: str, error: str | None) -> int:
    status.update({"state": state, "error": error, "ended": _now()})
    _write_json(where / STATUS, status)
    print(f"gmb fleet task: {status['host']} rank {status['rank']}: {state}"
          + (f": {error}" if error else ""), flush=True)
    return 0 if state == "ok" else 1


def _last_line(text: str) -> str:
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    return lines[-1] if lines else ""


def _now() -> str:
    return datetime.now().isoformat(timespec="seconds")


def _write_json(path: Path, data: Any) -> None:
    """Whole or not at all: a reader never sees half a file."""
    partial = path.with_name(path.name + ".partial")
    partial.write_text(json.dumps(data, indent=2) + "\n")
    partial.replace(path)
