"""A single-use Arrow stream (``nanoarrow.ArrayStream``, ``pyarrow.RecordBatchReader``)
can be exported once: every function that reads a frame exports it exactly once and
gives the answer it gives for the table behind it (docs/api.md, "One vocabulary";
requirements.md L-OR1)."""

from __future__ import annotations

import numpy as np
import pytest

import dfbuffer

pd = pytest.importorskip("pandas")
pa = pytest.importorskip("pyarrow")
try:
    import nanoarrow as na
except ImportError:  # the pyarrow reader cases still run
    na = None
pa_interchange = pytest.importorskip("pyarrow.interchange")

import dfbuffer.pandas  # noqa: E402 - after pandas' importorskip


class OneExport:
    """A producer of one stream: a second ``__arrow_c_stream__`` call fails the test."""

    def __init__(self, stream):
        self._stream = stream
        self.exports = 0

    def __arrow_c_stream__(self, requested_schema=None):
        self.exports += 1
        if self.exports > 1:
            raise AssertionError("the single-use stream was exported twice")
        return self._stream.__arrow_c_stream__(requested_schema)


def _table():
    return pa.table({"x": pa.array([1.5, None, 3.0]), "i": pa.array([1, 2, None]),
                     "s": pa.array(["a", None, "c"])})


def _matrix(obj, **kw):
    return dfbuffer.to_matrix(obj, columns=["x", "i"], **kw)


def _skip(obj):
    return dfbuffer.to_matrix(obj, on_unsupported="skip")


FUNCS = {
    "from_dataframe": lambda o: dfbuffer.from_dataframe(o, nulls="fill"),
    "to_matrix": _matrix,
    "to_matrix(on_unsupported='skip')": _skip,
    "to_arrow": lambda o: pa.table(dfbuffer.to_arrow(o)),
    "to_interchange": lambda o: pa_interchange.from_dataframe(dfbuffer.to_interchange(o)),
    "schema": lambda o: [(c.name, c.type) for c in dfbuffer.schema(o)],
    "dfbuffer.pandas.from_dataframe": dfbuffer.pandas.from_dataframe,
}

STREAMS = {"pa.RecordBatchReader": lambda t: t.to_reader()}
if na is not None:
    STREAMS["nanoarrow.ArrayStream"] = lambda t: na.ArrayStream(t)


def _same(got, want):
    if isinstance(want, dict):
        assert list(got) == list(want)
        for k in want:
            np.testing.assert_array_equal(got[k], want[k])
    elif isinstance(want, pd.DataFrame):
        pd.testing.assert_frame_equal(got, want)
    elif isinstance(want, np.ndarray):
        np.testing.assert_array_equal(got, want)
    else:
        assert got == want


@pytest.mark.parametrize("stream", sorted(STREAMS))
@pytest.mark.parametrize("func", sorted(FUNCS))
def test_a_single_use_stream_is_exported_once(func, stream):
    fn = FUNCS[func]
    want = fn(_table())
    producer = OneExport(STREAMS[stream](_table()))
    got = fn(producer)
    assert producer.exports == 1
    _same(got, want)


@pytest.mark.parametrize("stream", sorted(STREAMS))
def test_dfbuffer_pandas_reads_a_stream_of_one_column(stream):
    arr = pa.chunked_array([pa.array([1, None, 3])])
    t = pa.table({"n": arr})
    producer = OneExport(STREAMS[stream](t))
    got = dfbuffer.pandas.from_dataframe(producer)
    assert producer.exports == 1
    assert str(got["n"].dtype) == "Int64" and got["n"].isna().tolist() == [False, True, False]


def test_dfbuffer_pandas_keeps_pandas_index_of_a_pyarrow_reader():
    # the reader is read into a table once, its schema metadata kept: the index
    # (a reader's second export fails: it is the producer itself here)
    df = pd.DataFrame({"a": [1.5, 2.5]}, index=pd.Index([7, 9], name="k"))
    got = dfbuffer.pandas.from_dataframe(pa.table(df).to_reader())
    assert got.index.tolist() == [7, 9] and got.index.name == "k"
    assert got["a"].tolist() == [1.5, 2.5]


def test_to_arrow_gives_the_columns_dfbuffer_reads_without_table_metadata():
    # to_arrow hands out the columns every function reads (pandas' index columns left
    # out) and no table-level metadata: the same table whatever the path to the frame,
    # so no metadata describes columns that are not there (docs/api.md, "Arrow outward")
    df = pd.DataFrame({"a": [1.5, 2.5]}, index=pd.Index([7, 9], name="k"))
    t = pa.table(df)
    assert t.schema.metadata and t.column_names == ["a", "k"]
    for src in (t, t.to_reader(), df):
        got = pa.table(dfbuffer.to_arrow(src))
        assert got.column_names == ["a"] == list(dfbuffer.from_dataframe(t))
        assert got.schema.metadata is None
        assert got.column("a").to_pylist() == [1.5, 2.5]
