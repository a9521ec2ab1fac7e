"""Run-end encoded arrays: decoded to their values (every value type, every run-end
width, sliced, chunked, through to_matrix), nulls filled run by run, bad run ends refused,
and run ends rewritten while they are read."""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pytest
from flat_arrays import D
from racing import as_list, race, run_ends_target
from run_end_arrays import run_end_array, run_end_encode

import dfbuffer

REE_VALUES = {
    "int": [1, 1, None, 2, 2, 2, 3, None, None],
    "float": [1.5, 1.5, None, -2.0],
    "string": ["a", "a", None, "b", "b", "", ""],
    "binary": [b"x", b"x", None, b"yz"],
    "decimal": [D("1.5"), D("1.5"), None],
    "bool": [True, True, None, False, False],
}


@pytest.mark.parametrize("run_end_type", [pa.int16(), pa.int32(), pa.int64()])
@pytest.mark.parametrize("kind", sorted(REE_VALUES))
def test_run_end_encoded(kind, run_end_type):
    ree = run_end_encode(REE_VALUES[kind], run_end_type)
    assert as_list(dfbuffer.column_to_ndarray(ree)) == ree.to_pylist()
    for sl in (ree.slice(1), ree.slice(2, 2), ree.slice(len(ree)), ree.slice(3, 1)):
        assert as_list(dfbuffer.column_to_ndarray(sl)) == sl.to_pylist()
    ch = pa.chunked_array([ree.slice(1, 2), ree, ree.slice(0, 0)])
    got = dfbuffer.from_dataframe(pa.table({"r": ch}))["r"]
    assert as_list(got) == ch.to_pylist()
    # always decoded: the run indices are no categorical
    codes = dfbuffer.from_dataframe(pa.table({"r": ch}), categorical="codes")["r"]
    assert isinstance(codes, np.ndarray) and as_list(codes) == ch.to_pylist()


@pytest.mark.parametrize(
    "typ", [pa.int8(), pa.uint16(), pa.float32(), pa.int64(), pa.timestamp("us")]
)
def test_run_end_encoded_fixed_width_fill(typ):
    # long and short runs over values sliced from a larger array with nulls: each run is
    # filled from its value, its validity set run by run
    lens = np.array([1, 40, 3, 1, 17, 200, 2, 9])
    base = pa.array([5, None, 7, 9, 1, None, 3, 4, 2, 6], type=pa.int64()).cast(typ)
    values = base.slice(1, len(lens))
    ends = pa.array(np.cumsum(lens).astype(np.int32))
    ree = run_end_array(ends, values)
    expected = np.repeat(np.array(values.to_pylist(), dtype=object), lens).tolist()
    for sl in (ree, ree.slice(2, 50), ree.slice(41, 200), ree.slice(len(ree) - 1)):
        want = expected[sl.offset : sl.offset + len(sl)]
        res = dfbuffer.column_to_ndarray(sl)
        assert res.dtype == typ.to_pandas_dtype() and as_list(res) == want
        assert np.ma.getmaskarray(res).sum() == sum(v is None for v in want)


def test_run_end_encoded_int_dtype_and_fill():
    ree = run_end_encode([1, 1, 2, 2, 2])
    res = dfbuffer.column_to_ndarray(ree)
    assert type(res) is np.ndarray and res.dtype == np.int64 and res.tolist() == [1, 1, 2, 2, 2]
    filled = dfbuffer.column_to_ndarray(run_end_encode([1, None, None, 3]), nulls="fill")
    assert filled.dtype == np.float64 and np.isnan(filled[1:3]).all()


def test_run_end_encoded_ends_falling_back_mid_array_raise():
    # a binary search for row 0 could step over the run end that falls back and
    # start the fill after it; every end from run 0 on is read and checked
    ends = np.arange(1, 25, dtype=np.int32)
    buf = pa.py_buffer(ends)
    for values in (pa.array(np.arange(24)), pa.array([str(i) for i in range(24)])):
        ree = run_end_array(pa.Array.from_buffers(pa.int32(), 24, [None, buf]), values)
        for at in (1, 3, 6, 12):
            ends[:] = np.arange(1, 25)
            ends[at] = 0
            with pytest.raises(ValueError, match="strictly increasing"):
                dfbuffer.column_to_ndarray(ree)
        ends[:] = np.arange(1, 25)
        assert dfbuffer.column_to_ndarray(ree).tolist() == values.to_pylist()


