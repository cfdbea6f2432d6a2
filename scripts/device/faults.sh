#!/usr/bin/env bash
# The fault checks on a GPU (docs/testing.md, docs/usage.md):
#   full-disk: `scripts/gmb run --flavors default --benchmark_filter='^offset/'` with --out on a
#     400-KiB tmpfs that fills mid-flavor; what the folder holds; the tmpfs made larger, then
#     `--resume`, and the names against the filter's.
#   kill [SECONDS]: SIGKILL to `scripts/gmb run` SECONDS (default 20) after its benchmarks start;
#     how long its gmembench outlived it; what the folder holds. Prints the folder; `--resume`
#     it then (scripts/device/stop_and_resume.sh's report of names per flavor applies).
# Needs root (mount) or unprivileged user namespaces. Usage, from the repository root:
#   scripts/device/faults.sh full-disk DIR | scripts/device/faults.sh kill OUT [SECONDS]
set -u
cd "$(dirname "$0")/../.."

describe() {  # what a results folder holds: files, sizes, and each flavor file's state
  python3 - "$1" <<'PY'
import gzip, json, sys
from pathlib import Path
folder = Path(sys.argv[1])
for path in sorted(folder.iterdir()):
    print(f"  {path.name}: {path.stat().st_size} bytes")
for path in sorted(folder.glob("*.json*")):
    if not path.name.split(".")[0] in ("default", "ca", "cg"):
        continue
    opened = gzip.open(path, "rt") if path.name.endswith(".gz") else open(path)
    try:
        doc = json.load(opened)
    except ValueError as err:
        print(f"  {path.name}: DOES NOT PARSE ({err})")
        continue
    names = {b["run_name"] for b in doc["benchmarks"]}
    print(f"  {path.name}: parses, {len(names)} benchmarks, gmb_interrupted = "
          f"{doc['context'].get('gmb_interrupted')!r}")
PY
}

full_disk() {
  local dir=$1 filter='^offset/'
  mount -t tmpfs -o size=400k gmb-full "$dir" || return 1
  scripts/gmb run --flavors default --out "$dir" --benchmark_filter="$filter" >"$dir.run.log" 2>&1
  echo "full-disk: scripts/gmb run on a 400-KiB tmpfs: exit status $?"
  grep -E '(gmb|gmembench): error' "$dir.run.log" | sed 's/^/full-disk: said: /'
  local folder
  folder=$(ls -d "$dir"/*/* | head -1)
  echo "full-disk: $folder holds:"
  describe "$folder"
  mount -o remount,size=64m "$dir"
  scripts/gmb run --resume "$folder" >"$dir.resume.log" 2>&1
  echo "full-disk: tmpfs made 64 MiB; scripts/gmb run --resume: exit status $?"
  describe "$folder"
  local listed
  listed=$(build/release/gmembench --benchmark_filter="$filter" --benchmark_list_tests | grep -c /)
  echo "full-disk: the filter selects $listed benchmarks"
  cp -r "$folder" "$dir.saved"
}

kill_gmb() {
  local out=$1 after=${2:-20} log
  log=$(mktemp)
  scripts/gmb run --out "$out" >"$log" 2>&1 &
  local gmb=$!
  until grep -q 'build/release/gmembench --device' "$log" 2>/dev/null; do
    kill -0 $gmb 2>/dev/null || { cat "$log"; return 1; }
    sleep 0.2
  done
  sleep "$after"
  kill -KILL $gmb
  local sent left
  sent=$(date +%s.%N)
  for _ in $(seq 1 200); do
    left=$(pgrep -f 'build/release/gmembench' || true)
    [ -z "$left" ] && break
    sleep 0.05
  done
  local gone
  gone=$(date +%s.%N)
  echo "kill: SIGKILL to scripts/gmb run ${after} s into its benchmarks"
  echo "kill: no gmembench process left after $(python3 -c "print(f'{$gone - $sent:.2f}')") s${left:+ (STILL RUNNING after 10 s: $left)}"
  local folder
  folder=$(sed -n 's/^gmb: results folder //p' "$log")
  echo "kill: $folder holds:"
  describe "$folder"
  cp "$log" "$folder/killed-run.log"
  echo "$folder"
}

case "${1:-}" in
  full-disk)
    if [ "$(id -u)" = 0 ]; then
      export -f full_disk describe
      unshare --mount bash -c 'full_disk "$0"' "$2"
    else
      export -f full_disk describe
      unshare --user --map-root-user --mount bash -c 'full_disk "$0"' "$2"
    fi ;;
  kill) kill_gmb "$2" "${3:-20}" ;;
  *) echo "usage: $0 full-disk DIR | kill OUT [SECONDS]" >&2; exit 2 ;;
esac
