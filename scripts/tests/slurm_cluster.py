"""A private one-node Slurm cluster for the tests: munged, slurmctld and slurmd of the local
machine, with every key, socket, spool, pid and log file under one work directory.

    with SlurmCluster(workdir) as cluster:
        subprocess.run(["sbatch", "--wait", ...], env=cluster.env)

Nothing of a system Slurm or munge is read or touched: the munge key is our own, munged listens
on its own socket, and SLURM_CONF (in `cluster.env`) points every Slurm command at our
slurm.conf. The daemons run as root (SlurmUser=root), so `available()` asks for root.
"""

import ctypes
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

DAEMONS = ("munged", "slurmctld", "slurmd")
CLIENTS = ("sbatch", "srun", "squeue", "scancel", "sinfo", "scontrol")
# Debian puts the daemons in /usr/sbin, which a non-login PATH may lack.
SEARCH_PATH = os.pathsep.join([os.environ.get("PATH", ""), "/usr/sbin", "/sbin"])
START_TIMEOUT = 60  # s: slurmd registering and the node turning idle takes a few seconds
STOP_TIMEOUT = 10  # s: per daemon, before SIGKILL
PR_SET_PDEATHSIG, PR_SET_CHILD_SUBREAPER = 1, 36  # <linux/prctl.h>


def available():
    """(True, "") when a cluster can be started here, else (False, why not)."""
    absent = [name for name in DAEMONS + CLIENTS if not shutil.which(name, path=SEARCH_PATH)]
    if absent:
        return False, f"Slurm/munge not installed ({', '.join(absent)}): run scripts/setup --test"
    if os.geteuid() != 0:
        return False, "the private Slurm cluster runs its daemons as root"
    return True, ""


def free_ports(count):
    # Ports the kernel finds unused, all held at once so that they differ; another process may
    # still take one before the daemons bind it, which is rare.
    socks = [socket.socket() for _ in range(count)]
    try:
        for s in socks:
            s.bind(("127.0.0.1", 0))
        return [s.getsockname()[1] for s in socks]
    finally:
        for s in socks:
            s.close()


def private_dir(path):
    # munged refuses directories that others can write to or read from.
    path.mkdir(parents=True, exist_ok=True)
    path.chmod(0o700)
    return path


