"""The wait for a warp's further lines: a gather's one load waits for every line its lanes
touch, however much of them other warps use, and each further line waits longer the more
loaded DRAM is; on numbers whose answer is known by hand."""

import numpy as np
import pytest

from test_model import params

from gmbtools.analysis import model_bounds
from gmbtools.analysis.littles_law import LoadedCurve
from gmbtools.analysis.model_bounds import Shape


def test_one_gathered_load_waits_for_every_line_its_lanes_touch():
    # 22 sectors over the lanes of one load: 6 lines, though the kernel uses every byte
    gather = Shape(op="copy", load_bytes_per_thread=4.0, grid="full", dram_bytes=1e9,
                   efficiency=1.0, ld_sectors_per_req=22.0)
    assert gather.lines_per_round == 6
    # as before: a structure's four fields, 4 B each, are four loads sharing 4 lines of 512 B
    fields = Shape(op="copy", load_bytes_per_thread=16.0, grid="full", dram_bytes=1e9,
                   efficiency=1.0, ld_sectors_per_req=16.0)
    assert fields.lines_per_round == 4


def test_each_further_line_waits_as_much_longer_as_the_loaded_latency():
    rising = LoadedCurve(np.array([0.0, 1000.0, 2000.0]), np.array([400.0, 400.0, 800.0]))
    shape = Shape(op="read", load_bytes_per_thread=4.0, grid="full", dram_bytes=1e9,
                  efficiency=1.0, ld_sectors_per_req=8.0, read_step=16.0)  # 4 lines a load
    threads, sms, line_ns, slot, start = 2048, 100, 10.0, 200.0, 100 / 1.6
    p = params(read_curve=rising, line_ns=line_ns, read_gbs=1e6, write_gbs=1e6, copy_gbs=1e6)
    gbs = model_bounds.bounds(p, shape)[model_bounds.LATENCY]
    latency = rising.latency(gbs)
    # Little's law at the solution: the further lines' wait scaled by L(B) / L(0)
    round_ns = latency + slot + start + 3 * line_ns * latency / 400.0
    assert gbs == pytest.approx(sms * threads * 4.0 / round_ns, rel=1e-6)
    assert latency > 400.0  # on the rising part: the wait is longer than the idle one


def test_a_load_queues_for_the_l1s_data_stage_as_it_nears_its_rate():
    flat = LoadedCurve(np.array([0.0, 1e5]), np.array([400.0, 400.0]))
    # lanes 128 B apart: 32 lines a load, the L1 taking one a cycle (2 GHz: 16 ns each load)
    shape = Shape(op="read", load_bytes_per_thread=4.0, grid="persistent", dram_bytes=1e9,
                  efficiency=1.0, ld_sectors_per_req=32.0, lines_per_request=32.0)
    threads, sms, clock = 2048, 100, 2.0
    p = params(read_curve=flat, sm_clock_ghz=clock, read_gbs=1e6, write_gbs=1e6,
               copy_gbs=1e6, round_ns=0.0)  # Hopper: 2,048 threads an SM
    found = model_bounds.bounds(p, shape)
    l1 = sms * clock * 32 * 4.0 / 32  # the L1 lines bound: 800 GB/s
    assert found[model_bounds.L1_LINES] == pytest.approx(l1)
    gbs = found[model_bounds.LATENCY]
    rho = gbs / l1  # Little's law at the solution, with an M/D/1 queue's mean wait
    wait = 32 / clock * rho / (2 * (1 - rho))
    assert gbs == pytest.approx(sms * threads * 4.0 / (400.0 + wait), rel=1e-6)
    assert gbs < l1  # the queue keeps it below the stage's rate
    # a load of one line barely queues: its stage runs far below its rate
    one = Shape(op="read", load_bytes_per_thread=4.0, grid="persistent", dram_bytes=1e9,
                efficiency=1.0, ld_sectors_per_req=4.0, lines_per_request=1.0)
    assert model_bounds.bounds(p, one)[model_bounds.LATENCY] == pytest.approx(
        sms * threads * 4.0 / 400.0, rel=0.02)
