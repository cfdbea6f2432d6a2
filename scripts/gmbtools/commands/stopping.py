"""Stopping and watching the benchmark binaries that `gmb` runs.

- Stopper: while it is active, SIGINT, SIGTERM and SIGHUP are caught and passed on to every
  binary gmb runs. Each binary runs in a session of its own, so a signal to the terminal's
  process group (Ctrl-C) reaches it once, through gmb, and not twice (a second signal ends a
  binary at once). The binary abandons its benchmark, closes its file and exits 128 + N; gmb
  waits for it (at most STOP_GRACE_S, then kills it) and writes what was measured.
- run_watched: runs one binary and ends it when its output files have not grown for
  `stall_timeout` seconds (the watchdog): gmembench writes its file after every benchmark; or
  at a deadline (a fleet task's time limit).
- spawn / run: every program gmb starts dies with gmb (Linux's parent-death signal, SIGTERM:
  gmembench closes its file as on any stop), however gmb dies, even by SIGKILL; one whose
  parent died before it started does not start at all.

Standard library only, like `gmb run`.
"""

import ctypes
import ctypes.util
import os
import signal
import subprocess
import sys
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)
# A binary abandons its benchmark within one iteration and exits in about a second; one stuck
# in a kernel that never returns does not, and is killed after this (gmb and fleet tasks alike:
# under Slurm, well before its KillWait of 30 s ends the task itself).
STOP_GRACE_S = 10.0
_PR_SET_PDEATHSIG = 1  # linux/prctl.h
POLL_S = 0.2
# The watchdog's default: 60 times the longest silence of a default run on an H100 (2.0 s,
# results/nvidia-h100-80gb-hbm3/20261125-202947/run_info.json, longest_silence_s), room for a
# raised --benchmark_min_time, larger arrays and slower GPUs and host links; docs/usage.md.
DEFAULT_STALL_TIMEOUT_S = 120.0


def signal_name(sig: int) -> str:
    try:
        return signal.Signals(sig).name
    except ValueError:
        return f"signal {sig}"


class Stopper:
    """Catches the stop signals while active (`with Stopper() as stopper:`), in the main
    thread only (Python's rule); elsewhere it only forwards what a caller asks."""

    def __init__(self) -> None:
        self.signal = 0  # the first stop signal's number; 0 while none came
        self._children: set[subprocess.Popen] = set()
        self._previous: dict[int, object] = {}

    def __enter__(self) -> "Stopper":
        if threading.current_thread() is threading.main_thread():
            for sig in STOP_SIGNALS:
                self._previous[sig] = signal.signal(sig, self._on_signal)
        return self

    def __exit__(self, *_: object) -> None:
        for sig, handler in self._previous.items():
            signal.signal(sig, handler)  # type: ignore[arg-type]
        self._previous.clear()

    @property
    def stopped(self) -> bool:
        return self.signal != 0

    @property
    def name(self) -> str:
        return signal_name(self.signal)

    def _on_signal(self, sig: int, _frame: object) -> None:
        # No lock: a handler runs between the main thread's bytecodes and may interrupt it.
        self.signal = self.signal or sig
        for child in list(self._children):
            _send(child, sig)

    def adopt(self, child: subprocess.Popen) -> None:
        """Forward stops to `child` from now on (and the stop that came before it started)."""
        self._children.add(child)
        if self.signal:
            _send(child, self.signal)

    def release(self, child: subprocess.Popen) -> None:
        self._children.discard(child)


def _send(child: subprocess.Popen, sig: int) -> None:
    """The signal to the child's process group where it leads one (start_new_session), else to
    the child."""
    try:
        if getattr(child, "gmb_leads_group", True):
            os.killpg(child.pid, sig)
        else:
            child.send_signal(sig)
    except (ProcessLookupError, PermissionError):
        pass


def _prctl() -> Any:
    """libc's prctl on Linux, else None (resolved once, before any fork)."""
    if not sys.platform.startswith("linux"):
        return None
    try:
        return ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6", use_errno=True).prctl
    except (OSError, AttributeError):
        return None


