#!/bin/bash
# one device call: the release build of gmembench, then gmb pattern on 21 expressions (alone on
# the GPU) with the calibration's new probe model/hits/* beside them
S=$SECONDS
R=$OUT/rc.txt
nvidia-smi --query-gpu=name,driver_version,uuid --format=csv,noheader >> $R
scripts/setup > /tmp/setup.log 2>&1 || { tail -20 /tmp/setup.log | tee $OUT/setup.log; exit 1; }
cmake --preset release > /tmp/cmake.log 2>&1 && cmake --build --preset release --target gmembench > /tmp/build.log 2>&1 || { tail -40 /tmp/build.log | tee $OUT/build.log; exit 1; }
echo "built at $((SECONDS-S)) s" | tee -a $R
E=('i * 2' 'i * 8' 'i * 32' '(i % 32) * 32 + i / 32' 'n - 1 - i' '(i * 2654435761) % n' '(i / 1024) * 1024 + (i * 37) % 1024' '(i % 32) * 8 + (i / 32) % 8 + (i / 256) * 256' 'i * 3' 'i * 5' 'i * 6' '(i / 1000) * 1024 + i % 1000' 'i / 2')
MISS='((i * 2654435761) % 33554432) * 16'
HIT='((i * 2654435761) % 131072) * 32'
for C in '(((i % 32) / 8 + 3) / 4)' '((i % 32) / 16)' '((i % 32) / 24)' '((i / 4096) % 2)'; do E+=("$C * ($MISS) + (1 - $C) * ($HIT)"); done
E+=("$MISS")
for M in 67108864 134217728 268435456; do E+=("(i * 2654435761) % $M"); done
printf '%s\n' "${E[@]}" > $OUT/exprs.txt
( time scripts/gmb pattern "${E[@]}" --op gather --n 536870912 --threads 16777216 --save --out /tmp/res ) > /tmp/res-gmb.txt 2>&1; echo "gmb rc $? at $((SECONDS-S)) s" | tee -a $R
cp /tmp/res-gmb.txt $OUT/gmb.txt
(cd /tmp && tar czf $OUT/res.tgz res)
cat $R
grep -E "model/hits|error|Error" $OUT/gmb.txt | head
grep -E "measured / predicted" $OUT/gmb.txt | sed 's/ = .* predicted / /' | cut -c1-120
tail -3 $OUT/gmb.txt
