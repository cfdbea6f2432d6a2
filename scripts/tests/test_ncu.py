"""gmb ncu: parsing Nsight Compute's CSV, pairing kernels with benchmarks, the comparison."""

import pytest

from gmbtools.commands import ncu
from gmbtools.errors import GmbError

# The shape of `ncu --csv --print-units base` (one row per kernel and metric), preceded by
# ncu's own messages; values as ncu may print them, with thousands separators.
CSV = '''==PROF== Connected to process 123
"ID","Process ID","Process Name","Host Name","Kernel Name","Context","Stream","Block Size","Grid Size","Device","CC","Section Name","Metric Name","Metric Unit","Metric Value"
"0","123","gmembench","vm","mapped_copy","1","13","(256, 1, 1)","(4, 1, 1)","0","9.0","Command line profiler metrics","dram__bytes_read.sum","byte","4,352"
"0","123","gmembench","vm","mapped_copy","1","13","(256, 1, 1)","(4, 1, 1)","0","9.0","Command line profiler metrics","l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum","request","32"
"0","123","gmembench","vm","mapped_copy","1","13","(256, 1, 1)","(4, 1, 1)","0","9.0","Command line profiler metrics","l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum","sector","160"
"1","123","gmembench","vm","mapped_copy","1","13","(256, 1, 1)","(4, 1, 1)","0","9.0","Command line profiler metrics","l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum","request","32"
"1","123","gmembench","vm","mapped_copy","1","13","(256, 1, 1)","(4, 1, 1)","0","9.0","Command line profiler metrics","l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum","sector","128"
'''


def test_parse_groups_metrics_per_kernel_in_launch_order():
    kernels = ncu.parse_ncu_csv(CSV)
    assert len(kernels) == 2
    assert kernels[0]["dram__bytes_read.sum"] == 4352.0
    assert kernels[0]["l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum"] == 160.0
    assert kernels[1]["l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum"] == 128.0


def test_parse_without_a_table_is_an_error():
    with pytest.raises(GmbError, match="no CSV table"):
        ncu.parse_ncu_csv("==PROF== No kernels were profiled.\n")


def test_pair_needs_one_kernel_per_benchmark():
    kernels = ncu.parse_ncu_csv(CSV)
    paired = ncu.pair(["offset/f32/read/off:1", "offset/f32/read/off:0"], kernels)
    assert list(paired) == ["offset/f32/read/off:1", "offset/f32/read/off:0"]
    with pytest.raises(GmbError, match="1 benchmarks but 2 profiled kernels"):
        ncu.pair(["offset/f32/read/off:1"], kernels)


def test_compare_puts_measured_beside_model():
    measured = ncu.parse_ncu_csv(CSV)[0]
    row = ncu.compare(measured, {"model_ld_sectors_per_req": 5.0, "model_dram_bytes": 4096.0,
                                 "bytes_per_second": 1.0})
    assert row["measured_ld_sectors_per_req"] == 5.0
    assert row["measured_st_sectors_per_req"] is None  # no store requests were counted
    assert row["model_ld_sectors_per_req"] == 5.0
    assert row["dram_measured_over_model"] == pytest.approx(4352 / 4096)
    assert "bytes_per_second" not in row
    assert "| 5.00 | 5.00 |" in ncu.table({"offset/f32/read/off:1": row})


def test_profile_command_leaves_clocks_alone_and_profiles_only_benchmark_kernels(tmp_path):
    options = ncu.Options(binary="build/release/gmembench", device=1,
                          benchmark_filter="^offset/", out=tmp_path / "ncu.json",
                          passthrough=("--gmb_bytes=1G",))
    command = ncu.profile_command(options, "log.csv", "bench.json")
    assert command[command.index("--clock-control") + 1] == "none"
    assert command[command.index("-k") + 1] == ncu.KERNELS
    assert "--gmb_profile" in command and "--device=1" in command
    assert command[-1] == "--gmb_bytes=1G"
    assert ",".join(ncu.METRICS) in command


def test_cli_says_when_the_binary_is_not_built(tmp_path):
    import subprocess
    import sys
    from pathlib import Path

    gmb = Path(__file__).resolve().parents[1] / "gmb"
    proc = subprocess.run([sys.executable, str(gmb), "ncu", "--filter", "^offset/", "--out",
                           str(tmp_path / "n.json"), "--preset", "no-such-preset"],
                          capture_output=True, text=True)
    assert proc.returncode != 0
    assert proc.stderr.startswith("gmb: error: build/no-such-preset/gmembench is not built")
