"""Valid Arrow arrays whose logical length no buffer backs (a run-end encoded array of
2**61 rows over one run, ...): every entry point refuses a result it cannot allocate with
ValueError (the size overflows) or MemoryError (more than the machine holds) naming the
column, before allocating anything, or converts it; never a crash (docs/design.md,
"Checked sizes")."""

from __future__ import annotations

import pyarrow as pa
import pytest

import dfbuffer
import dfbuffer.pandas

# name -> a call on a one-column table (or its array)
ENTRY_POINTS = {
    "column_to_ndarray": lambda t: dfbuffer.column_to_ndarray(t.column(0).chunk(0)),
    "from_dataframe": lambda t: dfbuffer.from_dataframe(t),
    "to_matrix": lambda t: dfbuffer.to_matrix(t),
    "structs=flatten": lambda t: dfbuffer.from_dataframe(t, structs="flatten"),
    "to_interchange": lambda t: dfbuffer.to_interchange(t).get_column(0).get_buffers(),
    "pandas": lambda t: dfbuffer.pandas.from_dataframe(t),
}


def run_end(length: int, values: pa.Array) -> pa.Table:
    a = pa.RunEndEncodedArray.from_arrays([length], values)
    a.validate(full=True)
    return pa.table({"r": a})


@pytest.mark.parametrize("entry", ENTRY_POINTS)
@pytest.mark.parametrize(
    ("values", "error"),
    [
        (pa.array([7]), ValueError),  # 2**61 * 8 bytes overflows
        (pa.array([7], pa.int8()), MemoryError),  # 2**61 bytes: no machine has them
        (pa.array([None], pa.int16()), MemoryError),
        (pa.array(["x"]), ValueError),  # the string path's int64 codes
    ],
    ids=["int64", "int8", "null-int16", "string"],
)
def test_a_run_end_array_of_2_61_rows_is_refused(entry, values, error):
    t = run_end(2**61, values)
    with pytest.raises(error, match="'r'" if entry != "column_to_ndarray" else "column"):
        ENTRY_POINTS[entry](t)


@pytest.mark.parametrize("entry", ENTRY_POINTS)
def test_a_small_run_end_array_still_converts(entry):
    t = run_end(5, pa.array([7]))
    got = ENTRY_POINTS[entry](t)
    assert got is not None
    assert dfbuffer.column_to_ndarray(t.column(0).chunk(0)).tolist() == [7] * 5


@pytest.mark.parametrize(
    "shape",
    [[2**32, 2**32, 2**32], [2**62, 4, 2**32, 2**32], [-1, -4], [2**63 - 1, 2]],
    ids=["overflow", "overflow-then-more", "negative", "int64-max"],
)
def test_a_tensor_shape_whose_product_overflows_is_refused(shape):
    # the shape's product is checked extent by extent: UBSan caught the multiplication
    # carrying on after an overflow ("overflow-then-more")
    import json

    field = pa.field("t", pa.list_(pa.int8(), 4), metadata={
        b"ARROW:extension:name": b"arrow.fixed_shape_tensor",
        b"ARROW:extension:metadata": json.dumps({"shape": shape}).encode(),
    })
    t = pa.table([pa.array([[1, 2, 3, 4]], pa.list_(pa.int8(), 4))], schema=pa.schema([field]))
    with pytest.raises(ValueError, match="shape"):
        dfbuffer.from_dataframe(t)


def test_a_tensor_shape_that_fits_still_converts():
    import json

    field = pa.field("t", pa.list_(pa.int8(), 4), metadata={
        b"ARROW:extension:name": b"arrow.fixed_shape_tensor",
        b"ARROW:extension:metadata": json.dumps({"shape": [2, 2]}).encode(),
    })
    t = pa.table([pa.array([[1, 2, 3, 4]], pa.list_(pa.int8(), 4))], schema=pa.schema([field]))
    assert dfbuffer.from_dataframe(t)["t"].tolist() == [[[1, 2], [3, 4]]]