def test_run_end_encoded_bad_run_ends_raise():
    # pyarrow validates run ends when it builds the array: they turn bad afterwards
    ends = np.array([1, 2, 3], np.int32)
    ree = run_end_array(
        pa.Array.from_buffers(pa.int32(), 3, [None, pa.py_buffer(ends)]), pa.array([1, 2, 3])
    )
    for bad in ([2, 2, 3], [2, 1, 3], [-1, 2, 3]):
        ends[:] = bad
        with pytest.raises(ValueError, match="strictly increasing"):
            dfbuffer.column_to_ndarray(ree)
    ends[:] = [1, 2, 3]
    assert dfbuffer.column_to_ndarray(ree).tolist() == [1, 2, 3]


@pytest.mark.parametrize("run", [3, 10])
def test_racing_run_ends(run):
    # int64 runs of 3 rows take one chunk store each in the short-run loop, of 10 several
    ree, expected, target = run_ends_target(run=run)

    def check(res) -> None:
        assert res.tolist() == expected

    ok, refused = race(lambda: dfbuffer.column_to_ndarray(ree), check, [target])
    assert ok + refused == 8


def test_racing_run_ends_of_one_row():
    # runs of one row are copied a block at a time once their ends are read and checked
    ree, expected, target = run_ends_target(run=1)

    def check(res) -> None:
        assert res.tolist() == expected

    ok, refused = race(lambda: dfbuffer.column_to_ndarray(ree), check, [target])
    assert ok + refused == 8


def test_to_matrix_reads_run_end_encoded_numbers():
    t = pa.table({"a": [1.0, 2.0, 3.0], "r": run_end_encode([5, None, None])})
    np.testing.assert_array_equal(dfbuffer.to_matrix(t), [[1, 5], [2, np.nan], [3, np.nan]])


def test_run_end_encoded_variable_width_values_are_decoded_runs():
    # strings are no fixed width: their runs are decoded (a copy), never a categorical's
    t = pa.table({"r": run_end_encode(["a", "a", None, "b"])})
    with pytest.raises(TypeError, match="column 'r' is run-end encoded with a string type"):
        dfbuffer.to_matrix(t, dtype="f8")
    with pytest.raises(RuntimeError, match="categorical codes to values needs a copy"):
        dfbuffer.from_dataframe(t, allow_copy=False)
    got = dfbuffer.from_dataframe(t, categorical="codes", nulls="mask")["r"]
    assert got.tolist() == ["a", "a", None, "b"]


@pytest.mark.parametrize("values", [pa.int32(), pa.float64(), pa.string(),
                                    pa.dictionary(pa.int8(), pa.string())])
def test_run_end_encoded_column_of_a_stream_without_batches(values):
    """A stream with no batch (a table sliced to 0 rows) gives its run-end encoded column
    as an empty array of its values' type, as a non-empty one decodes (it raised "format
    '+r' has 2 children, got 0")."""
    sch = pa.schema([("c", pa.run_end_encoded(pa.int32(), values))])
    got = dfbuffer.from_dataframe(pa.RecordBatchReader.from_batches(sch, []))["c"]
    assert got.shape == (0,)
    want = {pa.int32(): np.int32, pa.float64(): np.float64}.get(values, object)
    assert got.dtype == want
    ree = pa.table({"c": run_end_encode([1, 1, 2])})           # int64 values
    assert dfbuffer.from_dataframe(ree.slice(0, 0))["c"].dtype == np.int64
    assert dfbuffer.to_matrix(ree.slice(0, 0)).shape == (0, 1)
    if values in (pa.int32(), pa.float64()):
        assert dfbuffer.to_matrix(pa.RecordBatchReader.from_batches(sch, [])).shape == (0, 1)
