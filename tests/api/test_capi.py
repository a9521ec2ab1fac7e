"""The public C API (dfbuffer/dfbuffer.h), used by real consumer extensions built here, at
test time, against the installed package: ``dfbuffer.get_include()`` is their only include
path (tests/capi_build.py).  The consumers (tests/capi_consumer/) own malloc'd memory and
Arrow arrays they build in C, and count when they are freed and released."""

from __future__ import annotations

import gc
import os
import re
import shutil
import subprocess
import weakref

import numpy as np
import pandas as pd
import pyarrow as pa
import pytest
from capi_build import consumers
from child_processes import scratch_dir

import dfbuffer

# Every consumer is compiled by one child process (tests/child_processes.py), started as
# the tests below are collected, in the order they need them: the builds run while the
# tests before this module run.
_C = {"cpp": False, "cython": False, "opt": "-O1"}
_BUILD_JOB, _BUILDS = consumers(
    {
        "c": ("capi_consumer", "consumer.c", (), _C),
        "newer": ("capi_newer", "consumer.c", [("DFBUFFER_TARGET_VERSION", "3")], _C),
        "abi2": ("capi_abi2", "consumer.c", [("DFBUFFER_ABI_VERSION", "2")], _C),
        "older": ("capi_older", "consumer.c", [("DFBUFFER_TARGET_VERSION", "1")], _C),
        "multi": ("capi_multi", ["multi_a.c", "multi_b.c"], (), _C),
        "cpp": ("capi_consumer_cpp", "consumer_cpp.cpp", (), _C | {"cpp": True}),
        "cy": ("consumer_cy", "consumer_cy.pyx", (), _C | {"cython": True}),
    },
    lambda: scratch_dir() / "capi",
)
pytestmark = pytest.mark.child_process(_BUILD_JOB)


@pytest.fixture(scope="session")
def cons():
    """The C consumer (built once per test run)."""
    return _BUILDS["c"].load()


@pytest.fixture(scope="session")
def cons_cpp():
    return _BUILDS["cpp"].load()


@pytest.fixture(scope="session")
def cons_cy():
    pytest.importorskip("Cython")
    return _BUILDS["cy"].load()


def collect():
    for _ in range(3):
        gc.collect()


def counters(cons):
    collect()
    return cons.counters()


# ---------------------------------------------------------------- the header and the table


def test_only_the_public_header_is_shipped():
    inc = dfbuffer.get_include()
    assert sorted(os.listdir(inc)) == ["dfbuffer"]
    assert sorted(os.listdir(os.path.join(inc, "dfbuffer"))) == [
        "arrow_c_interface.h",
        "dfbuffer.h",
    ]

    def includes(name: str) -> list[str]:
        with open(os.path.join(inc, "dfbuffer", name)) as f:
            return re.findall(r"^\s*#\s*include\s*(\S+)", f.read(), re.M)

    assert includes("dfbuffer.h") == ["<Python.h>", "<stdint.h>", '"arrow_c_interface.h"']
    assert includes("arrow_c_interface.h") == ["<stdint.h>"]


def test_capsule_and_numbers(cons):
    cap = dfbuffer._interchange._C_API
    assert type(cap).__name__ == "PyCapsule"
    assert "dfbuffer._interchange._C_API" in repr(cap)
    assert cons.api() == (1, 2, 2)  # runtime ABI, runtime version, consumer's target


def test_type_object_and_check(cons):
    assert cons.buffer_type() is dfbuffer.Buffer
    b = cons.make_block(3)
    assert type(b) is dfbuffer.Buffer
    assert cons.is_buffer(b) is True
    assert cons.is_buffer(np.arange(3)) is False
    assert cons.is_buffer(None) is False


