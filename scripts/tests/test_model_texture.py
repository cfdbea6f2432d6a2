"""The texture family's CUDA array (`model_texture`): its fetches as plain loads with the
block-linear layout's sectors and lines per warp request, its surface write as the plain
write; checked by hand and on the H200's record."""

from pathlib import Path

import pandas as pd

from test_model import record_family

from gmbtools.analysis import model_shapes, model_texture

RECORD = Path(__file__).resolve().parents[2] / "results/nvidia-h200/20261202-022619"


def fetch(walk: str, path: str = "array", **extra) -> pd.Series:
    return pd.Series({"name": f"texture/read/{walk}/path:{path}", "family": "texture",
                      "variant": f"read/{walk}", "path": path, **extra})


def test_a_column_of_32_texels_touches_16_sectors_in_8_lines_a_row_8_in_4():
    # a GOB is 64 B x 8 rows: a sector 16 B x 2 rows, a line 32 B x 4 rows
    column = model_shapes.shape_of(fetch("cols/block:32x8"))
    assert (column.ld_sectors_per_req, column.lines_per_request) == (16.0, 8.0)
    assert column.read_step is None and not column.lone_loads  # neighbours share the sectors
    # a round waits for each line it touches: two sectors a line, not four
    assert column.lines_per_round == 8.0
    row = model_shapes.shape_of(fetch("stencil"))
    assert (row.ld_sectors_per_req, row.lines_per_request, row.lines_per_round) == (8.0, 4.0, 4.0)
    assert model_shapes.shape_of(fetch("stencil", model_warp_instructions=61.0)).instructions == 61.0
    assert model_shapes.shape_of(fetch("rows")) is None  # the full sweep's walks: not modelled
    assert model_shapes.shape_of(fetch("cols/block:32x8", path="tex2d")) is None
    assert model_texture.array_shape(pd.Series({"variant": "write/rows", "path": "array"}),
                                     None) is None


def test_the_record_predicts_every_texture_path():
    texture = record_family(RECORD, "texture")[1]
    assert len(texture) == 8
    surface = texture.loc["texture/write/rows/path:surface"]
    assert abs(surface["ratio"] - 1) <= 0.05
    # the fetches run below the bound: the texture pipeline's own latency is not counted
    arrays = texture.loc[texture.index.str.endswith("path:array"), "ratio"]
    assert (arrays < 0.95).all() and (arrays > 0.4).all()
