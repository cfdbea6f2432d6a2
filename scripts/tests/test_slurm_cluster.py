"""The private Slurm cluster the fleet tests submit to (slurm_cluster.py): jobs run, several tasks
to a job through srun, and scancel ends a running one."""

import os
import subprocess
import time
from pathlib import Path


def wait_until(ready, what, timeout=30):
    deadline = time.monotonic() + timeout
    while not ready():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.2)


def sbatch(cluster, *args):
    proc = cluster.run("sbatch", "--parsable", *args, check=False, timeout=60)
    assert proc.returncode == 0, proc.stderr
    return proc.stdout.strip().split(";")[0]  # "jobid[;cluster]"


def job_state(cluster, job_id):
    out = cluster.run("scontrol", "show", "job", job_id, check=False).stdout
    return next((f.split("=", 1)[1] for f in out.split() if f.startswith("JobState=")), None)


def test_the_node_offers_every_cpu_in_the_default_partition(slurm_cluster):
    out = slurm_cluster.run("sinfo", "-h", "-o", "%P %N %c").stdout.split()
    assert out == [f"{slurm_cluster.partition}*", slurm_cluster.node, str(slurm_cluster.cpus)]


def test_a_two_task_job_runs_each_task_through_srun(slurm_cluster, tmp_path: Path):
    script = tmp_path / "job.sh"
    task = f'echo "$SLURM_PROCID $(hostname)" > {tmp_path}/task-$SLURM_PROCID'
    script.write_text(f"#!/bin/sh\nsrun sh -c '{task}'\n")
    sbatch(slurm_cluster, "--wait", "--ntasks=2", f"--output={tmp_path}/slurm-%j.out", str(script))
    for rank in ("0", "1"):
        procid, host = (tmp_path / f"task-{rank}").read_text().split()
        assert procid == rank and host.split(".")[0] == slurm_cluster.node


def test_scancel_ends_a_running_job(slurm_cluster, tmp_path: Path):
    pid_file = tmp_path / "pid"
    # exec: the pid written is the sleep's own, so the test can see that it is gone.
    job_id = sbatch(slurm_cluster, f"--output={tmp_path}/slurm-%j.out",
                    f"--wrap=echo $$ > {pid_file}; exec sleep 600")
    wait_until(lambda: pid_file.exists() and pid_file.read_text().strip(), "the job to start")
    pid = int(pid_file.read_text())
    assert job_state(slurm_cluster, job_id) == "RUNNING"

    slurm_cluster.run("scancel", job_id)
    wait_until(lambda: job_id not in slurm_cluster.jobs(), "the job to leave the queue")
    assert job_state(slurm_cluster, job_id) in ("CANCELLED", None)  # None: already purged
    wait_until(lambda: not alive(pid), "the job's process to end", timeout=10)


def alive(pid):
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True
