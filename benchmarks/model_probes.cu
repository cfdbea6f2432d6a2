// The model family: the prediction model's calibration (docs/model.md), a few probes that the
// scripts' model (scripts/gmbtools/analysis/model_params.py) reads its per-GPU parameters from,
// each at a size the default (quick) sweeps do not run, so no benchmark of a default run is
// predicted from a twin of itself (a chain is a power of two: the full latency sweep has the
// chases' sizes too):
// - model/chase/ws:W/lanes:L: the pointer chase (benchmarks/latency.cu) at 32 KiB, 2 MiB and
//   1 GiB (the L1, the L2, DRAM), one and 32 lanes: each level's latency and a launch's time;
// - model/l2_partition/steps:512 (benchmarks/l2_partition.cu): every SM's walk over lines
//   the lowest SM loaded, and again: the L2's latency from each SM, near and across its
//   partitions;
// - model/read/ws:W: hot reads of a working set (benchmarks/working_set.cu) of 40 KiB and
//   1.25, 10 and 20 MiB: the L1's rate to the SMs and the L2's by set size;
// - model/constant/distinct:D/ws:512/path:constant (benchmarks/constant.cu), D = 1 and 32:
//   the constant cache's cost per warp load and per distinct word; and
//   model/constant/distinct:1/ws:512/path:global, the same loop's loads through the L1; and
//   model/constant/distinct:1/ws:16384|32768/path:constant, tables past the SM's constant
//   cache: the loads it sends on to the GPC's, by the table's size;
// - model/bulk/read/bytes:2048/stages:8/bpsm:1/warps:4 (benchmarks/bulk.cu, sm_90 on): a bulk
//   read whose block turns each chunk around in turn: that turnaround's time; and
//   model/bulk/write/bytes:2048|8192/stages:8/bpsm:1, bulk writes whose warp fills each chunk
//   first: a write's turnaround, its fixed part and its part per byte;
// - model/bulk/latency/bytes:1536|49152 (the same file, sm_90 on): one bulk copy at a time of
//   1.5 and 48 KiB, the fixed part of a copy's latency and its part per byte;
// - model/reduce/f32/<rung>/loads:none/bpsm:8|1 (benchmarks/reduce.cu), the six rungs with a
//   tree in shared memory: each rung's tree alone, no load, 8 blocks per SM (the trees share
//   the SM as the rung's do: their rate) and 1 (a tree alone: its time);
// - model/loaded/load:read|copy|mix/sms:K (benchmarks/latency.cu): the loaded chase at loads
//   of K SMs the quick sweep does not run (reads 8, 24, 40, 56, 80, 112, 128; copies and mixes
//   8, 24, 48, 80, 112, 128; the full sweep runs every 8th K of reads and copies): the latency
//   under load; the mix (a fifth of its bytes written) the latency of kernels between the two;
// - model/stride/f32/read|write|both/s:S (benchmarks/stride.cu), S = 10, 12, 20, 24, 48, 96,
//   192: strided reads, writes and both at steps between the quick sweep's (the full sweep runs
//   those to 32): the DRAM's page term, one side and both; reads and writes also at S = 384,
//   768, 1536 (1.5 to 6 KiB, between the sweep's powers of two): the steps past a page;
// - model/instructions/f32/extra:K (benchmarks/coalesced.cu), K = 4, 16, 32, 64: the f32 copy
//   on a block per tile with K more instructions per warp before its load: what a block's
//   slot costs per instruction (its model_warp_instructions);
// - model/offset/f32/copy/off:3/ilp:4 (benchmarks/offset.cu): the offset copy, four per
//   thread, 12 B off (the quick sweep runs 4, 8, 124 B ...): what DRAM pays for a stream whose
//   warp stores each write two sectors in part;
// - model/mix/f32/reads:K (benchmarks/aos.cu), K = 5, 7, 12: K arrays read and one written,
//   coalesced (the SoA kernel): what DRAM gives a mix of reads with a write share of 1/(K+1);
//   and model/mix/f32/reads:8/writes:2: two written, a share of 1/5;
// - model/copy/f32|f64|f32x4/ilp:16 (benchmarks/coalesced.cu): the copy on a block per tile
//   with 64, 128 and 256 B per thread in flight: what DRAM gives a copy that deep;
// - model/blocks/block:128/bpsm:1 (benchmarks/inflight.cu): empty blocks one per SM at a
//   time: how long an empty block holds its slot; and
//   model/inflight/read/w:4/ilp:2/block:256/bpsm:4/grid:persistent (the same file): a
//   persistent read of two loads per thread far below DRAM's rate: the SM's drain; and
//   model/inflight/read/w:4/ilp:4/block:256/bpsm:3/grid:persistent, four loads per thread;
//   model/inflight/read|read_async/w:4/ilp:1/block:256/bpsm:6/grid:persistent: one load per
//   thread, plain and by cp.async (sm_80 on): what staging through shared memory adds to a
//   warp's round; model/inflight/read/w:4/ilp:1/block:1024/bpsm:1/grid:full: blocks of 1,024
//   threads one per tile: how long a block of 32 loading warps holds its slot;
// - model/matrix/cols/w:2000/pad:0 (benchmarks/matrix.cu): the column walk at a width the
//   sweep does not run, every store alone in its line: the rate of lone stores into the L2;
//   and model/matrix/rows/w:2000/pad:0, the row walk there: each 32 x 8 block's warps load
//   eight rows, how much longer such a block holds its slot;
// - model/transpose/f32/moved/block:32x8|32x32 (benchmarks/transpose.cu): the tiled rungs'
//   tiles moved to their transposed places, rows kept, no shared memory: what DRAM gives
//   their writes, and how long a block of 32 x 32 threads holds its slot; and
//   model/transpose/f32/exchange/pad:1 and model/transpose/f32/stores/block:32x32: the
//   padded exchange through shared memory, no load, and its stores alone: what the exchange
//   adds to a block's round;
// - model/managed/read/prefetch:gpu|advice:read_mostly|pages:host/bytes:B (benchmarks/
//   managed.cu): each migration of managed pages at half and twice the family's size (32 and
//   128 MiB in a default run): its fixed part and its part per byte;
// - model/local/spill/live:64/regs:32/rounds:8 (benchmarks/local.cu): the spilling kernel at
//   half the family's rounds: the rate at which the L2 takes a warp's local stores;
// - model/translation/lines:131072/span:2147483648 (benchmarks/warp.cu): a gather of 2^17
//   lines 16 KiB apart, every load after the first pass an L2 hit on one of 1,024 pages: the
//   rate of loads that each need an address translation of their own.
// Each is verified as its family verifies it.
#include <vector>

#include "benchmarks/families.hpp"

namespace gmb {

std::vector<bench_case> model_cases(environment& env, sweep) {
  std::vector<bench_case> cases;
  for (auto probes : {chase_calibration_cases, l2_partition_calibration_cases,
                      working_set_calibration_cases,
                      constant_calibration_cases, bulk_calibration_cases, reduce_calibration_cases,
                      loaded_calibration_cases, stride_calibration_cases,
                      instruction_calibration_cases, offset_calibration_cases,
                      mix_calibration_cases, copy_depth_calibration_cases,
                      inflight_calibration_cases, matrix_calibration_cases,
                      transpose_calibration_cases, managed_calibration_cases,
                      local_calibration_cases, translation_calibration_cases}) {
    for (auto& c : probes(env)) cases.push_back(std::move(c));
  }
  return cases;
}

}  // namespace gmb
