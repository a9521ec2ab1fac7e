"""The frame-source table (src/_interchange/readers/frame_source.c): one place decides
how a frame is read, and every function that reads a frame accepts the same inputs and
reads them the same way."""

import warnings

import numpy as np
import pandas as pd

try:
    import polars as pl
except ImportError:  # no free-threaded wheel: the polars cases skip
    pl = None
import pyarrow as pa
import pytest

import dfbuffer
from dfbuffer._interchange import _frame_source


def _pandas():
    return pd.DataFrame({"x": [1.5, 2.5, 3.0], "i": [1, 2, 3]})


def _inputs():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # pandas deprecates its __dataframe__
        pandas_ix = _pandas().__dataframe__()
    t = pa.table({"x": [1.5, 2.5, 3.0], "i": [1, 2, 3]})
    got = {
        "pandas": (_pandas(), "pandas"),
        "pandas interchange object": (pandas_ix, "pandas"),
        "pyarrow table": (t, "arrow"),
        "pyarrow record batch": (t.to_batches()[0], "arrow"),
        "to_interchange view": (dfbuffer.to_interchange(t), "arrow"),
        "to_arrow export": (dfbuffer.to_arrow(t), "arrow"),
        "dict of arrays": ({"x": np.array([1.5, 2.5, 3.0]), "i": np.array([1, 2, 3])},
                           "mapping"),
    }
    if pl is not None:
        got["polars"] = (pl.DataFrame({"x": [1.5, 2.5, 3.0], "i": [1, 2, 3]}), "arrow")
    return got


INPUTS = sorted(_inputs())


@pytest.mark.parametrize("name", INPUTS)
def test_the_table_names_the_source(name):
    obj, kind = _inputs()[name]
    got, frame, allow_copy = _frame_source(obj)
    assert got == kind
    assert allow_copy is True
    if kind == "pandas":
        # a frame over the manager read once: every later read is of that manager
        assert type(frame) is pd.DataFrame and frame._mgr is obj_frame(obj)._mgr
    elif kind == "mapping":
        # the items copied in one pass, never the caller's mapping
        assert type(frame) is dict and frame is not obj and frame == dict(obj.items())
    else:
        assert frame is obj


def obj_frame(obj):
    """The pandas frame behind ``obj`` (itself, or the one pandas' interchange object wraps)."""
    return obj if isinstance(obj, pd.DataFrame) else obj._df


def test_the_table_rows():
    assert _frame_source(pa.schema([("a", pa.int8())]))[0] == "schema"
    assert _frame_source(3) == ("none", None, True)
    if pl is not None:
        assert _frame_source(pl.LazyFrame({"a": [1]}))[0] == "none"
    with pytest.raises(TypeError):
        _frame_source()


class _Interchange:
    """A minimal interchange-only producer: no Arrow, no mapping."""

    def __init__(self):
        self._df = pa.table({"a": [1, 2]}).__dataframe__()

    def __dataframe__(self, nan_as_null=False, allow_copy=True):
        return self._df


def test_an_interchange_only_producer():
    kind, frame, _ = _frame_source(_Interchange())
    assert kind == "interchange" and hasattr(frame, "get_column")
    assert dfbuffer.from_dataframe(_Interchange())["a"].tolist() == [1, 2]
    assert dfbuffer.to_matrix(_Interchange()).tolist() == [[1.0], [2.0]]
    assert dfbuffer.schema(_Interchange()).names == ["a"]
    assert pa.table(dfbuffer.to_arrow(_Interchange())).column("a").to_pylist() == [1, 2]
    view = dfbuffer.to_interchange(_Interchange())
    assert view.column_names() == ["a"]
    assert pa.interchange.from_dataframe(view).column("a").to_pylist() == [1, 2]
    assert dfbuffer.to_interchange(_Interchange(), columns=["a"]).num_rows() == 2
    with pytest.raises(KeyError):
        dfbuffer.to_interchange(_Interchange(), columns=["zz"])


