#!/usr/bin/env bash
# The records of a node of several GPUs (docs/peer.md): the link as the driver and NVML see it,
# the peer matrix (`scripts/gmb peers`) and a node run (`scripts/gmb run --devices all
# --concurrent`), one after the other, each with its own results folder and its full log.
# Usage: scripts/device/node_record.sh OUT_DIR   (from the repository root; OUT_DIR gets
# node-record.tar.gz: the folders, with logs/ and link.txt added to each)
set -u
cd "$(dirname "$0")/../.."
out=${1:?usage: scripts/device/node_record.sh OUT_DIR}
log=$(mktemp -d)
{ nvidia-smi -L; nvidia-smi topo -m; nvidia-smi nvlink -s; } >"$log/link.txt" 2>&1

folders=()
record() {  # record NAME COMMAND...: run it, keep its log, remember the folder it names
  local name=$1; shift
  local start=$SECONDS
  "$@" >"$log/$name.log" 2>&1
  echo "record: $* -> exit $?, $((SECONDS - start)) s"
  local folder
  folder=$(sed -n 's/^gmb: \(peer matrix folder\|results folder\) //p' "$log/$name.log" | head -n 1)
  [ -n "$folder" ] || { tail -n 20 "$log/$name.log"; return; }
  mkdir -p "$folder/logs"
  cp "$log/$name.log" "$log/link.txt" "$folder/logs/"
  folders+=("${folder#"$PWD"/}")
}
record peers scripts/gmb peers
record node scripts/gmb run --devices all --concurrent
tar -czf "$out/node-record.tar.gz" "${folders[@]}"
printf 'record: %s\n' "${folders[@]}"
