#!/usr/bin/env bash
# Issue 26: pattern family on one GPU: tests, calibration against the built-ins, ncu, timing.
set -uo pipefail
export GMB_OFFLINE=1 PYTHONUNBUFFERED=1 GMB_GIT_SHA=$(cat .dev/sha.txt)
C=$OUT/cal; mkdir -p $C
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv | tee $C/gpu.txt
cmake --preset release > /dev/null
cmake --build --preset release --target gmembench gmb_device_tests gmb_host_tests 2>&1 | tail -2
ctest --preset release -R 'Pattern' --output-on-failure > $C/ctest.txt 2>&1; tail -4 $C/ctest.txt
B=build/release/gmembench
common="--gmb_bytes=1G --benchmark_repetitions=5 --benchmark_format=json"
run() { local tag=$1; shift; echo "== $tag: $B $common $*" >> $C/commands.txt
  $B $common "$@" > $C/$tag.json 2> $C/$tag.log; echo "$tag rc=$?"; }
run read --gmb_pattern='i' --benchmark_filter='^(pattern/|read/f32/ilp:1/grid:full$|ref/memcpy_d2d$)'
run offset --gmb_pattern='i' --gmb_pattern='i + 1' --gmb_pattern_op=gather --gmb_pattern_threads=268435200 --benchmark_filter='^(pattern/|offset/f32/read/off:(0|1)$)'
run stride --gmb_pattern='i * 2' --gmb_pattern='i * 8' --gmb_pattern='i * 32' --gmb_pattern_op=gather --gmb_pattern_threads=16777216 --gmb_pattern_n=536870912 --benchmark_filter='^(pattern/|stride/f32/read/s:(2|8|32)$)'
run aos --gmb_pattern='i * 4' --gmb_pattern_op=gather --gmb_pattern_threads=67108864 --benchmark_filter='^(pattern/|aos/s16/fields:one$)'
# Five patterns no built-in has, against Nsight Compute's sectors per request.
M=l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum,l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum
five=(--gmb_pattern='(i % 16384) * 16384 + i / 16384' --gmb_pattern='(i * 2654435761u) % n' --gmb_pattern='n - 1 - i' --gmb_pattern='(i % 8) * (n / 8) + i / 8')
run five "${five[@]}" --benchmark_repetitions=1
run padded --gmb_pattern='lane * 33 + warp * 32 * 33' --gmb_pattern_threads=8134400 --benchmark_repetitions=1
for f in five padded; do
  args=("${five[@]}"); [ $f = padded ] && args=(--gmb_pattern='lane * 33 + warp * 32 * 33' --gmb_pattern_threads=8134400)
  echo "== ncu-$f: ncu --kernel-name gmb_pattern_run --metrics $M --csv $B --gmb_profile --gmb_bytes=1G ${args[*]}" >> $C/commands.txt
  ncu --kernel-name gmb_pattern_run --metrics $M --csv $B --gmb_profile --gmb_bytes=1G "${args[@]}" > $C/ncu-$f.csv 2> $C/ncu-$f.log; echo "ncu-$f rc=$?"
done
# From typing the command to the explanation, built suite: first (cache empty), then cached.
export GMB_RTC_CACHE=/tmp/gmb-rtc
for t in first second; do
  { /usr/bin/time -f "wall_s %e" scripts/gmb pattern '(i % 32) * 32 + i / 32' --binary $B ; } > $C/time-$t.txt 2>&1; echo "time-$t rc=$?"; tail -2 $C/time-$t.txt
done
scripts/gmb pattern 'i' 'i + 1' 'i * 8' '(i % 32) * 32 + i / 32' 'n - 1 - i' '(i * 2654435761u) % n' --threads 16777216 --binary $B --save > $C/save-read.txt 2>&1; echo "save-read rc=$?"
scripts/gmb pattern 'i' 'i + 1' 'i * 8' '(i % 32) * 32 + i / 32' 'n - 1 - i' '(i * 2654435761u) % n' --op gather --threads 16777216 --binary $B --save > $C/save-gather.txt 2>&1; echo "save-gather rc=$?"
cp -r results/*/*-pattern $C/ 2>/dev/null
tar czf $OUT/cal.tgz -C $OUT cal