class SlurmCluster:
    partition = "test"

    def __init__(self, workdir):
        self.dir = Path(workdir).resolve()
        self.node = socket.gethostname().split(".")[0]
        self.cpus = os.cpu_count() or 1
        self.conf = self.dir / "slurm.conf"
        self.munge_socket = self.dir / "munge-socket" / "munge.socket"
        self.procs = {}  # daemon name -> Popen
        self.env = {**os.environ, "SLURM_CONF": str(self.conf), "PATH": SEARCH_PATH}

    def __enter__(self):
        try:
            self.start()
        except BaseException:
            self.stop()
            raise
        return self

    def __exit__(self, *exc):
        self.stop()

    # --- start -------------------------------------------------------------------------------

    def start(self):
        private_dir(self.dir)
        self.start_munged()
        self.write_conf()
        self.spawn("slurmctld", reaped(["slurmctld", "-D", "-f", str(self.conf)]))
        self.spawn("slurmd", reaped(["slurmd", "-D", "-f", str(self.conf), "-N", self.node]))
        self.wait_idle()

    def start_munged(self):
        mdir = private_dir(self.dir / "munge")
        # The socket's directory is the one munged wants searchable (o+x) by everyone.
        private_dir(self.munge_socket.parent).chmod(0o711)
        key = mdir / "munge.key"
        if not key.exists():
            fd = os.open(key, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o400)
            with os.fdopen(fd, "wb") as f:
                f.write(os.urandom(1024))
        if len(str(self.munge_socket)) > 100:  # sun_path holds 108 bytes
            raise RuntimeError(f"munge socket path too long for a unix socket: {self.munge_socket}")
        # --force: munged also wants every ancestor of its socket searchable by all, which
        # pytest's private base directory (0700) is not; the key and our directories are.
        self.spawn("munged", reaped([
            "munged", "--foreground", "--force", f"--key-file={key}",
            f"--socket={self.munge_socket}", f"--pid-file={mdir / 'munged.pid'}",
            f"--log-file={mdir / 'munged.log'}", f"--seed-file={mdir / 'munged.seed'}"]))
        self.wait_for(lambda: self.munge_socket.is_socket(), "munged to open its socket")

    def write_conf(self):
        d = self.dir
        for sub in ("state", "spool", "log"):
            private_dir(d / sub)
        ctld_port, slurmd_port = free_ports(2)
        settings = {
            "ClusterName": "gmbtest",
            # Addresses given, so nothing depends on how (or whether) the host name resolves.
            "SlurmctldHost": f"{self.node}(127.0.0.1)",
            "SlurmctldPort": ctld_port,
            "SlurmdPort": slurmd_port,
            "SlurmUser": "root",
            "SlurmdUser": "root",
            "AuthType": "auth/munge",
            "CredType": "cred/munge",
            "AuthInfo": f"socket={self.munge_socket}",
            "StateSaveLocation": d / "state",
            "SlurmdSpoolDir": d / "spool",
            "SlurmctldPidFile": d / "slurmctld.pid",
            "SlurmdPidFile": d / "slurmd.pid",
            "SlurmctldLogFile": d / "log" / "slurmctld.log",
            "SlurmdLogFile": d / "log" / "slurmd.log",
            # No cgroups (containers and CI may not delegate them) and no accounting daemon.
            "ProctrackType": "proctrack/linuxproc",
            "TaskPlugin": "task/none",
            "JobAcctGatherType": "jobacct_gather/none",
            "AccountingStorageType": "accounting_storage/none",
            "JobCompType": "jobcomp/none",
            "SelectType": "select/cons_tres",
            "SelectTypeParameters": "CR_Core",
            "MpiDefault": "none",
            "MailProg": "/bin/true",
            "ReturnToService": 2,
            # Short timers: tests cancel jobs and stop the cluster, and wait on neither for long.
            "InactiveLimit": 0,
            "KillWait": 2,
            "MinJobAge": 5,
            "SlurmctldTimeout": 10,
            "SlurmdTimeout": 10,
            "SlurmctldDebug": "info",
            "SlurmdDebug": "info",
        }
        lines = [f"{k}={v}" for k, v in settings.items()]
        lines += [f"NodeName={self.node} NodeAddr=127.0.0.1 CPUs={self.cpus} State=UNKNOWN",
                  f"PartitionName={self.partition} Nodes={self.node} Default=YES "
                  "MaxTime=INFINITE State=UP"]
        self.conf.write_text("\n".join(lines) + "\n")

    def spawn(self, name, argv):
        log = open(self.dir / f"{name}.out", "ab")
        # A session of its own, so a Ctrl-C to pytest does not reach the daemons before stop().
        self.procs[name] = subprocess.Popen(argv, env=self.env, stdin=subprocess.DEVNULL,
                                            stdout=log, stderr=subprocess.STDOUT,
                                            start_new_session=True)
        log.close()

    def wait_idle(self):
        def idle():
            out = self.run("sinfo", "-h", "-o", "%t", check=False).stdout.split()
            return out == ["idle"]
        self.wait_for(idle, "the node to turn idle")

    def wait_for(self, ready, what):
        timeout = START_TIMEOUT
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            dead = [n for n, p in self.procs.items() if p.poll() is not None]
            if dead:
                raise RuntimeError(f"{', '.join(dead)} exited while waiting for {what}\n"
                                   + self.logs())
            if ready():
                return
            time.sleep(0.2)
        raise RuntimeError(f"timed out after {timeout} s waiting for {what}\n" + self.logs())

    def logs(self, lines=20):
        """The tail of every daemon's output, for error messages (in the foreground, the
        daemons log to it what they also write to their log files)."""
        parts = []
        for path in sorted(self.dir.glob("*.out")):
            tail = path.read_text(errors="replace").splitlines()[-lines:]
            parts.append(f"--- {path}\n" + "\n".join(tail))
        return "\n".join(parts)

    # --- use ---------------------------------------------------------------------------------

    def run(self, *argv, check=True, timeout=30):
        """A Slurm command against this cluster."""
        return subprocess.run(argv, env=self.env, capture_output=True, text=True,
                              check=check, timeout=timeout)

    def jobs(self):
        """Ids of the jobs pending, running or completing."""
        return self.run("squeue", "-h", "-o", "%i", check=False).stdout.split()

    # --- stop --------------------------------------------------------------------------------

    def stop(self):
        if "slurmctld" in self.procs:
            self.cancel_all()
        # slurmctld needs munged to the end, so munged goes last.
        for name in ("slurmd", "slurmctld", "munged"):
            self.terminate(name)

    def cancel_all(self):
        try:
            ids = self.jobs()
            if ids:
                self.run("scancel", *ids, check=False, timeout=10)
            deadline = time.monotonic() + STOP_TIMEOUT
            while self.jobs() and time.monotonic() < deadline:
                time.sleep(0.2)
        except (OSError, subprocess.SubprocessError):
            pass  # a daemon that is gone cannot cancel; the reaper still ends the jobs

    def terminate(self, name):
        proc = self.procs.pop(name, None)
        if proc is None or proc.poll() is not None:
            return
        proc.terminate()
        try:
            proc.wait(2 * STOP_TIMEOUT)  # a reaper takes up to STOP_TIMEOUT itself
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