_PRCTL = _prctl()


def _dies_with(parent: int) -> Any:
    """The function a child runs between fork and exec: SIGTERM when `parent` dies; exit at
    once where it already has (the signal would never come)."""

    def bind() -> None:
        _PRCTL(_PR_SET_PDEATHSIG, signal.SIGTERM)
        if os.getppid() != parent:
            os._exit(128 + signal.SIGTERM)

    return bind


def spawn(command: list[str], **options: Any) -> subprocess.Popen:
    """subprocess.Popen of a program that ends when gmb ends."""
    if _PRCTL is not None:
        options["preexec_fn"] = _dies_with(os.getpid())
    return subprocess.Popen(command, **options)


def run(command: list[str], **options: Any) -> subprocess.CompletedProcess:
    """subprocess.run of a program that ends when gmb ends."""
    if _PRCTL is not None:
        options["preexec_fn"] = _dies_with(os.getpid())
    return subprocess.run(command, **options)


@dataclass(frozen=True)
class Watched:
    """How a watched binary ended: its exit status (negative: killed by that signal), and
    the seconds without progress after which the watchdog ended it (None: it did not)."""

    returncode: int
    stalled_s: float | None = None
    longest_silence_s: float | None = None  # the longest time the files did not grow
    timed_out: bool = False  # ended at the deadline
    unstopped: bool = False  # killed when it had not ended STOP_GRACE_S after a stop


def run_watched(command: list[str], *, cwd: Path | None, env: dict[str, str] | None,
                stdout: IO | None, progress: list[Path], stall_timeout: float | None,
                stopper: Stopper, stderr: IO | int | None = None,
                deadline: float | None = None, own_session: bool = True) -> Watched:
    """Run `command` to its end, a stop, a stall or `deadline` (time.monotonic(); after a stop
    the binary has STOP_GRACE_S whatever the deadline). `progress`: files whose growth shows
    the binary is alive; `stall_timeout` None or 0: no watchdog. `own_session`: the binary in
    a session of its own (gmb's terminal); False keeps it in the caller's process group (a
    Slurm task, whose step the batch system ends as a group)."""
    child = spawn(command, cwd=cwd, env=env, stdout=stdout, stderr=stderr,
                  start_new_session=own_session)
    child.gmb_leads_group = own_session  # type: ignore[attr-defined]
    stopper.adopt(child)
    try:
        seen, since = _sizes(progress), time.monotonic()
        stop_seen_at: float | None = None
        longest = 0.0
        while True:
            try:
                returncode = child.wait(timeout=POLL_S)
                return Watched(returncode, longest_silence_s=round(longest, 1))
            except subprocess.TimeoutExpired:
                pass
            now = time.monotonic()
            if stopper.stopped:
                stop_seen_at = stop_seen_at or now
                if now - stop_seen_at > STOP_GRACE_S:
                    _send(child, signal.SIGKILL)
                    return Watched(child.wait(), unstopped=True)
                continue
            if deadline is not None and now > deadline:
                _send(child, signal.SIGKILL)
                return Watched(child.wait(), timed_out=True)
            sizes = _sizes(progress)
            if sizes != seen:
                seen, since = sizes, now
            longest = max(longest, now - since)
            if stall_timeout and now - since > stall_timeout:
                # SIGKILL at once: a kernel that never returns answers nothing else, and the
                # file stays as it was, so its first missing benchmark is the one that hung
                # (a SIGTERM could let a slow one finish and the next one be blamed).
                _send(child, signal.SIGKILL)
                return Watched(child.wait(), stalled_s=round(now - since, 1),
                               longest_silence_s=round(longest, 1))
    finally:
        stopper.release(child)


def _sizes(paths: list[Path]) -> tuple[int, ...]:
    sizes = []
    for path in paths:
        try:
            sizes.append(path.stat().st_size)
        except OSError:
            sizes.append(-1)
    return tuple(sizes)
