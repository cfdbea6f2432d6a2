"""`gmb fleet submit`: the screening sweep on every GPU of a Slurm job.

`submit` makes `results/fleet/<YYYYmmdd-HHMMSS>/` with `fleet.json` (what was asked: nodes, tasks,
binary, limits, the job id) and `job.sbatch`, and hands the job to Slurm: `sbatch`, or `srun`
straight away when run inside an allocation. Slurm starts one task per GPU; each runs `gmb fleet
task DIR` (fleet_task.py), which screens its GPU (`--gmb_sweep=screen`, one flavor) into
`DIR/<host>/<gpu-uuid>/` (`task-<rank>` where no GPU answers) and always leaves `status.json`
saying how it ended: ok, failed (with the binary's one-line error), timeout, or interrupted (a stop
signal: Slurm's warning before the time limit, see `batch_script`). A task Slurm kills outright
never gets that far: its `status.json` still says `running`, which the report shows. `gmb fleet
report` (present/fleet_report.py) merges them. Standard library only, like `gmb run`.

What the user gives (`--partition`, `--time`, `--sbatch-arg`, the `--out` folder) is written
into `#SBATCH` lines, so `SubmitOptions` (and `submit`, for the folder) refuses, before anything
is built, written or submitted, any value that could add a line of its own or that Slurm would
not parse.
"""

import os
import re
import shlex
import subprocess
import sys
import unicodedata
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

from gmbtools.commands import binaries
from gmbtools.commands.fleet_task import last_line
from gmbtools.commands.repo import find_repo
from gmbtools.data.fleet_folder import Manifest, save_manifest
from gmbtools.errors import GmbError

GMB_SCRIPT = Path(__file__).resolve().parents[2] / "gmb"


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

    def __post_init__(self) -> None:
        """Refuse what would break the batch script, naming the option (exit status 2)."""
        if self.partition is not None:
            check_partition(self.partition)
        time_limit_s(self.time_limit)
        for arg in self.sbatch_args:
            check_sbatch_arg(arg)


# --- what goes into the batch script ---------------------------------------------------------
# sbatch reads each `#SBATCH` line up to its newline and splits it as a command line of its own:
# whitespace separates arguments, quotes group them, a backslash escapes, an unquoted `#`
# starts a comment (sbatch's _get_argument, src/sbatch/opt.c). A value with a newline (or any
# character that is not printable: tab, escape, DEL, ...) would add lines, or bytes a reader
# cannot see, to the job script: no Slurm value needs one, so all are refused.

# sbatch --time, as the sbatch man page (Slurm 22.05, `man sbatch`, -t/--time) lists them:
# "minutes", "minutes:seconds", "hours:minutes:seconds", "days-hours", "days-hours:minutes" and
# "days-hours:minutes:seconds"; 0 asks for no limit. Slurm's parser (time_str2secs in
# src/common/parse_time.c) also takes "INFINITE" and "UNLIMITED" in any case, as here; its
# undocumented "-1" and half-written forms such as "1-" are refused.
_N = r"\d{1,10}"  # more digits than a C int holds are refused (and never reach int())
_TIME = re.compile(rf"(?P<d>{_N})-(?P<dh>{_N})(?::(?P<dm>{_N})(?::(?P<ds>{_N}))?)?"
                   rf"|(?P<h>{_N}):(?P<hm>{_N}):(?P<hs>{_N})"
                   rf"|(?P<m>{_N})(?::(?P<ms>{_N}))?", re.ASCII)
_TIME_FORMATS = ("minutes, minutes:seconds, hours:minutes:seconds, days-hours, "
                 "days-hours:minutes, days-hours:minutes:seconds, or UNLIMITED")
_SLURM_INT_MAX = 2**31 - 1  # Slurm holds the limit in seconds in a C int
# The characters sbatch's #SBATCH parser gives a meaning of its own (see above): a partition
# name never holds one.
_PARTITION_SPECIAL = set("#\"'\\")


