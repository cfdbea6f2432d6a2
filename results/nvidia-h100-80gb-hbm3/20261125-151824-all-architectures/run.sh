#!/usr/bin/env bash
# The 'all' preset (sm_75 to sm_120) built on the device, its SASS tests on every architecture,
# its host and device tests on this GPU, and its binary run on this GPU.
set -uo pipefail
export GMB_OFFLINE=1 PYTHONUNBUFFERED=1 GMB_GIT_SHA=$(cat .dev/sha.txt)
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv | tee $OUT/gpu.txt
echo "cpus: $(nproc)" | tee -a $OUT/gpu.txt
rm -rf build/all
start=$SECONDS
{ cmake --preset all && cmake --build --preset all; } > $OUT/build-all.log 2>&1
rc=$?
echo "cmake --preset all && cmake --build --preset all: rc=$rc wall_s=$((SECONDS - start))" | tee -a $OUT/build-all.log
CUOBJDUMP=$(grep GMB_CUOBJDUMP: build/all/CMakeCache.txt | cut -d= -f2)
echo "cuobjdump: $CUOBJDUMP" | tee $OUT/elf.txt
"$CUOBJDUMP" --list-elf build/all/gmembench | tee -a $OUT/elf.txt
"$CUOBJDUMP" --list-ptx build/all/gmembench | tee -a $OUT/elf.txt
# The dumps the SASS tests read (they keep <binary>.<arch>.sass beside the binary), in parallel.
start=$SECONDS
for b in gmembench gmembench-ca gmembench-cg; do for a in 75 80 86 89 90 100 120; do echo "$b sm_$a"; done; done |
  xargs -P 16 -n 2 sh -c "PATH=\$(dirname $CUOBJDUMP):\$PATH $CUOBJDUMP -sass -arch \$1 build/all/\$0 > build/all/\$0.\$1.sass.partial && mv build/all/\$0.\$1.sass.partial build/all/\$0.\$1.sass"
echo "dumps wall_s=$((SECONDS - start))" | tee $OUT/sass-tests.txt
start=$SECONDS
build/all/tests/gmb_binary_tests --gtest_filter='*Sass*' >> $OUT/sass-tests.txt 2>&1
echo "sass tests rc=$? wall_s=$((SECONDS - start))" | tee -a $OUT/sass-tests.txt
grep -E "^\[ flags|PASSED|FAILED" $OUT/sass-tests.txt
build/all/tests/gmb_host_tests > $OUT/host-tests.txt 2>&1; echo "host tests rc=$?" | tee -a $OUT/host-tests.txt
timeout 200 build/all/tests/gmb_device_tests > $OUT/device-tests.txt 2>&1; echo "device tests rc=$?" | tee -a $OUT/device-tests.txt
grep -E "PASSED|FAILED|SKIPPED \]|FeatureSelection" $OUT/device-tests.txt | head -20
build/all/gmembench --gmb_sweep=full --benchmark_repetitions=3 \
  --benchmark_filter='^(ref/memcpy_d2d|read/f32x4/ilp:1/grid:full|stride/f32/read/s:(8|16)/ilp:4|transpose/f32/tile_async/n:16384|local/spill/)' \
  --benchmark_out_format=json --benchmark_out=$OUT/all-binary-run.json > $OUT/all-binary-run.txt 2>&1
echo "all binary run rc=$?" | tee -a $OUT/all-binary-run.txt
python3 - <<'PY' | tee -a $OUT/all-binary-run.txt
import json, os
d = json.load(open(os.environ["OUT"] + "/all-binary-run.json"))
c = d["context"]
for k in ("gpu_name", "gpu_cc", "gmb_built_for", "gpu_facts", "gpu_carveout_kib", "gpu_l1_shared_per_sm_bytes", "model_dram_granule_bytes", "gmb_unsupported"):
    print(k, "=", c.get(k))
for b in d["benchmarks"]:
    if b.get("aggregate_name") == "median":
        print(b["name"], round(b.get("bytes_per_second", 0) / 1e9, 1), "GB/s", b.get("error_message", ""))
PY
