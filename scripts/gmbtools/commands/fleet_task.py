"""`gmb fleet task DIR`, run by each Slurm task of a fleet job: screen the task's GPU into
`DIR/<host>/<gpu-uuid>/` (`task-<rank>` where no GPU answers) and always leave `status.json`
saying how it ended: ok, failed (with the binary's one-line error), timeout, or interrupted (a
stop signal: Slurm's warning before the time limit). Standard library only."""

import json
import os
import shlex
import signal
import socket
import subprocess
import time
from datetime import datetime
from pathlib import Path
from typing import Any

from gmbtools.commands import binaries
from gmbtools.data.fleet_folder import SCREEN_JSON, STATUS, Manifest, load_manifest, write_json
from gmbtools.errors import GmbError

STOP_GRACE_S = 30  # s a stopped binary gets to close its JSON before the task kills it


def task(folder: Path) -> int:
    """Screen this task's GPU; never raises for what the GPU or the binary does: status.json
    says it. Returns the exit status Slurm records (0 when the screen passed, 128 + the signal
    when a stop signal came)."""
    manifest = load_manifest(folder)
    stop = _Stop()
    previous = {sig: signal.signal(sig, stop.received) for sig in STOP_SIGNALS}
    try:
        return _task(folder, manifest, stop)
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)


def _task(folder: Path, manifest: Manifest, stop: "_Stop") -> int:
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
    if stop.signum:  # came during the query (which it may have ended)
        return _finish(where, status, "interrupted",
                       f"interrupted by {_signal_name(stop.signum)} before the screen started",
                       stop)
    if isinstance(info, str):  # the query failed: its one-line reason
        return _finish(where, status, "timeout" if info.startswith("timeout") else "failed", info)
    command = [manifest.binary, f"--device={device}", "--gmb_sweep=screen",
               f"--benchmark_repetitions={manifest.repetitions}",
               f"--benchmark_out={where / SCREEN_JSON}", "--benchmark_out_format=json",
               f"--gmb_health_out={where / 'health.json'}"]
    status["command"] = shlex.join(command)
    state, reason = _run_bounded(command, where, deadline, stop)
    return _finish(where, status, state, reason, stop)


# The signals that stop gmembench cleanly (include/gmb/stop_signal.hpp): the task stops on
# them too, rather than dying with status.json still saying running.
STOP_SIGNALS = (signal.SIGTERM, signal.SIGINT, signal.SIGHUP)


class _Stop:
    """The stop signals the task receives. The first one's number and time are kept; each one
    is passed on to the binary running then (Slurm signals every process of the step, but a
    signal sent by hand reaches the task alone: gmembench takes a copy that comes within a
    second of the first as the same stop)."""

    def __init__(self) -> None:
        self.signum = 0
        self.at = 0.0
        self.child: subprocess.Popen[str] | None = None

    def received(self, signum: int, frame: Any) -> None:
        if not self.signum:
            self.signum, self.at = signum, time.monotonic()
        if self.child is not None:
            self.child.send_signal(signum)  # a no-op once the child has been waited for


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
                 stop: _Stop) -> tuple[str, str | None]:
    """Run the screen with its output in task.log: ("ok", None), or failed, timeout or
    interrupted with a one-line reason. After a stop signal the binary has STOP_GRACE_S to
    end, whatever the deadline."""
    log = where / "task.log"
    with open(log, "w", encoding="utf-8") as out:
        try:
            proc = subprocess.Popen(command, stdout=out, stderr=subprocess.STDOUT, text=True)
        except OSError as err:
            return "failed", f"cannot run {command[0]}: {err.strerror}"
        stop.child = proc
        if stop.signum:  # it came while the binary was starting
            proc.send_signal(stop.signum)
        returncode = None
        while returncode is None:  # in slices, so that a stop shortens the wait
            end = stop.at + STOP_GRACE_S if stop.signum else deadline
            try:
                returncode = proc.wait(timeout=min(1.0, max(0.0, end - time.monotonic())))
            except subprocess.TimeoutExpired:
                if time.monotonic() < end:
                    continue
                proc.kill()
                proc.wait()
                if stop.signum:
                    return "interrupted", (f"interrupted by {_signal_name(stop.signum)}; the "
                                           f"screen did not stop within {STOP_GRACE_S} s and "
                                           "was killed")
                return "timeout", ("timeout: the screen did not finish within the task's "
                                   "time limit")
        stop.child = None
    if returncode == 0:
        return "ok", None
    # gmembench stopped by a signal exits 128 + its number, screen.json closed with context
    # gmb_interrupted saying which signal after how many benchmarks.
    what = _interrupted(where / SCREEN_JSON)
    signum = stop.signum or next((s for s in STOP_SIGNALS if returncode in (128 + s, -s)), 0)
    if what or signum:
        reason = f"interrupted by {what or _signal_name(signum)}"
        if not what and returncode not in (128 + signum, -signum):  # it did not stop cleanly
            ended = f"exit code {returncode}" if returncode > 0 else _signal_name(-returncode)
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


def _signal_name(signum: int) -> str:
    try:
        return signal.Signals(signum).name
    except ValueError:
        return f"signal {signum}"


def _finish(where: Path, status: dict[str, Any], state: str, error: str | None,
            stop: _Stop | None = None) -> int:
    status.update({"state": state, "error": error, "ended": _now()})
    write_json(where / STATUS, status)
    print(f"gmb fleet task: {status['host']} rank {status['rank']}: {state}"
          + (f": {error}" if error else ""), flush=True)
    if state == "ok":
        return 0
    return 128 + stop.signum if stop and stop.signum else 1


def last_line(text: str) -> str:
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    return lines[-1] if lines else ""


def _now() -> str:
    return datetime.now().isoformat(timespec="seconds")
