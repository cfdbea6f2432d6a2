#!/usr/bin/env bash
# The stop-and-resume check on a GPU (docs/testing.md): `scripts/gmb run`, SIGTERM to gmb alone
# after 30 s of benchmarks, then `scripts/gmb run --resume` on its folder. Prints how long the
# binaries outlived the signal, what the stopped folder holds, and the names per flavor after the
# resume. Usage: scripts/device/stop_and_resume.sh [SECONDS]   (from the repository root)
set -u
cd "$(dirname "$0")/../.."
after=${1:-30}
log=$(mktemp -d)
scripts/gmb run >"$log/run.log" 2>&1 &
gmb=$!
until grep -q '^gmb: results folder ' "$log/run.log" 2>/dev/null; do
  kill -0 $gmb 2>/dev/null || { cat "$log/run.log"; exit 1; }
  sleep 0.2
done
folder=$(sed -n 's/^gmb: results folder //p' "$log/run.log")
sleep "$after"
kill -TERM $gmb
sent=$(date +%s.%N)
left=""
for _ in $(seq 1 100); do
  left=$(pgrep -f 'build/release/gmembench' || true)
  [ -z "$left" ] && break
  sleep 0.05
done
gone=$(date +%s.%N)
wait $gmb
echo "stop: scripts/gmb run got SIGTERM ${after} s into its benchmarks; exit status $?"
echo "stop: no gmembench process left after $(python3 -c "print(f'{$gone - $sent:.2f}')") s${left:+ (STILL RUNNING: $left)}"
tail -n 2 "$log/run.log" | sed 's/^/stop: gmb said: /'
python3 - "$folder" <<'PY'
import gzip, json, sys
from pathlib import Path
folder = Path(sys.argv[1])
for path in sorted(folder.glob("*.json.gz")):
    doc = json.load(gzip.open(path, "rt"))
    names = {b["run_name"] for b in doc["benchmarks"]}
    print(f"stop: {path.name}: parses, {len(names)} benchmarks, gmb_interrupted = "
          f"{doc['context'].get('gmb_interrupted')!r}")
print("stop: summary.md starts:", (folder / "summary.md").read_text().splitlines()[2][:200])
PY
cp -r "$folder" "$log/stopped"
scripts/gmb run --resume "$folder" >"$log/resume.log" 2>&1
echo "resume: scripts/gmb run --resume exit status $?"
tail -n 1 "$log/resume.log" | sed 's/^/resume: gmb said: /'
python3 - "$folder" <<'PY'
import gzip, json, sys
from pathlib import Path
folder = Path(sys.argv[1])
for path in sorted(folder.glob("*.json.gz")):
    doc = json.load(gzip.open(path, "rt"))
    names = [b["run_name"] for b in doc["benchmarks"] if b.get("run_type") != "aggregate"]
    errored = {b["run_name"] for b in doc["benchmarks"] if b.get("error_occurred")}
    print(f"resume: {path.name}: {len(set(names))} names, {len(names)} repetitions, "
          f"{len(errored)} errored, interrupted: {'gmb_interrupted' in doc['context']}")
PY
mkdir -p "$folder/logs"
cp "$log/run.log" "$log/resume.log" "$folder/logs/"
echo "$folder"
