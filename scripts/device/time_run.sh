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
# still written. Usage, from the repository root:
#   scripts/device/time_run.sh OUT [gmb run options]
set -u
cd "$(dirname "$0")/../.."
out=${1:?usage: scripts/device/time_run.sh OUT [gmb run options]}
shift
mkdir -p "$out"
python3 - "$out" "$@" <<'EOF'
import os, signal, subprocess, sys, time
out, args = sys.argv[1], sys.argv[2:]
# Lines as they are printed: gmb's unbuffered, the binaries' (C++ streams on C stdio) line by line
env = {**os.environ, "PYTHONUNBUFFERED": "1"}
start = time.monotonic()
lines = []
with open(f"{out}/gmb-lines.txt", "w") as log:
    # its own session: a terminal's Ctrl-C reaches it once, through this script
    run = subprocess.Popen(["stdbuf", "-oL", "scripts/gmb", "run", "--out", f"{out}/res", *args],
                           stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=env,
                           start_new_session=True)
    for sig in (signal.SIGINT, signal.SIGTERM):
        signal.signal(sig, lambda number, _: run.send_signal(number))
    for line in run.stdout:
        t = time.monotonic() - start
        lines.append((t, line.rstrip("\n")))
        log.write(f"{t:9.3f} {line}")
        log.flush()
    status = run.wait()
total = time.monotonic() - start
with open(f"{out}/time.txt", "w") as f:
    f.write(f"scripts/gmb run --out {out}/res {' '.join(args)}: exit {status}, {total:.1f} s\n")
# A benchmark's aggregates follow its repetitions: its first one (_mean) ends it. A binary's
# first command line (gmb prints it) starts the clock again, so set-up and the build count in
# no benchmark; a binary started again past a stalled benchmark keeps its clock running.
import re
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
with open(f"{out}/slowest.txt", "w") as f:
    for label, seconds in spans.items():
        f.write(f"{seconds:8.2f} s  {label:8s} (the binary, start to its last benchmark)\n")
    for seconds, label, name in sorted(ends, reverse=True)[:40]:
        f.write(f"{seconds:8.2f} s  {label:8s} {name}\n")
print(open(f"{out}/time.txt").read(), end="")
sys.exit(status)
EOF