# --- reaper ----------------------------------------------------------------------------------
# slurmd starts each slurmstepd through a double fork, so steps and job tasks end up as orphans
# that outlive slurmd and, under a container's init that never waits, as zombies. The daemons
# therefore run under a small reaper: a child subreaper, so every orphan below it becomes its
# child; on SIGTERM it stops the daemon, then kills and waits for everything left. The SIGTERM
# also comes when the test process dies without stopping the cluster (parent-death signal).


def reaped(argv):
    return [sys.executable, os.path.abspath(__file__), "--reap", *argv]


def reap(argv):
    libc = ctypes.CDLL(None, use_errno=True)
    for option, value in ((PR_SET_CHILD_SUBREAPER, 1), (PR_SET_PDEATHSIG, signal.SIGTERM)):
        if libc.prctl(option, value, 0, 0, 0) != 0:
            raise OSError(ctypes.get_errno(), f"prctl({option})")
    daemon, stopping = None, False

    def stop(*_):  # SIGTERM: pass it on, and SIGKILL a daemon that hangs
        nonlocal stopping
        stopping = True
        if daemon:
            daemon.terminate()
            signal.alarm(STOP_TIMEOUT)
    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGALRM, lambda *_: daemon.kill())
    daemon = subprocess.Popen(argv)
    if stopping:  # the SIGTERM came while the daemon was starting
        stop()
    while True:  # orphans are reaped as they come, until the daemon itself ends
        pid, status = os.waitpid(-1, 0)
        if pid == daemon.pid:
            break
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    signal.alarm(0)
    kill_children()
    return os.waitstatus_to_exitcode(status)


def kill_children():
    """SIGKILL our children until none is left (orphans of the killed ones come to us)."""
    me = str(os.getpid())
    while True:
        for entry in Path("/proc").iterdir():
            try:
                if entry.name.isdigit() and ppid(entry) == me:
                    os.kill(int(entry.name), signal.SIGKILL)
            except (OSError, ValueError):
                pass  # gone meanwhile
        try:
            os.waitpid(-1, 0)
        except ChildProcessError:
            return


def ppid(proc_dir):
    # /proc/PID/stat: "pid (comm) state ppid ..."; comm may hold spaces and parentheses.
    stat = (proc_dir / "stat").read_text()
    return stat[stat.rindex(")") + 2:].split()[1]


if __name__ == "__main__" and sys.argv[1:2] == ["--reap"]:
    sys.exit(reap(sys.argv[2:]))
