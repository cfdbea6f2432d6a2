#!/bin/bash
# A/B on one machine: the loaded chase at HEAD vs 312e4ec (before the review's changes).
set -u
export GMB_OFFLINE=1 PYTHONUNBUFFERED=1
T0=$(date +%s)
rm -rf /tmp/old && mkdir /tmp/old && cp -r $(ls -A | grep -v '^build$') /tmp/old/ && cp .gmbdev/old/kernels/latency.cuh /tmp/old/kernels/ && cp .gmbdev/old/benchmarks/latency.cu /tmp/old/benchmarks/
(cmake --preset release > /dev/null && cmake --build --preset release --target gmembench > /tmp/b1.log 2>&1) || { tail -20 /tmp/b1.log; exit 1; }
(cd /tmp/old && cmake --preset release > /dev/null && cmake --build --preset release --target gmembench > /tmp/b2.log 2>&1) || { tail -20 /tmp/b2.log; exit 1; }
echo "builds $(( $(date +%s) - T0 )) s"
for i in 1 2 3; do
  for v in new old; do
    B=build/release/gmembench; [ $v = old ] && B=/tmp/old/build/release/gmembench
    $B --benchmark_filter='^latency/loaded/load:read' --benchmark_repetitions=1 2>/dev/null | grep -o "latency/loaded/load:read/sms:[0-9]*\|latency_ns=[0-9.k]*\|load_gbs=[0-9.k]*" | paste -sd' ' | sed "s/^/$v $i: /"
  done
done
echo "all done $(( $(date +%s) - T0 )) s"
