#!/usr/bin/env bash
# What limits the benchmarks the model misses (docs/model.md), on a GPU: writes into $OUT
#   list.txt      the benchmarks (the filter below, in run order);
#   l2res.json    the same benchmarks with 16-MiB arrays and 20 launches after one L2 flush
#                 (their arrays stay in the L2: what is left when DRAM is out of the way);
#   ncu.csv       Nsight Compute on each benchmark's kernel at the default size (one launch,
#                 caches flushed, clocks left alone): time, DRAM and unit throughputs, the L2's
#                 requests and sectors, and the breakdown of the L2's and the L1's throughput
#                 into their sub-units (which one is at its peak).
# `python3 scripts/device/bottlenecks_table.py $OUT` prints the table docs/model.md cites.
# Usage, from the repository root on a machine with a GPU and ncu: OUT=DIR scripts/device/model_bottlenecks.sh
# FILTER (a benchmark regex) and KERNELS (ncu's -k) replace the benchmarks the model misses,
# e.g. with those it has no prediction for (the command in
# results/nvidia-h200/20261129-042620-paths-bottlenecks/NOTES.md).
set -u
: "${OUT:?set OUT to the folder to write}"
cmake --preset release >/dev/null && cmake --build --preset release --target gmembench >/dev/null || exit 1
B=build/release/gmembench
F="${FILTER:-^(matrix/(rows|cols)/w:4096/pad:0|transpose/f32/(copy|naive_rows|naive_cols)/|copy/f32/ilp:1/grid:full|write/f32/ilp:4/grid:(persistent|full)|write/f32x4/ilp:4/grid:persistent|copy/f32/ilp:8/grid:persistent|copy/f32x4/ilp:4/grid:persistent|offset/f32/copy/off:(0|1)/ilp:4|aos_staged/a12/fields:all|aos/a12/fields:all|soa/a12/fields:all|vector/w(1|4)/ilp:8|cache_op/stencil/ld:(default|cg)/st:default|reuse/stencil/r:4$|reuse/gather/window:(1024|8192)$|warp/(permute_across|broadcast)|stride/f32/write/s:(8|16|32)$|stride/f32/both/s:(32|64)$|cache/read/ws:(1048576|33554432|67108864)$)}"
$B --benchmark_list_tests --benchmark_filter="$F" > $OUT/list.txt
timeout 200 $B --gmb_bytes=16M --gmb_launches=20 --benchmark_filter="$F" --benchmark_repetitions=3 --benchmark_display_aggregates_only=true --benchmark_out=$OUT/l2res.json --benchmark_out_format=json --gmb_health=off > $OUT/l2res.txt 2>&1
echo "l2res rc $?"
M=gpu__time_duration.sum,dram__throughput.avg.pct_of_peak_sustained_elapsed,dram__bytes_read.sum,dram__bytes_write.sum,lts__throughput.avg.pct_of_peak_sustained_elapsed,l1tex__throughput.avg.pct_of_peak_sustained_elapsed,lts__t_sectors_op_read.sum,lts__t_sectors_op_write.sum,lts__t_requests_srcunit_tex_op_read.sum,lts__t_requests_srcunit_tex_op_write.sum,l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum,l1tex__t_requests_pipe_lsu_mem_global_op_st.sum,l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum,smsp__issue_active.avg.pct_of_peak_sustained_elapsed,sm__warps_active.avg.pct_of_peak_sustained_active,smsp__inst_executed.sum,gcc__cache_requests_type_constant.avg.pct_of_peak_sustained_elapsed
K="${KERNELS:-regex:^(aos_|soa_|coalesced_|mapped_copy|matrix_copy|transpose_|xor_reads|restrict_xor|sliced_copy|working_set_read)}"
run_ncu() {
  timeout 280 ncu --clock-control none --cache-control all --kernel-name-base function -k "$K" --metrics "$1" --csv --print-units base --log-file $OUT/$2.csv $B --gmb_profile --benchmark_filter="$F" --benchmark_out=$OUT/$2_bench.json --benchmark_out_format=json --gmb_health=off > $OUT/$2_run.txt 2>&1
  local rc=$?; echo "ncu $2 rc $rc"; return $rc
}
run_ncu "$M,breakdown:lts__throughput.avg.pct_of_peak_sustained_elapsed,breakdown:l1tex__throughput.avg.pct_of_peak_sustained_elapsed" ncu || run_ncu "$M" ncu_plain
