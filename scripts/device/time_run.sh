#!/usr/bin/env bash
# The default run timed as a new user meets it (docs/method.md, "Fast."):
#   scripts/gmb run --out OUT/res [ARGS]
# with every output line prefixed by the seconds since the start (OUT/gmb-lines.txt), the
# total and the exit status in OUT/time.txt, and in OUT/slowest.txt each binary's seconds and
# the benchmarks that took longest: each the seconds from the result line before it (or its
# binary's command line) to its own, with its build (a binary's start counts in its first
# benchmark; set-up and the build in none). On a fresh machine (no build/) the total includes
# set-up and the build. Ctrl-C or SIGTERM is passed to
# `gmb run` once (it stops as it does alone, keeping what it measured) and the lines so far are
# still written. A file it cannot write (a full disk) costs one line on stderr, never the run.
# Usage, from the repository root:
#   scripts/device/time_run.sh OUT [gmb run options]
set -u
cd "$(dirname "$0")/../.."
out=${1:?usage: scripts/device/time_run.sh OUT [gmb run options]}
shift
mkdir -p "$out"
python3 - "$out" "$@" <<'EOF'
import os, re, signal, subprocess, sys, time
out, args = sys.argv[1], sys.argv[2:]
# Lines as they are printed: gmb's unbuffered, the binaries' (C++ streams on C stdio) line by line
env = {**os.environ, "PYTHONUNBUFFERED": "1"}
start = time.monotonic()
lines = []


def written(path, text, mode="w"):
    """Writes text to path; on a full disk says so in one line and returns False."""
    try:
        with open(path, mode) as f:
            f.write(text)
        return True
    except OSError as error:
        print(f"time_run: {path}: {error.strerror}", file=sys.stderr)
        return False


# its own session: a terminal's Ctrl-C reaches it once, through this script
run = subprocess.Popen(["stdbuf", "-oL", "scripts/gmb", "run", "--out", f"{out}/res", *args],
                       stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=env,
                       start_new_session=True)
for sig in (signal.SIGINT, signal.SIGTERM):
    signal.signal(sig, lambda number, _: run.send_signal(number))
logging = written(f"{out}/gmb-lines.txt", "")
for line in run.stdout:  # read to the end even when the log can't be written: gmb keeps going
    t = time.monotonic() - start
    lines.append((t, line.rstrip("\n")))
    logging = logging and written(f"{out}/gmb-lines.txt", f"{t:9.3f} {line}", "a")
status = run.wait()
total = time.monotonic() - start
timing = f"scripts/gmb run --out {out}/res {' '.join(args)}: exit {status}, {total:.1f} s\n"
# A benchmark's aggregates follow its repetitions: its first one (_mean) ends it. A binary's
# first command line (gmb prints it) starts the clock again, so set-up and the build count in
# no benchmark; a binary started again past a stalled benchmark keeps its clock running.
command = re.compile(r"gmb: (?:\w+=\S+ )*\S*build/[^/ ]+/gmembench(-\w+)? --device=(\d+)")
ends, last, label, started = [], 0.0, "?", set()
for t, line in lines:
    binary = command.match(line)
    if binary:
        label = (binary.group(1) or "-default")[1:]
        label += f" gpu{binary.group(2)}" if binary.group(2) != "0" else ""
        if label not in started:
            started.add(label)
            last = t
        continue
    name = line.split(" ", 1)[0]
    if name.endswith("_mean"):
        ends.append((t - last, label, name[: -len("_mean")]))
        last = t
spans = {}  # binary -> its first command line to its last result line
for seconds, label, _ in ends:
    spans[label] = spans.get(label, 0.0) + seconds
slowest = [f"{seconds:8.2f} s  {label:8s} (the binary, start to its last benchmark)\n"
           for label, seconds in spans.items()]
slowest += [f"{seconds:8.2f} s  {label:8s} {name}\n"
            for seconds, label, name in sorted(ends, reverse=True)[:40]]
written(f"{out}/time.txt", timing)
written(f"{out}/slowest.txt", "".join(slowest))
print(timing, end="")
sys.exit(status)
EOF
