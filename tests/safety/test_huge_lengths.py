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
        (pa.array([True]), ValueError),  # bools: int64 codes too, then to_matrix's decode
    ],
    ids=["int64", "int8", "null-int16", "string", "bool"],
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


def _no_buffer_arrays() -> dict:
    out = {}
    for n, label in ((2**40, "2**40"), (2**61, "2**61")):  # a size that fits int64, and not
        out[f"null-{label}"] = pa.Array.from_buffers(pa.null(), n, [None])
        out[f"struct-no-children-{label}"] = pa.StructArray.from_buffers(
            pa.struct([]), n, [None], children=[])
    return out


@pytest.mark.parametrize("entry", [e for e in ENTRY_POINTS if e != "to_interchange"])
@pytest.mark.parametrize("case", list(_no_buffer_arrays()))
def test_arrays_without_buffers_are_refused_before_numpy_allocates(entry, case):
    # NumPy was asked for 2**61 values (to_matrix: 2**40 rows of 8 bytes): a MemoryError on
    # a regular build, but an abort under ASan (requested allocation size exceeds maximum
    # supported size)
    arr = _no_buffer_arrays()[case]
    arr.validate(full=True)
    if entry == "structs=flatten" and case.startswith("struct-no-children"):
        assert ENTRY_POINTS[entry](pa.table({"r": arr})) == {}  # no leaves
        return
    with pytest.raises((MemoryError, ValueError, TypeError)) as info:
        ENTRY_POINTS[entry](pa.table({"r": arr}))
    assert info.type is not TypeError or entry == "to_matrix"


def test_pandas_refuses_a_nested_column_beyond_memory():
    # pyarrow's to_pandas of a list view over 2**40 rows (twice) allocated until the
    # process was killed
    n = 2**40
    child = pa.StructArray.from_buffers(pa.struct([]), n, [None], children=[])
    views = pa.LargeListViewArray.from_arrays(pa.array([0, 0], pa.int64()),
                                              pa.array([n, n], pa.int64()), child)
    views.validate(full=True)
    with pytest.raises(MemoryError, match="'c'"):
        dfbuffer.pandas.from_dataframe(pa.table({"c": views}))


def test_pandas_converts_a_list_view_column_of_no_chunks():
    # pyarrow 26 aborts in to_pandas of a list view ChunkedArray with no chunks
    t = pa.table({"c": pa.chunked_array([], pa.large_list_view(pa.int8())),
                  "d": pa.chunked_array([], pa.list_(pa.int8()))})
    got = dfbuffer.pandas.from_dataframe(t)
    assert list(got.columns) == ["c", "d"] and len(got) == 0


def test_pandas_counts_list_view_sizes_without_wrapping():
    # sizes summing past 2**63 (int64 arithmetic wrapped negative and let pyarrow loop
    # over 2**63 rows of a fixed-size list of width 0)
    n = 2**63 - 1
    child = pa.FixedSizeListArray.from_buffers(pa.list_(pa.int8(), 0), n, [None],
                                               children=[pa.array([], pa.int8())])
    views = pa.LargeListViewArray.from_arrays(pa.array([n - 64, n - 2, 0, 0], pa.int64()),
                                              pa.array([63, 1, n - 64, 3], pa.int64()), child)
    views.validate(full=True)
    with pytest.raises(MemoryError, match="'c'"):
        dfbuffer.pandas.from_dataframe(pa.table({"c": views}))


# --- sizes a producer claims over a raw address ------------------------------------------
# An __array_interface__ whose data is an integer address hands over no length to check
# its shape against: dfbuffer takes the shape (a Buffer over it is a view, nothing is
# read), but every copy sized by it is refused with MemoryError before the allocation
# when no machine holds it (ASan aborted on the 8 TiB requests: allocation-size-too-big).


class _ClaimsTerabytes:
    """2**40 float64 over a 32-byte array: 8 TiB claimed."""

    def __init__(self, shape: tuple[int, ...] = (2**40,), strides: tuple | None = None) -> None:
        import numpy as np

        self.small = np.zeros(4)
        self.__array_interface__ = {"shape": shape, "typestr": "<f8", "version": 3,
                                    "data": (self.small.ctypes.data, False),
                                    "strides": strides}


COPIES = {
    "pickle protocol 4": lambda b: __import__("pickle").dumps(b, protocol=4),
    "pickle protocol 5 (strided)": lambda b: __import__("pickle").dumps(b, protocol=5),
    "__dlpack__(copy=True)": lambda b: b.__dlpack__(max_version=(1, 0), copy=True),
    "__array__(copy=True)": lambda b: b.__array__(copy=True),
    "__array__(dtype)": lambda b: b.__array__(dtype="f4"),
}


CLAIMS = {"1-D": ((2**40,), None), "2-D": ((2**20, 2**20), None), "strided": ((2**40,), (16,))}


@pytest.mark.parametrize(
    ("copy", "claim"),
    # a contiguous Buffer pickles out of band with protocol 5, without a copy
    [(c, k) for c in COPIES for k in CLAIMS
     if c != "pickle protocol 5 (strided)" or k == "strided"],
)
def test_a_claimed_size_beyond_memory_is_refused_before_copying(copy, claim):
    shape, strides = CLAIMS[claim]
    b = dfbuffer.Buffer.from_object(_ClaimsTerabytes(shape, strides))
    assert b.shape == shape  # taken as given: a view reads nothing
    with pytest.raises(MemoryError):
        COPIES[copy](b)


@pytest.mark.parametrize(
    ("shape", "strides"),
    [((2,), (2**63 - 8,)), ((2,), (-(2**62),)), ((2**62, 4), None)],
    ids=["past-ssize-max", "below-address-zero", "bytes-overflow"],
)
def test_a_claimed_extent_outside_the_address_space_is_refused(shape, strides):
    # no memory lies there: refused when the Buffer is made, before anything else
    with pytest.raises(OverflowError):
        dfbuffer.Buffer.from_object(_ClaimsTerabytes(shape, strides))


@pytest.mark.parametrize("shape", [(2**31, 2**31, 2**31), (2**62,), (2**40, 0, 2**40),
                                   (2**60, 2**3), (2**50,)])
def test_the_dlpack_exchange_allocator_checks_the_shape_product(shape):
    """The DLPack C exchange API's allocator multiplies a caller's dims (and the itemsize)
    through core's checked helpers and refuses more than physical memory before calling
    calloc: an overflowing or unallocatable size is reported through SetError, a zero-size
    one is allocated."""
    import ctypes

    from _dlpack_ctypes import DLTensor
    from _dlpack_exchange_ctypes import SET_ERROR, Own

    own = Own()
    errors: list = []
    set_error = SET_ERROR(lambda ctx, kind, msg: errors.append(kind))
    proto = DLTensor()
    proto.device.device_type, proto.ndim = 1, len(shape)
    proto.dtype.code, proto.dtype.bits, proto.dtype.lanes = 2, 64, 1
    dims = (ctypes.c_int64 * len(shape))(*shape)
    proto.shape = dims
    out = ctypes.c_void_p()
    rc = own.alloc(ctypes.addressof(proto), ctypes.byref(out), None,
                   ctypes.cast(set_error, ctypes.c_void_p))
    if 0 in shape:
        assert rc == 0 and errors == []
        assert own.to_buffer(out.value).shape == shape
    else:
        assert rc == -1 and out.value is None
        assert errors in ([b"ValueError"], [b"MemoryError"])
