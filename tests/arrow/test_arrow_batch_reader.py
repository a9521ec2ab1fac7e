"""The C stream reader behind iter_matrices / iter_batches (arrow_batches.c):
_ArrowBatchReader takes a stream capsule once and reads one record batch per
next(); each _ArrowBatch is an Arrow producer whose row slices are zero-copy;
_arrow_batch_stream joins slices into one stream."""

from __future__ import annotations

import gc
import weakref

import nanoarrow as na
import numpy as np
import pyarrow as pa
import pytest

import dfbuffer
from dfbuffer._interchange import _arrow_batch_stream, _ArrowBatch, _ArrowBatchReader


class Stream:
    """An Arrow stream producer over a capsule made once (single use)."""

    def __init__(self, capsule):
        self.capsule = capsule

    def __arrow_c_stream__(self, requested_schema=None):
        return self.capsule


def table():
    return pa.table({
        "i": pa.array(np.arange(10, dtype=np.int64)),
        "f": pa.array([0.5, None] * 5),
        "s": pa.array(["a", None, "ccc", "d", "e"] * 2),
        "d": pa.array(["x", "y"] * 5).dictionary_encode(),
        "l": pa.array([[1, 2], None, [], [3], [4, 5, 6]] * 2),
    })


def reader(t, max_chunksize=4):
    return _ArrowBatchReader(t.to_reader(max_chunksize=max_chunksize).__arrow_c_stream__())


def test_batches_in_order_with_fields():
    t = table()
    r = reader(t)
    assert [f[0] for f in r.fields] == ["i", "f", "s", "d", "l"]
    assert r.fields[0][1] == "l" and all(f[2] for f in r.fields)
    bs = list(r)
    assert [len(b) for b in bs] == [4, 4, 2] and [b.num_rows for b in bs] == [4, 4, 2]
    assert all(type(b) is _ArrowBatch for b in bs)
    assert pa.table(bs[1]).equals(t.slice(4, 4))
    assert list(r) == []                  # ended: stays ended
    assert repr(bs[2]) == "<_ArrowBatch of 2 rows, 5 columns>"


@pytest.mark.parametrize("start, n", [(0, 4), (1, 2), (3, 1), (0, 0), (4, 0), (2, 2)])
def test_slice_values(start, n):
    t = table()
    b = list(reader(t))[1]
    piece = b.slice(start, n)
    assert len(piece) == n
    want = t.slice(4 + start, n)
    assert pa.table(piece).equals(want)
    assert pa.record_batch(piece).to_pydict() == want.to_pydict()
    got = dfbuffer.from_dataframe(piece)
    ref = dfbuffer.from_dataframe(want)
    for k in ref:
        assert np.ma.getmaskarray(got[k]).tolist() == np.ma.getmaskarray(ref[k]).tolist()
        assert [str(x) for x in np.ma.filled(got[k], None)] == [
            str(x) for x in np.ma.filled(ref[k], None)]
    np.testing.assert_array_equal(dfbuffer.to_matrix(piece, columns=["i", "f"]),
                                  dfbuffer.to_matrix(want, columns=["i", "f"]))
    # a slice of a slice
    if n >= 2:
        assert pa.table(piece.slice(1, n - 1)).equals(t.slice(5 + start, n - 1))


def test_slice_is_zero_copy():
    t = pa.table({"x": np.arange(8.0)})
    b = next(reader(t, 8))
    col = dfbuffer.from_dataframe(b.slice(3, 2))["x"]
    assert col.tolist() == [3.0, 4.0]
    assert col.ctypes.data == t.column("x").chunks[0].buffers()[1].address + 3 * 8


@pytest.mark.parametrize("start, n", [(-1, 1), (0, 5), (3, 2), (5, 0), (1, -1)])
def test_slice_out_of_range(start, n):
    b = next(reader(pa.table({"x": np.arange(4.0)})))
    with pytest.raises(IndexError, match="outside the batch of 4 rows"):
        b.slice(start, n)


