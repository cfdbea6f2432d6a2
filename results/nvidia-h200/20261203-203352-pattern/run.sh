#!/bin/bash
# one device call: the release build of gmembench, then gmb pattern on 13 expressions (alone on the GPU)
S=$SECONDS
R=$OUT/rc.txt
nvidia-smi --query-gpu=name,driver_version,uuid --format=csv,noheader >> $R
git log -1 --format=%H >> $R
scripts/setup > /tmp/setup.log 2>&1 || { tail -20 /tmp/setup.log | tee $OUT/setup.log; exit 1; }
cmake --preset release > /tmp/cmake.log 2>&1 && cmake --build --preset release --target gmembench > /tmp/build.log 2>&1 || { tail -40 /tmp/build.log | tee $OUT/build.log; exit 1; }
echo "built at $((SECONDS-S)) s" | tee -a $R
HASH='(i * 2654435761)'
E=()
for M in 512 1024 4096; do E+=("($HASH % 131072) * $M"); done
# a mixing permutation of 2^17 (xorshifts between odd multipliers), the same sets in another order
A='((i * 40503) % 131072)'; B="($A ^ ($A / 256))"; C="(($B * 2654435761) % 131072)"; D="($C ^ ($C / 512))"
for M in 4096 512 32; do E+=("$D * $M"); done
for M in 134217728 536870912; do E+=("$HASH % $M"); done
# one granule a pick over 2 GiB, in the mixing order (2^25)
A='((i * 40503) % 33554432)'; B="($A ^ ($A / 4096))"; C="(($B * 2654435761) % 33554432)"; D="($C ^ ($C / 8192))"
E+=("$D * 16")
MISS='((i * 2654435761) % 33554432) * 16'
HIT='((i * 2654435761) % 131072) * 32'
Q='(((i % 32) / 8 + 3) / 4)'
W='((((i / 32) % 4) + 3) / 4)'
E+=("$Q * ($MISS) + (1 - $Q) * ($HIT)")
E+=("$W * ($MISS) + (1 - $W) * ($HIT)")
E+=("$Q * ($MISS) + (1 - $Q) * ((((i / 32) * 2654435761) % 131072) * 32 + i % 8)")
E+=("$MISS")
printf '%s\n' "${E[@]}" > $OUT/exprs.txt
( time scripts/gmb pattern "${E[@]}" --op gather --n 536870912 --threads 16777216 --save --out /tmp/res ) > /tmp/res-gmb.txt 2>&1; echo "gmb rc $? at $((SECONDS-S)) s" | tee -a $R
cp /tmp/res-gmb.txt $OUT/gmb.txt
(cd /tmp && tar czf $OUT/res.tgz res)
cat $R
grep -E "measured / predicted|^## " $OUT/gmb.txt | sed 's/ = .* predicted / /' | cut -c1-150
tail -5 $OUT/gmb.txt
