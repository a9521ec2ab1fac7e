"""What ``to_interchange`` serves of the Arrow types beyond numbers, strings and dates.

The protocol's dtype is (kind, bit width, Arrow format, endianness) with the kinds INT,
UINT, FLOAT, BOOL, STRING, DATETIME and CATEGORICAL: times of day are DATETIME with
their Arrow format, run-end encoded fixed-width values are served decoded, dictionaries
of any values are CATEGORICAL; binary, decimals, intervals, nested types and run-end
encoded variable-width values have no dtype and raise NotImplementedError naming the
column and its format when used, or are left out with ``on_unsupported="skip"``.
Consumers: dfbuffer itself, pandas' and pyarrow's ``from_dataframe``."""

from __future__ import annotations

import decimal
import gc
import re
import weakref

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.interchange as pai
import pytest
from racing import as_list, race, run_ends_target

import dfbuffer
from dfbuffer._interchange import DtypeKind

D = decimal.Decimal


class _Only:
    """Exposes only ``__dataframe__`` (so consumers take the interchange path)."""

    def __init__(self, ix) -> None:
        self._ix = ix

    def __dataframe__(self, nan_as_null=False, allow_copy=True):
        return self._ix.__dataframe__(allow_copy=allow_copy)


def _ree(values, run_end_type=None):
    return pc.run_end_encode(pa.array(values), run_end_type=run_end_type or pa.int32())


TIMES = {
    "tts": pa.array([0, None, 86399, 5], pa.time32("s")),
    "ttm": pa.array([0, None, 86399999, 5], pa.time32("ms")),
    "ttu": pa.array([0, None, 86399999999, 5], pa.time64("us")),
    "ttn": pa.array([0, None, 86399999999000, 5000], pa.time64("ns")),
}


@pytest.mark.parametrize("fmt", sorted(TIMES))
def test_times_are_datetime_with_their_format(fmt):
    arr = TIMES[fmt]
    bits = arr.type.bit_width
    t = pa.table({"t": arr, "x": [1, 2, 3, 4]})
    col = dfbuffer.to_interchange(t).get_column(0)
    assert col.dtype == (DtypeKind.DATETIME, bits, fmt, "=")
    bufs = col.get_buffers()
    assert bufs["data"][1] == (DtypeKind.INT, bits, "i" if bits == 32 else "l", "=")
    assert bufs["data"][0].ptr == arr.buffers()[1].address  # zero-copy
    assert col.null_count == 1
    # dfbuffer reads them back through the protocol as datetime.time
    got = dfbuffer.from_dataframe(_Only(dfbuffer.to_interchange(t)))["t"]
    assert as_list(got) == arr.to_pylist()
    # pandas' and pyarrow's consumers parse only timestamp and date formats: they refuse
    # times (NotImplementedError), or, once they read them, must give the same times
    for consume in (pai.from_dataframe, pd.api.interchange.from_dataframe):
        try:
            res = consume(_Only(dfbuffer.to_interchange(t.select(["t"]))))
        except NotImplementedError as exc:
            assert fmt in str(exc)
            continue
        vals = res.column(0).to_pylist() if isinstance(res, pa.Table) else res["t"].tolist()
        assert [None if v is None or v != v else v for v in vals] == arr.to_pylist()


@pytest.mark.parametrize("run_end_type", [pa.int16(), pa.int32(), pa.int64()])
@pytest.mark.parametrize(
    "values",
    [[1, 1, None, 2, 2, 2], [1.5, 1.5, None, -2.0], [True, True, False, False]],
    ids=["int", "float", "bool"],
)
def test_run_end_encoded_fixed_width_values_are_served_decoded(values, run_end_type):
    ree = _ree(values, run_end_type)
    want = ree.to_pylist()
    t = pa.table({"r": ree, "x": list(range(len(values)))})
    ix = dfbuffer.to_interchange(t)
    col = ix.get_column(0)
    vt = ree.type.value_type
    if pa.types.is_boolean(vt):  # bit-packed values are not decoded: no dtype
        with pytest.raises(NotImplementedError, match=r"column 'r'.*'\+r'"):
            _ = col.dtype
        return
    assert col.dtype[0] in (DtypeKind.INT, DtypeKind.FLOAT)
    assert col.dtype[1] == vt.bit_width and col.null_count == want.count(None)
    assert pai.from_dataframe(_Only(ix)).column("r").to_pylist() == want
    got = pd.api.interchange.from_dataframe(_Only(ix))["r"].tolist()
    assert [None if v != v else v for v in got] == want
    assert as_list(dfbuffer.from_dataframe(_Only(ix))["r"]) == want
    # sliced and chunked
    two = pa.Table.from_batches(t.slice(1).to_batches() + t.slice(0, 2).to_batches())
    want2 = two.column("r").to_pylist()
    assert pai.from_dataframe(_Only(dfbuffer.to_interchange(two))).column("r").to_pylist() == want2
    # a copy: allow_copy=False refuses it when the buffers are asked for
    strict = dfbuffer.to_interchange(t, allow_copy=False).get_column(0)
    assert strict.dtype == col.dtype
    with pytest.raises(RuntimeError, match="column 'r'.*run-end.*allow_copy=False"):
        strict.get_buffers()


