#!/bin/bash
# untracked: device call A = build, the replay probe, ctest, the GPU pytest files
S=$SECONDS
nvidia-smi --query-gpu=name,driver_version --format=csv > $OUT/gpu.txt
scripts/setup --test > $OUT/setup.log 2>&1 || { tail -20 $OUT/setup.log; exit 1; }
cmake --preset release > $OUT/cmake.log 2>&1 && cmake --build --preset release > $OUT/build.log 2>&1 || { tail -30 $OUT/build.log; exit 1; }
echo "built at $((SECONDS-S)) s" | tee -a $OUT/rc.txt
T13=('i * 2' 'i * 8' 'i * 32' '(i % 32) * 32 + i / 32' 'n - 1 - i' '(i * 2654435761) % n' '(i / 1024) * 1024 + (i * 37) % 1024' '(i % 32) * 8 + (i / 32) % 8 + (i / 256) * 256' 'i * 3' 'i * 5' 'i * 6' '(i / 1000) * 1024 + i % 1000' 'i / 2')
( time scripts/gmb pattern "${T13[@]}" --op gather --n 536870912 --threads 16777216 --save --out $OUT/res ) > $OUT/gmb13.txt 2>&1; echo "gmb13 rc $? at $((SECONDS-S)) s" | tee -a $OUT/rc.txt
MIX='((((((i * 2654435761) % 4294967296) ^ (((i * 2654435761) % 4294967296) / 8192)) * 1540483477) % 4294967296) ^ ((((((i * 2654435761) % 4294967296) ^ (((i * 2654435761) % 4294967296) / 8192)) * 1540483477) % 4294967296) / 65536)) % n'
P=('((i * 2654435761) % 33554432) * 16' "$MIX")
for L in 4096 262144 524288 2097152; do
  P+=("((((i / ($L * 2)) * $L + ((i % $L) * 40503) % $L) * 2654435761) % 33554432) * 16 + ((i / $L) % 2) * 8")
done
( time scripts/gmb pattern "${P[@]}" --op gather --n 536870912 --threads 16777216 --no-compare --save --out $OUT/res ) > $OUT/gmbpairs.txt 2>&1; echo "gmbpairs rc $? at $((SECONDS-S)) s" | tee -a $OUT/rc.txt
ARGS=(); for e in "${T13[@]}" "$MIX"; do ARGS+=("--gmb_pattern=$e"); done
ncu --kernel-name gmb_pattern_run --metrics l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum,l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum,dram__bytes_read.sum,dram__bytes_write.sum --csv build/release/gmembench --gmb_profile "${ARGS[@]}" --gmb_pattern_op=gather --gmb_pattern_n=536870912 --gmb_pattern_threads=16777216 '--benchmark_filter=^pattern/' > $OUT/ncu13.csv 2> $OUT/ncu13.err; echo "ncu rc $? at $((SECONDS-S)) s" | tee -a $OUT/rc.txt
git log -1 --format=%H > $OUT/head.txt
(cd $OUT && tar czf res.tgz res && rm -rf res)
timeout $((560-(SECONDS-S))) ctest --preset release > $OUT/ctest.log 2>&1; echo "ctest rc $? at $((SECONDS-S)) s" | tee -a $OUT/rc.txt
tail -3 $OUT/ctest.log
left=$((585-(SECONDS-S)))
if [ $left -gt 60 ]; then timeout $left python3 -m pytest scripts/tests/test_run.py scripts/tests/test_stopping.py scripts/tests/test_node.py scripts/tests/test_fleet.py -q > $OUT/pytest_a.log 2>&1; echo "pytest_a rc $? at $((SECONDS-S)) s" | tee -a $OUT/rc.txt; tail -3 $OUT/pytest_a.log; fi
grep -E "measured|^\(|rc " $OUT/gmb13.txt | head -30
