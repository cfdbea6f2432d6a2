#!/bin/bash
# the device call of this record (from the repository root; $OUT the folder that came back): build, the patterns with the translation probe, device tests
S=$SECONDS
R=$OUT/rc.txt
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader >> $R
git log -1 --format=%H >> $R
scripts/setup --test > /tmp/setup.log 2>&1 || { tail -20 /tmp/setup.log; exit 1; }
cmake --preset release > /tmp/cmake.log 2>&1 && cmake --build --preset release > /tmp/build.log 2>&1 || { tail -40 /tmp/build.log | tee $OUT/build.log; exit 1; }
echo "built at $((SECONDS-S)) s" | tee -a $R
E=('i * 2' 'i * 8' 'i * 32' '(i % 32) * 32 + i / 32' 'n - 1 - i' '(i * 2654435761) % n' '(i / 1024) * 1024 + (i * 37) % 1024' '(i % 32) * 8 + (i / 32) % 8 + (i / 256) * 256' 'i * 3' 'i * 5' 'i * 6' '(i / 1000) * 1024 + i % 1000' 'i / 2')
for M in 32 256 2048 4096; do E+=("((i * 2654435761) % 131072) * $M"); done
E+=('((i * 2654435761) % 33554432) * 16')
E+=('((((i / (4096 * 2)) * 4096 + ((i % 4096) * 40503) % 4096) * 2654435761) % 33554432) * 16 + ((i / 4096) % 2) * 8')
for M in 32 4096; do E+=("((i / 4096) % 2) * (((i * 2654435761) % 131072) * $M) + (1 - (i / 4096) % 2) * (((i * 2654435761) % 33554432) * 16)"); done
( time scripts/gmb pattern "${E[@]}" --op gather --n 536870912 --threads 16777216 --save --out /tmp/res ) > $OUT/gmb.txt 2>&1; echo "gmb rc $? at $((SECONDS-S)) s" | tee -a $R
(cd /tmp && tar czf $OUT/res.tgz res)
timeout $((390-(SECONDS-S))) ctest --preset release > $OUT/ctest.log 2>&1; echo "ctest rc $? at $((SECONDS-S)) s" | tee -a $R
grep -cE "Passed" $OUT/ctest.log | tee -a $R; grep -E "Failed|\*\*\*Timeout|Not Run" $OUT/ctest.log | tee -a $R | head; tail -3 $OUT/ctest.log
grep -E "^\S.*\(gather, f32|measured|bound \(" $OUT/gmb.txt | cut -c1-200