def test_dataframe_allow_copy_switches_the_run_end_refusal():
    ree = _ree([7, 7, None, 8])
    t = pa.table({"r": ree, "x": [1, 2, 3, 4]})
    strict = dfbuffer.to_interchange(t, allow_copy=False)
    with pytest.raises(RuntimeError, match="column 'r'.*run-end.*allow_copy=False"):
        strict.get_column(0).get_buffers()
    # the protocol's frame that may copy serves the decoded values
    loose = strict.__dataframe__(allow_copy=True)
    assert loose is not strict
    assert loose.get_column(0).get_buffers()["data"][0].ptr != 0
    assert pai.from_dataframe(_Only(loose)).column("r").to_pylist() == ree.to_pylist()
    assert pai.from_dataframe(strict).column("r").to_pylist() == ree.to_pylist()
    assert as_list(dfbuffer.from_dataframe(_Only(strict))["r"]) == ree.to_pylist()
    for sub in (loose.select_columns([0]), next(iter(loose.get_chunks(2)))):
        assert sub.get_column(0).get_buffers()["data"][0].ptr != 0
    # and back: a frame derived with allow_copy=False refuses the copy again, as does
    # everything derived from it (selections, chunks, the column's chunks)
    again = dfbuffer.to_interchange(t).__dataframe__(allow_copy=False)
    cols = [
        again.get_column(0),
        again.select_columns_by_name(["r"]).get_column(0),
        next(iter(again.get_chunks(2))).get_column(0),
        next(iter(again.get_column(0).get_chunks(2))),
    ]
    for col in cols:
        assert col.dtype[0] == DtypeKind.INT  # described, only its buffers refused
        with pytest.raises(RuntimeError, match="column 'r'.*run-end.*allow_copy=False"):
            col.get_buffers()
    assert again.get_column(1).get_buffers()["data"][0].ptr != 0
    with pytest.raises(RuntimeError, match="allow_copy"):
        pd.api.interchange.from_dataframe(_Only(again), allow_copy=False)


def test_dataframe_allow_copy_false_refuses_copied_string_views():
    t = pa.table({"v": pa.array(["a", "a much longer string", None], pa.string_view())})
    loose = dfbuffer.to_interchange(t)
    assert loose.get_column(0).get_buffers()["offsets"] is not None
    strict = loose.__dataframe__(allow_copy=False)
    with pytest.raises(RuntimeError, match="column 'v'.*allow_copy=False"):
        strict.get_column(0).get_buffers()


def test_run_end_encoded_strings_raise_naming_the_column():
    t = pa.table({"s": _ree(["a", "a", None]), "x": [1, 2, 3]})
    ix = dfbuffer.to_interchange(t)
    with pytest.raises(NotImplementedError, match=r"column 's'.*'\+r'"):
        _ = ix.get_column(0).dtype
    assert ix.get_column(1).dtype[0] == DtypeKind.INT


def test_binary_view_column_does_not_break_the_frame():
    # polars' binary columns are binary views: the others are still served
    t = pa.table({"b": pa.array([b"a", None], pa.binary_view()), "x": [1, 2]})
    ix = dfbuffer.to_interchange(t)
    with pytest.raises(NotImplementedError, match="column 'b'.*'vz'"):
        _ = ix.get_column(0).dtype
    with pytest.raises(NotImplementedError, match="column 'b'.*'vz'"):
        ix.get_column(0).get_buffers()
    assert pai.from_dataframe(_Only(ix.select_columns([1]))).column("x").to_pylist() == [1, 2]
    pl = pytest.importorskip("polars")
    pix = dfbuffer.to_interchange(pl.DataFrame({"b": [b"x", None], "x": [1, 2]}))
    assert pix.get_column(1).dtype[0] == DtypeKind.INT


