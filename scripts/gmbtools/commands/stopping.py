"""Stopping and watching the benchmark binaries that `gmb` runs.

- Stopper: while it is active, SIGINT, SIGTERM and SIGHUP are caught and passed on to every
  binary gmb runs. Each binary runs in a session of its own, so a signal to the terminal's
  process group (Ctrl-C) reaches it once, through gmb, and not twice (a second signal ends a
  binary at once). The binary abandons its benchmark, closes its file and exits 128 + N; gmb
  waits for it (at most STOP_GRACE_S, then kills it) and writes what was measured.
- run_watched: runs one binary and ends it when its output files have not grown for
  `stall_timeout` seconds (the watchdog): gmembench writes its file after every benchmark.

Standard library only, like `gmb run`.
"""

import os
import signal
import subprocess
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import IO

STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)
# A binary abandons its benchmark within one iteration and exits in about a second; one stuck
# in a kernel that never returns does not, and is killed after this.
STOP_GRACE_S = 10.0
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
    """The signal to the child's process group (it leads one: start_new_session)."""
    try:
        os.killpg(child.pid, sig)
    except (ProcessLookupError, PermissionError):
        pass


@dataclass(frozen=True)
class Watched:
    """How a watched binary ended: its exit status (negative: killed by that signal), and
    the seconds without progress after which the watchdog ended it (None: it did not)."""

    returncode: int
    stalled_s: float | None = None
    longest_silence_s: float | None = None  # the longest time the files did not grow


def run_watched(command: list[str], *, cwd: Path, env: dict[str, str], stdout: IO | None,
                progress: list[Path], stall_timeout: float | None,
                stopper: Stopper, stderr: IO | None = None) -> Watched:
    """Run `command` to its end, a stop or a stall. `progress`: files whose growth shows the
    binary is alive; `stall_timeout` None or 0: no watchdog."""
    child = subprocess.Popen(command, cwd=cwd, env=env, stdout=stdout, stderr=stderr,
                             start_new_session=True)
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
                    return Watched(child.wait())
                continue
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