def time_limit_s(text: str) -> int | None:
    """The `--time` limit in seconds, rounded up to the minute as Slurm does; None for no limit
    (0, UNLIMITED). A GmbError (exit status 2) for what Slurm would not parse."""
    _printable("--time", text)
    if text.upper() in ("UNLIMITED", "INFINITE"):
        return None
    match = _TIME.fullmatch(text)
    if not match:
        raise GmbError(f"--time: {text!r} is not a Slurm time limit ({_TIME_FORMATS})", 2)
    n = {k: int(v) for k, v in match.groupdict().items() if v is not None}
    seconds = (n.get("d", 0) * 86400 + (n.get("dh", 0) + n.get("h", 0)) * 3600
               + (n.get("dm", 0) + n.get("hm", 0) + n.get("m", 0)) * 60
               + n.get("ds", 0) + n.get("hs", 0) + n.get("ms", 0))
    if seconds > _SLURM_INT_MAX:
        raise GmbError(f"--time: {text!r} is longer than Slurm can hold", 2)
    return -(-seconds // 60) * 60 or None


def check_partition(name: str) -> None:
    """A partition name, or a comma-separated list of them, as `sbatch --partition` takes."""
    _printable("--partition", name)
    bad = sorted({c for c in name if c.isspace() or c in _PARTITION_SPECIAL})
    if bad or "" in name.split(","):
        why = (f"holds {' '.join(map(repr, bad))}" if bad else "is empty" if not name
               else "an empty name in its list")
        raise GmbError(f"--partition: {name!r} is not a Slurm partition name ({why})", 2)


def check_sbatch_arg(arg: str) -> None:
    """One sbatch option (`--account=ops`, `-A ops`), for a line of its own."""
    _printable("--sbatch-arg", arg)
    if not arg.startswith("-") or not arg.strip("-").strip():
        raise GmbError(f"--sbatch-arg: {arg!r} is not an sbatch option (write it as "
                       "--sbatch-arg=--account=ops)", 2)


def _printable(option: str, text: str) -> None:
    """Refuse a newline or any other character that is not printable (str.isprintable: the
    C0 controls with tab, DEL, the C1 controls, line and paragraph separators, ...)."""
    bad = next((c for c in text if not c.isprintable()), None)
    if bad is not None:
        kind = "control" if unicodedata.category(bad) == "Cc" else "non-printing"
        raise GmbError(f"{option}: {text!r} holds a {kind} character (U+{ord(bad):04X}), "
                       "which would go into the job script as it is", 2)


def _sbatch_word(text: str) -> str:
    """`text` as one argument of an #SBATCH line (quoted where sbatch would split it)."""
    if text and not any(c.isspace() or c in _PARTITION_SPECIAL for c in text):
        return text
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


def submit(options: SubmitOptions, repo: Path | None = None) -> Path:
    """Build (unless given a binary), write the fleet folder, hand it to Slurm; return the
    folder. With `wait`, return when the job has ended (sbatch --wait, or srun)."""
    repo = repo or find_repo()
    root = (options.out or repo / "results").resolve()
    # The folder goes into the script's --output line: checked before the build, like the rest.
    _printable("--out" if options.out else "the results folder", str(root))
    binary = (options.binary or _build(options, repo)).resolve()
    if not binary.is_file():
        raise GmbError(f"{binary}: no such benchmark binary")
    folder = binaries.make_run_dir(root, "fleet", datetime.now())
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
        reason = last_line(stderr) or f"exit code {proc.returncode}"
        raise GmbError(f"sbatch failed: {reason} (fleet folder {folder})")
    return folder


# The warning before the time limit. `--signal=TERM@S` without `B:` is sent to the job steps, not
# to the batch shell: that is every process of the `srun` step, so each task's `gmb fleet task` and
# its gmembench get SIGTERM at once, while the batch shell goes on waiting for srun and ends the
# job itself before the limit. (`B:` would signal the batch shell alone, which would have to pass
# it on to the step.) gmembench then abandons the benchmark in progress and closes screen.json with
# context gmb_interrupted; the task waits for it (fleet_task.STOP_GRACE_S at most) and writes
# status.json saying "interrupted". 120 s is four times that grace: room as well for a busy
# slurmctld that checks its timers late and for the files to reach a shared file system. Slurm may
# send the signal up to 60 s earlier than asked (sbatch man page, --signal), which costs a job
# whose screen takes seconds per GPU nothing. A short job gets a quarter of its limit instead, so
# the warning never comes at the start; a job without a limit (0, UNLIMITED) none.
SIGNAL_LEAD_S = 120


def signal_lead_s(time_limit: str) -> int | None:
    """Seconds before the limit that `--signal` asks for; None where the job has no limit."""
    limit = time_limit_s(time_limit)
    return min(SIGNAL_LEAD_S, limit // 4) if limit else None


def batch_script(options: SubmitOptions, folder: Path, task_command: list[str]) -> str:
    """The job: one task per GPU of every node, each running `gmb fleet task`."""
    lines = [
        "#!/bin/bash",
        "#SBATCH --job-name=gmb-fleet",
        f"#SBATCH --nodes={options.nodes}",
        f"#SBATCH --ntasks-per-node={options.gpus_per_node}",
        f"#SBATCH --time={options.time_limit}",
        f"#SBATCH --output={_sbatch_word(f'{folder}/slurm-%j.out')}",
    ]
    lead = signal_lead_s(options.time_limit)
    if lead:
        lines.append(f"#SBATCH --signal=TERM@{lead}")
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
    preset = binaries.build(repo, dict(os.environ), options.preset, options.cuda_archs,
                           ["gmembench"])
    return repo / "build" / preset / "gmembench"