UNSUPPORTED = {
    "binary": (pa.array([b"a", None, b"c"]), "z"),
    "decimal": (pa.array([D("1.5"), None, D("-2.0")], pa.decimal128(5, 1)), "d:5,1"),
    "interval": (pa.array([(1, 2, 3), None, (0, 0, 0)], pa.month_day_nano_interval()), "tin"),
    "fixed_binary": (pa.array([b"ab", None, b"cd"], pa.binary(2)), "w:2"),
    "list": (pa.array([[1], None, []]), "+l"),
    "struct": (pa.array([{"a": 1}, None, {"a": 2}]), "+s"),
    "null": (pa.nulls(3), "n"),
}


@pytest.mark.parametrize("name", sorted(UNSUPPORTED))
def test_types_without_a_dtype_raise_naming_column_and_format(name):
    arr, fmt = UNSUPPORTED[name]
    ix = dfbuffer.to_interchange(pa.table({name: arr}))
    col = ix.get_column(0)
    for use in (lambda: col.dtype, col.get_buffers):
        with pytest.raises(NotImplementedError, match=f"column '{name}'.*'{re.escape(fmt)}'"):
            use()
    for consume in (pai.from_dataframe, pd.api.interchange.from_dataframe):
        with pytest.raises(NotImplementedError, match=f"column '{name}'"):
            consume(_Only(ix))


@pytest.mark.parametrize(
    "values",
    [
        pa.array([D("1.5"), None, D("1.5"), D("-2.0")], pa.decimal128(5, 1)),
        pa.array([b"a", None, b"a", b"bc"]),
        pa.array([1, None, 1, 3], pa.time32("s")),
    ],
    ids=["decimal", "binary", "time"],
)
def test_dictionaries_of_the_new_types(values):
    arr = values.dictionary_encode()
    ix = dfbuffer.to_interchange(pa.table({"c": arr}))
    col = ix.get_column(0)
    assert col.dtype[0] == DtypeKind.CATEGORICAL
    # pandas reads the categories' values through the view's converters
    got = pd.api.interchange.from_dataframe(_Only(ix))["c"].tolist()
    assert [None if v is None or v != v else v for v in got] == values.to_pylist()
    cats = col.describe_categorical["categories"]
    if pa.types.is_time(values.type):
        assert cats.dtype == (DtypeKind.DATETIME, 32, "tts", "=")
        return
    # the categories have no dtype: the error names the column
    with pytest.raises(NotImplementedError, match="column 'c'"):
        _ = cats.dtype
    with pytest.raises(NotImplementedError, match="column 'c'"):
        pai.from_dataframe(_Only(ix))


def _mixed() -> pa.Table:
    return pa.table({
        "x": [1, 2, 3],
        "d": UNSUPPORTED["decimal"][0],
        "t": pa.array([1, None, 3], pa.time64("us")),
        "l": UNSUPPORTED["list"][0],
        "dd": UNSUPPORTED["decimal"][0].dictionary_encode(),
        "ds": pa.array(["a", None, "a"]).dictionary_encode(),
        "rs": _ree(["a", "a", "b"]),
        "ri": _ree([1, 1, 2]),
        "s": ["a", None, "c"],
    })


def test_on_unsupported_skip_leaves_out_exactly_the_columns_without_a_dtype():
    t = _mixed()
    ix = dfbuffer.to_interchange(t, on_unsupported="skip")
    assert ix.column_names() == ["x", "t", "ds", "ri", "s"]
    assert ix.num_rows() == 3 and ix.num_chunks() == 1
    want = t.select(["x", "ds", "ri", "s"]).to_pylist()
    assert pai.from_dataframe(_Only(ix.select_columns([0, 2, 3, 4]))).to_pylist() == want
    df = pd.api.interchange.from_dataframe(_Only(ix.select_columns_by_name(["x", "ri", "s"])))
    assert df["ri"].tolist() == [1, 1, 2] and df["x"].tolist() == [1, 2, 3]
    # with columns=: the selection, then the skip; "raise" keeps every column
    sel = dfbuffer.to_interchange(t, columns=["l", "s", "d"], on_unsupported="skip")
    assert sel.column_names() == ["s"]
    assert dfbuffer.to_interchange(t).column_names() == t.column_names
    with pytest.raises(ValueError, match="on_unsupported must be 'raise' or 'skip'"):
        dfbuffer.to_interchange(t, on_unsupported="drop")


