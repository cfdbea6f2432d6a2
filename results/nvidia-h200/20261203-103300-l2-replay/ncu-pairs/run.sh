#!/bin/bash
# one-off device experiment (untracked): L2 survival of scattered picks' granules vs reuse lag
set -x
nvidia-smi --query-gpu=name,driver_version --format=csv > $OUT/gpu.txt
cmake --preset release > $OUT/cmake.log 2>&1 && cmake --build --preset release --target gmembench > $OUT/build.log 2>&1 || { tail -30 $OUT/build.log; exit 1; }
E=()
E+=('(i * 2654435761) % n' '(i % 32) * 32 + i / 32' '((i * 2654435761) % 33554432) * 16')
for L in 4096 32768 131072 262144 524288 1048576 2097152; do
  E+=("((((i / ($L * 2)) * $L + ((i % $L) * 40503) % $L) * 2654435761) % 33554432) * 16 + ((i / $L) % 2) * 8")
  E+=("((((i / ($L * 2)) * $L + ((i % $L) * 40503) % $L) * 2654435761) % 33554432) * 16 + (i / $L) % 2")
done
printf '%s\n' "${E[@]}" > $OUT/exprs.txt
ARGS=()
for e in "${E[@]}"; do ARGS+=("--gmb_pattern=$e"); done
time ncu --kernel-name gmb_pattern_run --metrics dram__bytes_read.sum,dram__bytes_write.sum,lts__t_sectors_srcunit_tex_op_read_lookup_hit.sum,lts__t_sectors_srcunit_tex_op_read_lookup_miss.sum --csv build/release/gmembench --gmb_profile "${ARGS[@]}" --gmb_pattern_op=gather --gmb_pattern_n=536870912 --gmb_pattern_threads=16777216 '--benchmark_filter=^pattern/' > $OUT/ncu.csv 2> $OUT/ncu.err
echo "ncu rc $?"
tail -5 $OUT/ncu.err