@pytest.mark.parametrize("name", INPUTS)
def test_every_function_reads_every_source_alike(name):
    obj, _ = _inputs()[name]
    cols = dfbuffer.from_dataframe(obj)
    assert list(cols) == ["x", "i"]
    np.testing.assert_array_equal(cols["x"], [1.5, 2.5, 3.0])
    np.testing.assert_array_equal(cols["i"], [1, 2, 3])
    np.testing.assert_array_equal(
        dfbuffer.to_matrix(obj), [[1.5, 1.0], [2.5, 2.0], [3.0, 3.0]]
    )
    sch = dfbuffer.schema(obj)
    assert sch.names == ["x", "i"]
    t = pa.table(dfbuffer.to_arrow(obj))
    assert t.column_names == ["x", "i"] and t.column("i").to_pylist() == [1, 2, 3]
    sel = dfbuffer.from_dataframe(obj, columns=["i"])
    assert list(sel) == ["i"]
    assert dfbuffer.to_matrix(obj, columns=["i"]).tolist() == [[1], [2], [3]]
    assert dfbuffer.schema(obj, columns=["i"]).names == ["i"]


def test_pandas_interchange_object_schema_is_the_frames():
    # schema() reads pandas' interchange object as the frame behind it, as the
    # converters do: one answer for the same data
    df = pd.DataFrame({"i": pd.array([1, None], dtype="Int64")})
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ix = df.__dataframe__()
    assert dfbuffer.schema(ix) == dfbuffer.schema(df)
    assert dfbuffer.schema(ix).source == "arrow"
    assert dfbuffer.schema(ix).names == ["i"]
    assert isinstance(dfbuffer.from_dataframe(ix)["i"], np.ma.MaskedArray)


@pytest.mark.parametrize(
    "fn",
    [dfbuffer.from_dataframe, dfbuffer.to_matrix, dfbuffer.schema, dfbuffer.to_arrow],
    ids=lambda f: f.__name__,
)
def test_nothing_readable_is_one_type_error(fn):
    with pytest.raises(TypeError, match=r"expects .*mapping.*got int"):
        fn(3)


def test_a_duckdb_relation_is_an_arrow_source():
    duckdb = pytest.importorskip("duckdb")
    rel = duckdb.sql("select 1.5::double as x, 1::bigint as i union all "
                     "select 2.5::double, 2::bigint order by i")
    assert _frame_source(rel)[0] == "arrow"
    assert dfbuffer.from_dataframe(rel)["x"].tolist() == [1.5, 2.5]
    assert dfbuffer.to_matrix(rel, on_unsupported="skip").tolist() == [[1.5, 1.0], [2.5, 2.0]]
    assert dfbuffer.schema(rel).names == ["x", "i"]


class _OddColumn:
    """An interchange column of a width no Arrow type has (a 128-bit float)."""

    def __init__(self, col):
        self._col = col

    def __getattr__(self, name):
        return getattr(self._col, name)

    @property
    def dtype(self):
        return (dfbuffer.DtypeKind.FLOAT, 128, "g", "=")

    def get_chunks(self, n_chunks=None):
        return [self]


class _OddFrame:
    """A pure interchange DataFrame (no Arrow) with one such column, "odd"."""

    def __init__(self):
        self._df = pa.table({"a": [1, 2], "odd": [3, 4]}).__dataframe__()

    def __dataframe__(self, nan_as_null=False, allow_copy=True):
        return self

    def __getattr__(self, name):
        return getattr(self._df, name)

    def get_column(self, i):
        col = self._df.get_column(i)
        return _OddColumn(col) if i == 1 else col

    def get_chunks(self, n_chunks=None):
        return [self]


def test_to_arrow_on_unsupported_skips_interchange_columns():
    assert _frame_source(_OddFrame())[0] == "interchange"
    with pytest.raises(NotImplementedError, match="column 'odd'"):
        dfbuffer.to_arrow(_OddFrame())
    t = pa.table(dfbuffer.to_arrow(_OddFrame(), on_unsupported="skip"))
    assert t.column_names == ["a"] and t.column("a").to_pylist() == [1, 2]
    with pytest.raises(ValueError, match="on_unsupported"):
        dfbuffer.to_arrow(_OddFrame(), on_unsupported="drop")