def test_slice_argument_types():
    b = next(reader(pa.table({"x": np.arange(4.0)})))
    with pytest.raises(TypeError):
        b.slice(1.0, 2)
    with pytest.raises(TypeError):
        b.slice(1)
    with pytest.raises(OverflowError):
        b.slice(2**70, 1)


def test_pieces_stream_joins_slices():
    t = table()
    bs = list(reader(t))
    cap = _arrow_batch_stream((bs[0].slice(3, 1), bs[1], bs[2].slice(0, 1)))
    got = pa.RecordBatchReader.from_stream(Stream(cap)).read_all()
    assert got.equals(t.slice(3, 6))
    m = dfbuffer.to_matrix(Stream(_arrow_batch_stream((bs[0].slice(2, 2), bs[1]))),
                           columns=["i", "f"])
    np.testing.assert_array_equal(m, dfbuffer.to_matrix(t.slice(2, 6), columns=["i", "f"]))


def test_pieces_stream_refuses():
    bs = list(reader(table()))
    other = next(reader(table()))
    with pytest.raises(ValueError, match="different streams"):
        _arrow_batch_stream((bs[0], other))
    with pytest.raises(TypeError):
        _arrow_batch_stream(())
    with pytest.raises(TypeError):
        _arrow_batch_stream([bs[0]])
    with pytest.raises(TypeError):
        _arrow_batch_stream((bs[0], 1))


def test_capsule_read_once_and_refusals():
    cap = pa.table({"x": [1]}).__arrow_c_stream__()
    r = _ArrowBatchReader(cap)
    with pytest.raises(ValueError, match="already consumed"):
        _ArrowBatchReader(cap)
    assert [len(b) for b in r] == [1]
    with pytest.raises(TypeError):
        _ArrowBatchReader(pa.schema([("x", pa.int64())]).__arrow_c_schema__())
    with pytest.raises(TypeError):
        _ArrowBatchReader(object())
    with pytest.raises(TypeError, match=r"record batches.*format 'l'"):
        _ArrowBatchReader(pa.chunked_array([[1, 2]]).__arrow_c_stream__())
    with pytest.raises(TypeError):
        _ArrowBatch()


def test_nanoarrow_stream_single_use():
    src = na.ArrayStream(pa.table({"x": [1, 2, 3]}))
    r = _ArrowBatchReader(src.__arrow_c_stream__())
    assert [pa.table(b).column("x").to_pylist() for b in r] == [[1, 2, 3]]
    with pytest.raises(RuntimeError, match="released"):
        src.__arrow_c_stream__()        # nanoarrow's stream moved out exactly once


def test_requested_schema():
    b = next(reader(pa.table({"x": [1]})))
    assert len(b.__arrow_c_array__(None)) == 2
    assert len(b.__arrow_c_array__(requested_schema=None)) == 2
    with pytest.raises(NotImplementedError):
        b.__arrow_c_array__(b.__arrow_c_schema__())
    with pytest.raises(TypeError):
        b.__arrow_c_array__(bogus=None)


def test_close_releases_the_stream(collect):
    data = np.arange(4.0)
    alive = weakref.ref(data)
    t = pa.table({"x": data})
    del data
    r = _ArrowBatchReader(t.to_reader().__arrow_c_stream__())
    del t
    collect()
    assert alive() is not None
    r.close()
    collect()
    assert alive() is None
    assert list(r) == []


def test_batch_outlives_reader(collect):
    t = pa.table({"x": np.arange(4.0)})
    r = reader(t)
    b = next(r)
    del r, t
    gc.collect()
    assert dfbuffer.from_dataframe(b.slice(1, 2))["x"].tolist() == [1.0, 2.0]
    exported = b.__arrow_c_array__()
    del b
    gc.collect()
    assert pa.record_batch(_Array(exported)).column(0).to_pylist() == [0.0, 1.0, 2.0, 3.0]


class _Array:
    def __init__(self, caps):
        self.caps = caps

    def __arrow_c_array__(self, requested_schema=None):
        return self.caps
