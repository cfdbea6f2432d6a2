#!/bin/bash
# the final device call, part A (from the repository root; $OUT the folder that comes back):
# scripts/test's setup and release build; gmb pattern on 29 expressions (alone on the GPU);
# then ctest --preset release; pytest on every file but the four that use the GPU, on the CPU
# beside them from the build on (part B runs those four after)
S=$SECONDS
R=$OUT/rc.txt
nvidia-smi --query-gpu=name,driver_version,uuid --format=csv,noheader >> $R
git log -1 --format=%H >> $R
scripts/setup --test > /tmp/setup.log 2>&1 || { tail -20 /tmp/setup.log | tee $OUT/setup.log; exit 1; }
cmake --preset release > /tmp/cmake.log 2>&1 && cmake --build --preset release > /tmp/build.log 2>&1 || { tail -40 /tmp/build.log | tee $OUT/build.log; exit 1; }
echo "built at $((SECONDS-S)) s" | tee -a $R
G=scripts/tests
( python3 -m pytest $G -q --ignore=$G/test_run.py --ignore=$G/test_stopping.py --ignore=$G/test_advise_device.py --ignore=$G/test_node.py > $OUT/pytest-host.log 2>&1; echo "pytest-host rc $? at $((SECONDS-S)) s" >> $R ) &
E=('i * 2' 'i * 8' 'i * 32' '(i % 32) * 32 + i / 32' 'n - 1 - i' '(i * 2654435761) % n' '(i / 1024) * 1024 + (i * 37) % 1024' '(i % 32) * 8 + (i / 32) % 8 + (i / 256) * 256' 'i * 3' 'i * 5' 'i * 6' '(i / 1000) * 1024 + i % 1000' 'i / 2')
for M in 32 256 2048 4096; do E+=("((i * 2654435761) % 131072) * $M"); done
MISS='((i * 2654435761) % 33554432) * 16'
E+=("$MISS")
E+=('((((i / (4096 * 2)) * 4096 + ((i % 4096) * 40503) % 4096) * 2654435761) % 33554432) * 16 + ((i / 4096) % 2) * 8')
for M in 32 4096; do E+=("((i / 4096) % 2) * (((i * 2654435761) % 131072) * $M) + (1 - (i / 4096) % 2) * ($MISS)"); done
for M in 16777216 4194304; do E+=("((i * 2654435761) % $M) * 16"); done
# a share of every warp's lanes hits a set the L2 holds (on 8 pages, or over 2 GiB), the rest misses over 2 GiB
for C in '(((i % 32) / 8 + 3) / 4)' '((i % 32) / 16)' '((i % 32) / 24)'; do E+=("$C * ($MISS) + (1 - $C) * (((i * 2654435761) % 131072) * 32)"); done
E+=("((i % 32) / 16) * ($MISS) + (1 - (i % 32) / 16) * (((i * 2654435761) % 131072) * 4096)")
for M in 268435456 67108864; do E+=("(i * 2654435761) % $M"); done
( time scripts/gmb pattern "${E[@]}" --op gather --n 536870912 --threads 16777216 --save --out /tmp/res ) > /tmp/res-gmb.txt 2>&1; echo "gmb rc $? at $((SECONDS-S)) s" | tee -a $R
cp /tmp/res-gmb.txt $OUT/gmb.txt
(cd /tmp && tar czf $OUT/res.tgz res)
timeout $((585-(SECONDS-S))) ctest --preset release > $OUT/ctest.log 2>&1; echo "ctest rc $? at $((SECONDS-S)) s" | tee -a $R
wait
grep -E "tests passed|Failed|\*\*\*Timeout|Not Run" $OUT/ctest.log | head | tee -a $R
tail -3 $OUT/pytest-host.log | tee -a $R
cat $R
grep -E "measured / predicted" $OUT/gmb.txt | sed 's/ = .* predicted / /' | cut -c1-120