def test_a_mapping_of_masked_arrays_keeps_their_nulls():
    # a MaskedArray value gives nulls, as to_arrow of the same mapping does
    m = np.ma.MaskedArray(np.array([7, 5]), mask=[True, False])
    got = dfbuffer.from_dataframe({"a": m})["a"]
    assert isinstance(got, np.ma.MaskedArray)
    assert got.mask.tolist() == [True, False] and got[1] == 5
    assert np.isnan(dfbuffer.from_dataframe({"a": m}, nulls="fill")["a"][0])
    with pytest.raises(ValueError, match="'a'"):
        dfbuffer.from_dataframe({"a": m}, nulls="raise")
    assert m.mask.tolist() == [True, False]  # the caller's mask untouched
    assert dfbuffer.from_dataframe({"a": m.filled(0)})["a"].tolist() == [0, 5]


def test_every_python_operation_has_a_function_for_every_row():
    """The Python operations are tables of one function per row of the C table:
    _frame_kinds() names the rows, in the order _frame_source asks them, and an
    operation without a row's function cannot be made; calling one (a C
    _FrameOperation) reads the source once and hands the row what it read."""
    import dfbuffer._batches
    import dfbuffer._schema
    import dfbuffer._to_arrow
    import dfbuffer.pandas
    from dfbuffer._interchange import _frame_kinds
    from dfbuffer._sources import operation

    kinds = _frame_kinds()
    assert kinds == ("pandas", "arrow", "interchange", "mapping", "schema")
    ops = [dfbuffer._to_arrow.NODES, dfbuffer._to_arrow.INTERCHANGE,
           dfbuffer._schema.SCHEMA, dfbuffer.pandas._PANDAS, dfbuffer._batches._OPEN]
    for op in ops:
        assert len(op.rows) == len(kinds) and all(map(callable, op.rows)), op.name
    rows = dict.fromkeys(kinds, lambda src: src.frame)
    with pytest.raises(RuntimeError, match="'schema'"):
        operation("partial", **{k: v for k, v in rows.items() if k != "schema"})
    with pytest.raises(RuntimeError, match="'parquet'"):
        operation("extra", parquet=lambda src: None, **rows)
    # one call asks the table once and hands the row its frame, read once
    op = operation("frame", **rows)
    d = {"a": np.arange(3)}
    got = op(d, "frame")
    # the mapping's items copied in one pass
    assert got is not d and list(got) == ["a"] and got["a"] is d["a"]
    with pytest.raises(TypeError, match=r"frame\(\) expects a dataframe"):
        op(3, "frame")


def test_a_frame_operation_passes_its_arguments_and_refusals():
    from dfbuffer._interchange import _frame_kinds, _FrameOperation
    from dfbuffer._sources import Source

    kinds = _frame_kinds()
    op = _FrameOperation("probe", tuple((lambda src, *a, k=k: (k, src, a)) for k in kinds),
                         Source)
    kind, src, args = op(pa.table({"a": [1]}), "probe", 1, "two", None)
    assert kind == "arrow" and type(src) is Source and args == (1, "two", None)
    assert src.func == "probe" and src.allow_copy is True and src.frame is src.obj
    # more arguments than fit the call's small stack
    assert op({"a": np.arange(2)}, "probe", *range(20))[2] == tuple(range(20))
    df = pd.DataFrame({"a": [1, 2]})
    kind, src, _ = op(df.__dataframe__(allow_copy=False), "probe")
    assert kind == "pandas" and src.allow_copy is False
    assert list(src.frame.columns) == ["a"]
    with pytest.raises(TypeError, match=r"probe\(\) expects a dataframe"):
        op(3, "probe")
    with pytest.raises(TypeError):
        op(df)  # no func
    with pytest.raises(TypeError):
        op(df, "probe", key=1)
    with pytest.raises(TypeError, match="one callable per row"):
        _FrameOperation("short", (len,), Source)
    with pytest.raises(TypeError, match="not callable"):
        _FrameOperation("bad", (1,) * len(kinds), Source)
    with pytest.raises(TypeError, match="tuple subclass"):
        _FrameOperation("bad", (len,) * len(kinds), dict)