def test_to_arrow_hands_out_the_flat_types_without_a_dtype():
    # and a null column: an array of no buffers
    t = _mixed().select(["x", "d", "t", "dd", "ri"]).append_column(
        "b", UNSUPPORTED["binary"][0]).append_column(
        "i", UNSUPPORTED["interval"][0]).append_column(
        "w", UNSUPPORTED["fixed_binary"][0]).append_column("n", pa.nulls(3))
    out = pa.table(dfbuffer.to_arrow(t))
    assert out.column_names == t.column_names
    for name in ("d", "t", "dd", "b", "i", "w", "n"):
        assert out.column(name).type == t.column(name).type, name
    assert out.column("ri").type == t.column("ri").type  # handed out as it is
    assert out.to_pylist() == t.to_pylist()
    # zero-copy: the decimal and binary buffers are the producer's
    for name, k in (("d", 1), ("b", 2)):
        addr = t.column(name).chunk(0).buffers()[k].address
        assert out.column(name).chunk(0).buffers()[k].address == addr
    via_view = pa.table(dfbuffer.to_arrow(dfbuffer.to_interchange(t)))
    assert via_view.to_pylist() == t.to_pylist()
    lists = pa.table(dfbuffer.to_arrow(_mixed(), columns=["l"]))
    assert lists.column("l").to_pylist() == _mixed().column("l").to_pylist()


def test_decoded_runs_outlive_the_source_and_cycles_are_collected():
    ree = _ree(np.repeat(np.arange(1000, dtype=np.int64), 3))
    ix = dfbuffer.to_interchange(pa.table({"r": ree}))
    buf, _ = ix.get_column(0).get_buffers()["data"]
    ref = weakref.ref(ree)
    del ree, ix
    gc.collect()
    assert ref() is None  # the decoded values are dfbuffer's own memory
    assert np.frombuffer(memoryview(buf), np.int64)[::3].tolist() == list(range(1000))
    # a reference cycle through the view is collected with its buffers
    ix = dfbuffer.to_interchange(pa.table({"r": _ree([5, 5, 6])}))
    holder = {"ix": ix}
    holder["self"] = holder
    ix.cycle = holder
    wref = weakref.ref(ix)
    del ix, holder
    gc.collect()
    assert wref() is None


def test_racing_run_ends_through_the_view():
    ree, expected, target = run_ends_target()

    def convert():
        ix = dfbuffer.to_interchange(pa.table({"r": ree}))
        return pai.from_dataframe(_Only(ix)).column(0).to_pylist()

    def check(res) -> None:
        assert res == expected

    ok, refused = race(convert, check, [target])
    assert ok + refused == 8


def test_bool8_extension_is_served_as_byte_bools():
    if not hasattr(pa, "bool8"):
        pytest.skip("pyarrow < 18 has no bool8")
    arr = pa.ExtensionArray.from_storage(pa.bool8(), pa.array([1, None, 0, 1], pa.int8()))
    ix = dfbuffer.to_interchange(pa.table({"b": arr}))
    col = ix.get_column(0)
    assert col.dtype == (DtypeKind.BOOL, 8, "b", "=")
    data, dtype = col.get_buffers()["data"]
    assert dtype == (DtypeKind.BOOL, 8, "b", "=")
    assert data.ptr == arr.storage.buffers()[1].address  # zero-copy
    want = [True, None, False, True]
    assert pai.from_dataframe(_Only(ix)).column("b").to_pylist() == want
    assert as_list(dfbuffer.from_dataframe(_Only(ix))["b"]) == want
    # pandas' consumer reads the bytes (its nulls become False: requirements.md)
    got = pd.api.interchange.from_dataframe(_Only(ix))["b"].tolist()
    assert [g for g, w in zip(got, want, strict=True) if w is not None] == [True, False, True]