def test_extension_exports_only_its_init():
    nm = shutil.which("nm")
    if nm is None:
        pytest.skip("no nm on this machine")
    out = subprocess.run(
        [nm, "-D", "--defined-only", dfbuffer._interchange.__file__],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    names = [line.split()[-1] for line in out.splitlines() if line.strip()]
    assert names == ["PyInit__interchange"]


# ---------------------------------------------------------------- Buffers over C memory


def test_buffer_over_malloc_memory(cons):
    b = cons.make_block(5)
    np.testing.assert_array_equal(np.asarray(b), np.arange(5.0))
    info = cons.info(b)
    assert info["ptr"] == info["data"] == b.ptr
    assert info["bufsize"] == b.bufsize == 40
    assert (info["itemsize"], info["ndim"], info["shape"], info["strides"]) == (8, 1, (5,), (8,))
    assert (info["device_type"], info["device_id"]) == (1, 0) == tuple(b.__dlpack_device__())
    assert info["readonly"] == 0 and b.readonly is False
    assert info["native"] == int(dfbuffer.NativeFormat.RAW) == int(b.native)
    assert (info["kind"], info["byteorder"]) == ("f", "=")
    assert info["dtype"] == np.dtype("float64") == b.dtype
    assert info["owner"] is b.owner
    assert type(b.owner).__name__ == "PyCapsule"
    # writable memory: a write through NumPy lands in the C block
    a = np.asarray(b)
    a[0] = 42.0
    assert np.asarray(b)[0] == 42.0


def test_readonly_buffer_gives_readonly_views(cons):
    b = cons.make_block(4, 1)
    assert b.readonly is True and cons.info(b)["readonly"] == 1
    assert not np.asarray(b).flags.writeable
    assert memoryview(b).readonly
    with pytest.raises(ValueError):
        np.asarray(b)[0] = 1.0


def test_from_data_with_negative_stride(cons):
    b = cons.make_reversed(5)
    np.testing.assert_array_equal(np.asarray(b), [4, 3, 2, 1, 0])
    info = cons.info(b)
    assert info["strides"] == (-4,)
    assert info["data"] == info["ptr"] + 16
    assert info["bufsize"] == 20
    assert info["readonly"] == 1


@pytest.mark.parametrize(
    "which, exc, match",
    [
        (0, ValueError, "more than bufsize"),
        (1, TypeError, "plain numbers only"),
        (2, TypeError, "owner is NULL"),
        (3, TypeError, "not understood"),
        (4, TypeError, "expects a dfbuffer.Buffer"),
    ],
)
def test_bad_arguments_raise(cons, which, exc, match):
    with pytest.raises(exc, match=match):
        cons.make_bad(which)


def test_last_numpy_view_frees_the_block(cons):
    base = counters(cons)
    b = cons.make_block(1000)
    wb = weakref.ref(b)
    a = np.asarray(b)
    m = memoryview(b)
    d = np.from_dlpack(b)
    del b
    collect()
    assert wb() is not None  # the views keep the Buffer
    assert counters(cons)["blocks_freed"] == base["blocks_freed"]
    del a, m
    assert counters(cons)["blocks_freed"] == base["blocks_freed"]
    assert d[999] == 999.0
    del d
    after = counters(cons)
    assert wb() is None
    assert after["blocks_freed"] == base["blocks_freed"] + 1
    assert after["blocks_live"] == base["blocks_live"]


def test_reference_cycle_through_the_owner_is_collected(cons):
    base = counters(cons)
    holder = []
    b = cons.make_owned(10, holder)
    holder.append(b)  # Buffer -> owner tuple -> list -> Buffer
    wb = weakref.ref(b)
    del b, holder
    after = counters(cons)
    assert wb() is None
    assert after["blocks_freed"] == base["blocks_freed"] + 1


def test_as_ndarray(cons):
    b = cons.make_block(3)
    a = cons.as_ndarray(b)
    assert a.base is b
    np.testing.assert_array_equal(a, [0.0, 1.0, 2.0])
    with pytest.raises(TypeError, match="expects a dfbuffer.Buffer"):
        cons.as_ndarray(np.arange(3))


def test_from_object(cons):
    x = np.arange(6, dtype=np.int64)
    b = cons.from_object(x)
    assert type(b) is dfbuffer.Buffer and b.owner is x
    assert b.native == dfbuffer.NativeFormat.NUMPY
    assert cons.from_object(x, np.dtype("u8")).dtype == np.dtype("u8")
    with pytest.raises(TypeError):
        cons.from_object(object())


def test_from_object_reads_arrow_array_and_array_methods(cons):
    # the C entry follows Buffer.from_object's protocol registry, allow_copy=True
    arr = pd.array([1, None, 3], dtype="Int64")
    assert cons.from_object(arr).native == dfbuffer.NativeFormat.ARROW

    class Copies:
        def __array__(self, dtype=None, copy=None):
            if copy is False:
                raise ValueError("needs a copy")
            return np.array([4.0])

    b = cons.from_object(Copies())
    assert b.readonly and b.native == dfbuffer.NativeFormat.NUMPY
    assert np.asarray(b).tolist() == [4.0]


# ---------------------------------------------------------------- converters


def test_pandas_column(cons):
    df = pd.DataFrame({"x": [1.5, 2.5, 3.5], "n": pd.array([1, None, 3], dtype="Int64")})
    ix = df.__dataframe__()
    x = cons.column_to_ndarray(ix.get_column_by_name("x"))
    np.testing.assert_array_equal(x, [1.5, 2.5, 3.5])
    assert np.shares_memory(x, df["x"].to_numpy())
    n = cons.column_to_ndarray(ix.get_column_by_name("n"))
    assert isinstance(n, np.ma.MaskedArray) and n.mask.tolist() == [False, True, False]
    with pytest.raises(ValueError):
        cons.column_to_ndarray(ix.get_column_by_name("n"), 2)  # DFBUFFER_NULLS_RAISE
    with pytest.raises(ValueError, match="nulls must be"):
        cons.column_to_ndarray(ix.get_column_by_name("x"), 7)
    with pytest.raises(TypeError):
        cons.column_to_ndarray(object())


def test_pyarrow_column(cons):
    arr = pa.array([1.0, None, 3.0])
    got = cons.column_to_ndarray(arr)
    assert got.mask.tolist() == [False, True, False]
    filled = cons.column_to_ndarray(arr, 1)  # DFBUFFER_NULLS_FILL
    assert np.isnan(filled[1]) and filled[2] == 3.0


def test_from_dataframe_pandas_and_pyarrow(cons):
    df = pd.DataFrame({"a": [1, 2, 3], "s": ["x", None, "z"]})
    for obj in (df, df.__dataframe__(), pa.table(df)):
        got = cons.from_dataframe(obj)
        want = dfbuffer.from_dataframe(obj)
        assert list(got) == list(want) == ["a", "s"]
        for k in got:
            np.testing.assert_array_equal(got[k], want[k])


def test_buffer_to_ndarray(cons):
    df = pd.DataFrame({"x": np.arange(10, dtype=np.int32)})
    buf, dtype = df.__dataframe__().get_column(0).get_buffers()["data"]
    got = cons.buffer_to_ndarray(buf, dtype, 2, 3)
    np.testing.assert_array_equal(got, [2, 3, 4])
    np.testing.assert_array_equal(cons.buffer_to_ndarray(buf, dtype), np.arange(10))


# ---------------------------------------------------------------- Arrow C data interface


def test_arrow_array_built_in_c(cons):
    base = counters(cons)
    a = cons.arrow_column(10)  # no nulls: zero-copy over the C values
    np.testing.assert_array_equal(a, np.arange(0, 100, 10))
    c = counters(cons)
    assert c["arrays_made"] == base["arrays_made"] + 1
    assert c["schemas_released"] == base["schemas_released"] + 1  # not needed by the result
    assert c["arrays_released"] == base["arrays_released"]  # the result views it
    view = a[2:]
    del a
    assert counters(cons)["arrays_released"] == base["arrays_released"]
    assert view[0] == 20
    del view
    assert counters(cons)["arrays_released"] == base["arrays_released"] + 1


def test_arrow_array_with_nulls(cons):
    base = counters(cons)
    m = cons.arrow_column(7, 1)
    assert isinstance(m, np.ma.MaskedArray)
    assert m.mask.tolist() == [False, False, True, False, False, True, False]
    assert m.compressed().tolist() == [0, 10, 30, 40, 60]
    with pytest.raises(ValueError):
        cons.arrow_column(7, 1, 0, 2)  # DFBUFFER_NULLS_RAISE
    del m
    c = counters(cons)
    assert c["arrays_released"] - base["arrays_released"] == 2
    assert c["schemas_released"] - base["schemas_released"] == 2


@pytest.mark.parametrize(
    "mode, nulls_arg, fmt, exc",
    [
        (1, 0, "l", ValueError),  # schema already released
        (2, 0, "l", ValueError),  # array already released
        (0, 9, "l", ValueError),  # bad nulls argument
        (0, 0, "+l", (ValueError, NotImplementedError)),  # a list without its child
        (0, 0, "no such format", NotImplementedError),
    ],
)
def test_arrow_errors_release_exactly_once(cons, mode, nulls_arg, fmt, exc):
    base = counters(cons)
    with pytest.raises(exc):
        cons.arrow_column(5, 0, mode, nulls_arg, fmt)
    c = counters(cons)
    # every struct built was released exactly once (by the consumer when it passed a released
    # one, by dfbuffer otherwise), and the consumer saw both marked released (no SystemError)
    assert c["arrays_made"] - base["arrays_made"] == 1
    assert c["arrays_released"] - base["arrays_released"] == 1
    assert c["schemas_made"] - base["schemas_made"] == 1
    assert c["schemas_released"] - base["schemas_released"] == 1


@pytest.mark.parametrize(
    "make",
    [
        lambda: pa.record_batch({"a": [1, None, 3], "s": ["x", "y", None]}),
        lambda: pa.StructArray.from_arrays(
            [pa.array([1, None, 3]), pa.array(["x", "y", None])],
            names=["a", "s"],
            mask=pa.array([False, True, False]),
        ),
        lambda: pa.array([], type=pa.struct([("a", pa.int64())])),
    ],
    ids=["record_batch", "struct_with_nulls", "empty"],
)
def test_arrow_struct_array_is_a_column_of_dicts(cons, make):
    # the C API gives what column_to_ndarray gives: one object column of dicts
    want = dfbuffer.column_to_ndarray(make())
    base = counters(cons)
    got = cons.arrow_capsules(*make().__arrow_c_array__())
    assert got.dtype == object and want.dtype == object
    assert type(got) is type(want)
    assert got.tolist() == want.tolist()
    np.testing.assert_array_equal(np.ma.getmaskarray(got), np.ma.getmaskarray(want))
    del got
    assert counters(cons)["blocks_live"] == base["blocks_live"]


def test_arrow_struct_built_in_c_to_ndarray(cons):
    base = counters(cons)
    got = cons.arrow_batch(3, 4, 0)  # DfBuffer_ArrowToNdarray on the "+s" array
    assert got.dtype == object and got.shape == (4,)
    assert got.tolist() == [{"c0": v, "c1": v, "c2": v} for v in range(0, 40, 10)]
    del got
    c = counters(cons)
    # the struct array and its 3 children, each released once (the dicts hold copies)
    assert c["arrays_released"] - base["arrays_released"] == 4
    assert c["schemas_released"] - base["schemas_released"] == 4


def test_arrow_record_batch_built_in_c(cons):
    base = counters(cons)
    d = cons.arrow_batch(50, 7)
    assert list(d) == [f"c{i}" for i in range(50)]
    for v in d.values():
        np.testing.assert_array_equal(v, np.arange(0, 70, 10))
    keep = d["c49"]
    del d, v
    assert counters(cons)["arrays_released"] == base["arrays_released"]
    del keep
    c = counters(cons)
    # the struct array and its 50 children, each released once, through the struct's release
    assert c["arrays_released"] - base["arrays_released"] == 51
    assert c["schemas_released"] - base["schemas_released"] == 51


def test_pyarrow_structs_moved_in_and_memory_returned(cons):
    arr = pa.array(range(100_000), type=pa.float64())  # pyarrow-allocated memory
    caps = arr.__arrow_c_array__()
    del arr
    collect()
    before = pa.total_allocated_bytes()
    got = cons.arrow_capsules(*caps)
    del caps  # the capsules are empty now: dfbuffer holds the array
    collect()
    # the values stay allocated (only the schema's few bytes went)
    assert before - 4096 < pa.total_allocated_bytes() <= before
    assert got[99_999] == 99_999.0
    del got
    collect()
    assert pa.total_allocated_bytes() <= before - 800_000


def test_pyarrow_record_batch_and_stream(cons):
    t = pa.table({"i": [1, 2, 3, 4], "s": ["a", None, "c", "d"]})
    (d,) = [cons.arrow_capsules(*t.to_batches()[0].__arrow_c_array__(), 1)]
    assert d["i"].tolist() == [1, 2, 3, 4]
    assert d["s"].tolist() == ["a", None, "c", "d"]
    t2 = pa.concat_tables([t, t])
    d2 = cons.arrow_stream(t2.__arrow_c_stream__())  # chunks concatenated
    assert d2["i"].tolist() == [1, 2, 3, 4] * 2
    assert d2["s"].tolist() == ["a", None, "c", "d"] * 2
    batches = cons.arrow_batches(t2.__arrow_c_stream__())
    assert len(batches) == t2.column("i").num_chunks == 2
    merged = np.concatenate([b["i"] for b in batches])
    assert merged.tolist() == [1, 2, 3, 4, 1, 2, 3, 4]


# ---------------------------------------------------------------- versions


def test_newer_consumer_fails_with_both_numbers():
    with pytest.raises(ImportError) as ei:
        _BUILDS["newer"].load()
    msg = str(ei.value)
    assert "ABI 1, API version 3 or later" in msg
    assert "provides ABI 1, API version 2" in msg
    assert "upgrade dfbuffer" in msg


def test_other_abi_fails():
    with pytest.raises(ImportError) as ei:
        _BUILDS["abi2"].load()
    msg = str(ei.value)
    assert "compiled for ABI 2" in msg and "provides ABI 1" in msg
    assert "rebuild the extension" in msg


def test_older_consumer_works():
    old = _BUILDS["older"].load()
    assert old.api() == (1, 2, 1)
    assert not hasattr(old, "column_to_ndarray")  # version-2 macros are hidden from it
    b = old.make_block(3)
    np.testing.assert_array_equal(np.asarray(b), [0.0, 1.0, 2.0])


# ---------------------------------------------------------------- C++ and Cython


def test_two_files_share_one_table():
    multi = _BUILDS["multi"].load()
    b = multi.make(10)
    assert np.asarray(b).tolist() == list(range(10))
    assert b.owner is None and b.readonly is True


def test_cpp_consumer(cons_cpp):
    freed = cons_cpp.freed()
    b = cons_cpp.make(5)
    assert cons_cpp.ndim_itemsize(b) == (1, 2)
    a = np.asarray(b)
    assert a.dtype == np.int16 and a.tolist() == [0, 1, 2, 3, 4]
    del b
    collect()
    assert cons_cpp.freed() == freed
    del a
    collect()
    assert cons_cpp.freed() == freed + 1


def test_cython_consumer(cons_cy):
    assert cons_cy.api() == (1, 2)
    freed = cons_cy.freed()
    b = cons_cy.make(4)
    assert cons_cy.info(b) == {
        "ndim": 1,
        "shape": (4,),
        "itemsize": 8,
        "readonly": 1,
        "is_buffer": True,
    }
    a = np.asarray(b)
    del b
    collect()
    assert cons_cy.freed() == freed and a.tolist() == [0, 1, 2, 3]
    del a
    collect()
    assert cons_cy.freed() == freed + 1
    df = pd.DataFrame({"n": pd.array([1, None], dtype="Int64")})
    got = cons_cy.column(df.__dataframe__().get_column(0))
    assert got[0] == 1


def test_released_stream_is_refused(cons):
    cap = pa.table({"i": [1, 2]}).__arrow_c_stream__()
    assert cons.arrow_stream(cap)["i"].tolist() == [1, 2]
    with pytest.raises(ValueError, match="must be live"):
        cons.arrow_stream(cap)  # the first call moved it out


def test_converter_with_offsets_and_codes_rewritten(cons):
    """The C API converter while a thread rewrites a producer's string offsets and
    categorical codes (tests/racing.py): the values as validated, or a clean
    ValueError; never a crash."""
    from producers import frame, strings
    from racing import bad_offsets, category_column, offsets_of, race, string_values

    values = string_values()
    scol = strings(values)
    offs = offsets_of(scol)
    ccol, cexp, ctargets = category_column()

    def check(res) -> None:
        for got, want in ((res["s"], values), (res["c"], cexp)):
            mask = np.ma.getmaskarray(got).tolist()
            assert [None if m else v for v, m in zip(got.data.tolist(), mask, strict=True)] == want

    race(lambda: cons.from_dataframe(frame(s=scol, c=ccol)), check,
         [(offs, offs.copy(), bad_offsets(offs)), *ctargets], rounds=6)


@pytest.mark.parametrize("as_dict", [0, 1])
def test_a_run_end_array_of_2_61_rows_is_refused(cons, as_dict):
    # valid per pyarrow, 2**61 * 8 bytes decoded: ValueError before any allocation
    a = pa.RunEndEncodedArray.from_arrays([2**61], [7])
    a.validate(full=True)
    obj = pa.record_batch({"r": a}) if as_dict else a
    base = counters(cons)
    with pytest.raises(ValueError, match="overflows"):
        cons.arrow_capsules(*obj.__arrow_c_array__(), as_dict)
    c = counters(cons)
    assert c["blocks_live"] == base["blocks_live"]


# The C API's entries, each given a one-column table (or its array) holding a valid Arrow
# array whose logical length no buffer backs: name -> call.  Each moves pyarrow's structs
# in (or reads a producer), as a C consumer does.
HUGE_ENTRIES = {
    "ArrowToNdarray": lambda cons, t: cons.arrow_capsules(
        *t.column(0).chunk(0).__arrow_c_array__(), 0),
    "ArrowToDict": lambda cons, t: cons.arrow_capsules(*t.to_batches()[0].__arrow_c_array__(), 1),
    "ArrowStreamToDict": lambda cons, t: cons.arrow_stream(t.__arrow_c_stream__()),
    "ArrowToDict(batches)": lambda cons, t: cons.arrow_batches(t.__arrow_c_stream__()),
    "FromDataFrame": lambda cons, t: cons.from_dataframe(t),
    "ColumnToNdarray": lambda cons, t: cons.column_to_ndarray(t.column(0)),
}


def _huge_tables() -> dict:
    """Valid (pyarrow validates them) and tiny, with 2**61 logical rows: name -> (array, the
    exception expected, or None for ValueError or MemoryError)."""
    n = 2**61
    ree = lambda v: pa.RunEndEncodedArray.from_arrays([n], v)  # noqa: E731
    out = {
        "run_end-int64": (ree(pa.array([7])), ValueError),  # 2**61 * 8 bytes overflows
        "run_end-int8": (ree(pa.array([7], pa.int8())), MemoryError),
        "run_end-null-int16": (ree(pa.array([None], pa.int16())), MemoryError),
        "run_end-string": (ree(pa.array(["x"])), ValueError),
        "null": (pa.Array.from_buffers(pa.null(), n, [None]), None),
        "struct-no-children": (pa.StructArray.from_buffers(pa.struct([]), n, [None],
                                                           children=[]), None),
    }
    for arr, _ in out.values():
        arr.validate(full=True)
    return out


@pytest.mark.parametrize("entry", HUGE_ENTRIES)
@pytest.mark.parametrize("case", list(_huge_tables()))
def test_every_entry_refuses_a_huge_logical_length(cons, entry, case):
    # what the Python entry points refuse (tests/test_huge_lengths.py), the C API refuses
    # too: a clean ValueError / MemoryError, every struct released, nothing of the
    # consumer's leaked
    arr, error = _huge_tables()[case]
    t = pa.table({"r": arr})
    base = counters(cons)
    with pytest.raises((ValueError, MemoryError)) as info:
        HUGE_ENTRIES[entry](cons, t)
    if error is not None:
        assert info.type is error
        # a column outside a table is named '' (as column_to_ndarray names it)
        assert "column 'r'" in str(info.value) or (
            entry in ("ArrowToNdarray", "ColumnToNdarray") and "column" in str(info.value))
    del info
    c = counters(cons)
    assert c["blocks_live"] == base["blocks_live"]
