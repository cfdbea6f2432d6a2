"""`gmb fleet task DIR`, run by each Slurm task of a fleet job: screen the task's GPU into
`DIR/<host>/<gpu-uuid>/` (`task-<rank>` where no GPU answers) and always leave `status.json`
saying how it ended: ok, failed (with the binary's one-line error), timeout, or interrupted (a
stop signal: Slurm's warning before the time limit). Standard library only."""

import json
import os
import shlex
import socket
import subprocess
import time
from datetime import datetime
from pathlib import Path
from typing import Any

from gmbtools.commands import binaries, stopping
from gmbtools.commands.stopping import STOP_GRACE_S, STOP_SIGNALS, Stopper, signal_name
from gmbtools.data.fleet_folder import SCREEN_JSON, STATUS, Manifest, load_manifest, write_json
from gmbtools.errors import GmbError


def task(folder: Path) -> int:
    """Screen this task's GPU; never raises for what the GPU or the binary does: status.json
    says it. Returns the exit status Slurm records (0 when the screen passed, 128 + the signal
    when a stop signal came). The stop signals (gmb's own, stopping.Stopper) end the screen as
    they end gmb run, rather than the task dying with status.json still saying running."""
    manifest = load_manifest(folder)
    with Stopper() as stop:
        return _task(folder, manifest, stop)


def _task(folder: Path, manifest: Manifest, stop: Stopper) -> int:
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
    write_json(where / STATUS, status)
    if stop.stopped:  # came during the query (which it may have ended)
        return _finish(where, status, "interrupted",
                       f"interrupted by {stop.name} before the screen started", stop)
    if isinstance(info, str):  # the query failed: its one-line reason
        return _finish(where, status, "timeout" if info.startswith("timeout") else "failed", info)
    command = [manifest.binary, f"--device={device}", "--gmb_sweep=screen",
               f"--benchmark_repetitions={manifest.repetitions}",
               f"--benchmark_out={where / SCREEN_JSON}", "--benchmark_out_format=json",
               f"--gmb_health_out={where / 'health.json'}"]
    status["command"] = shlex.join(command)
    state, reason = _run_bounded(command, where, deadline, stop)
    return _finish(where, status, state, reason, stop)


def _env_index(name: str) -> int:
    text = os.environ.get(name, "0")
    if not text.isdigit():
        raise GmbError(f"{name}={text!r} is not a task index (is this a Slurm task?)")
    return int(text)


def _query(binary: str, device: int, deadline: float) -> dict[str, Any] | str:
    """The binary's --gmb_info JSON (as `gmb run` asks it), or a one-line reason it could not
    say."""
    try:
        return binaries.device_info(binary, device, Path.cwd(), dict(os.environ),
                                   timeout=max(1.0, deadline - time.monotonic()))
    except GmbError as err:
        if str(err).startswith("timeout:"):
            return (f"timeout: {binary} --device={device} --gmb_info did not answer within the"
                    " task's time limit")
        return str(err)


def _run_bounded(command: list[str], where: Path, deadline: float,
                 stop: Stopper) -> tuple[str, str | None]:
    """Run the screen with its output in task.log: ("ok", None), or failed, timeout or
    interrupted with a one-line reason. After a stop signal the binary has STOP_GRACE_S to
    end, whatever the deadline."""
    log = where / "task.log"
    with open(log, "w", encoding="utf-8") as out:
        try:
            watched = stopping.run_watched(command, cwd=None, env=None, stdout=out,
                                           stderr=subprocess.STDOUT, progress=[],
                                           stall_timeout=None, stopper=stop, deadline=deadline,
                                           own_session=False)
        except OSError as err:
            return "failed", f"cannot run {command[0]}: {err.strerror}"
    returncode = watched.returncode
    if watched.unstopped:
        return "interrupted", (f"interrupted by {stop.name}; the screen did not stop within "
                               f"{STOP_GRACE_S:.0f} s and was killed")
    if watched.timed_out:
        return "timeout", "timeout: the screen did not finish within the task's time limit"
    if returncode == 0:
        return "ok", None
    # gmembench stopped by a signal exits 128 + its number, screen.json closed with context
    # gmb_interrupted saying which signal after how many benchmarks.
    what = _interrupted(where / SCREEN_JSON)
    signum = stop.signal or next((s for s in STOP_SIGNALS if returncode in (128 + s, -s)), 0)
    if what or signum:
        reason = f"interrupted by {what or signal_name(signum)}"
        if not what and returncode not in (128 + signum, -signum):  # it did not stop cleanly
            ended = f"exit code {returncode}" if returncode > 0 else signal_name(-returncode)
            reason += f"; the screen then ended with {ended}: {_log_reason(log, returncode)}"
        return "interrupted", reason
    return "failed", _log_reason(log, returncode)


def _log_reason(log: Path, returncode: int) -> str:
    """The binary's last error line in its log (else its last line, else its exit code)."""
    text = log.read_text(errors="replace")
    errors = [line for line in text.splitlines() if "error" in line.lower()]
    return (errors[-1].strip() if errors else last_line(text)) or f"exit code {returncode}"


def _interrupted(screen_json: Path) -> str | None:
    """The gmb_interrupted context of a screen.json that gmembench closed after a stop."""
    try:
        what = json.loads(screen_json.read_text())["context"]["gmb_interrupted"]
    except (OSError, ValueError, KeyError, TypeError):  # absent, cut short, or not a stop
        return None
    return what if isinstance(what, str) and what else None


def _finish(where: Path, status: dict[str, Any], state: str, error: str | None,
            stop: Stopper | None = None) -> int:
    status.update({"state": state, "error": error, "ended": _now()})
    write_json(where / STATUS, status)
    print(f"gmb fleet task: {status['host']} rank {status['rank']}: {state}"
          + (f": {error}" if error else ""), flush=True)
    if state == "ok":
        return 0
    return 128 + stop.signal if stop and stop.stopped else 1


def last_line(text: str) -> str:
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    return lines[-1] if lines else ""


def _now() -> str:
    return datetime.now().isoformat(timespec="seconds")
