#!/usr/bin/env bash
# `gmb advise` on every example program (examples/), as a new user runs it, on a GPU with
# Nsight Compute (docs/advise.md): builds them (release preset), then for each
#   scripts/gmb advise --save --out OUT --keep OUT/<example>.ncu-rep -- build/release/examples/<example>
# timed around the command (its wall seconds in OUT/times.txt), its output in
# OUT/<example>.txt, its saved folder under OUT/<gpu slug>/; the GPU, driver and Nsight Compute
# versions in OUT/versions.txt. Usage, from the repository root:
#   scripts/device/advise_examples.sh OUT
set -u
cd "$(dirname "$0")/../.."
out=${1:?usage: scripts/device/advise_examples.sh OUT}
mkdir -p "$out"
{ nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; ncu --version | tail -1; } \
  >"$out/versions.txt" 2>&1  # the GPU, its driver and Nsight Compute, for the record
examples="transpose_naive transpose_tiled particles_aos particles_soa column_sum hashed_gather stencil"
cmake --preset release >/dev/null && cmake --build --preset release --target $examples \
  >"$out/build.log" 2>&1 || { echo "the examples did not build ($out/build.log)"; exit 1; }
for example in $examples; do
  start=$(date +%s.%N)
  scripts/gmb advise --save --out "$out" --keep "$out/$example.ncu-rep" \
    -- "build/release/examples/$example" \
    >"$out/$example.txt" 2>&1
  status=$?
  end=$(date +%s.%N)
  seconds=$(python3 -c "print(f'{$end - $start:.2f}')")
  echo "$example: exit $status, $seconds s" | tee -a "$out/times.txt"
done
