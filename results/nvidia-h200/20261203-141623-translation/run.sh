#!/bin/bash
# the device call of this record (run in the repository root; $OUT the folder that came back): scattered picks that hit in the L2, by the span of
# pages they cover; hits beside misses in the same launch
S=$SECONDS
nvidia-smi --query-gpu=name,driver_version --format=csv > $OUT/gpu.txt
git log -1 --format=%H > $OUT/head.txt
scripts/setup --test > $OUT/setup.log 2>&1 || { tail -20 $OUT/setup.log; exit 1; }
cmake --preset release > $OUT/cmake.log 2>&1 && cmake --build --preset release --target gmembench > $OUT/build.log 2>&1 || { tail -30 $OUT/build.log; exit 1; }
echo "built at $((SECONDS-S)) s" | tee -a $OUT/rc.txt
E=()
for M in 32 256 2048 4096; do E+=("((i * 2654435761) % 131072) * $M"); done
E+=('((i * 2654435761) % 33554432) * 16')
E+=('((((i / (4096 * 2)) * 4096 + ((i % 4096) * 40503) % 4096) * 2654435761) % 33554432) * 16 + ((i / 4096) % 2) * 8')
for M in 32 4096; do E+=("((i / 4096) % 2) * (((i * 2654435761) % 131072) * $M) + (1 - (i / 4096) % 2) * (((i * 2654435761) % 33554432) * 16)"); done
printf '%s\n' "${E[@]}" > $OUT/exprs.txt
( time scripts/gmb pattern "${E[@]}" --op gather --n 536870912 --threads 16777216 --no-compare --save --out $OUT/res ) > $OUT/gmb.txt 2>&1; echo "gmb rc $? at $((SECONDS-S)) s" | tee -a $OUT/rc.txt
ARGS=(); for e in "${E[@]:3:1}" "${E[@]:6:2}"; do ARGS+=("--gmb_pattern=$e"); done
ncu --kernel-name gmb_pattern_run --metrics dram__bytes_read.sum,lts__t_sectors_srcunit_tex_op_read_lookup_hit.sum,lts__t_sectors_srcunit_tex_op_read_lookup_miss.sum --csv build/release/gmembench --gmb_profile "${ARGS[@]}" --gmb_pattern_op=gather --gmb_pattern_n=536870912 --gmb_pattern_threads=16777216 '--benchmark_filter=^pattern/' > $OUT/ncu.csv 2> $OUT/ncu.err; echo "ncu rc $? at $((SECONDS-S)) s" | tee -a $OUT/rc.txt
(cd $OUT && tar czf res.tgz res && rm -rf res)
grep -E "measured|^\S.*gather, f32|bound \(" $OUT/gmb.txt | cut -c1-230
