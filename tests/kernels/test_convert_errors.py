"""Broken producers get a clear Python exception of the right type from the
converters, never a crash or an out-of-bounds read (the memory behind every
broken buffer here is real, so a missing check shows as a wrong result or,
under ASan, as an error report)."""

from __future__ import annotations

import numpy as np
import pytest
from producers import (
    BITMASK_DTYPE,
    BOOL,
    BYTEMASK_DTYPE,
    CATEGORICAL,
    CUDA,
    DATETIME,
    FLOAT,
    INT,
    INT32_DTYPE,
    STRING,
    UINT8_DTYPE,
    USE_BITMASK,
    Buffer,
    Column,
    bools_bitpacked,
    categorical,
    chunked,
    frame,
    mutate,
    pack_bits,
    primitive,
    strings,
    with_mask,
)

import dfbuffer

I64 = (INT, 64, "l", "=")
UNSUPPORTED = (NotImplementedError, ValueError)


def _set(col, **kw):
    for k, v in kw.items():
        setattr(col, "_" + k, v)
    return col


def _with_data(col, buf):
    col._data = (buf, col._data[1])
    return col


def _with_validity(col, buf):
    col._validity = (buf, col._validity[1])
    return col


def _short_data():
    col = primitive(np.arange(10, dtype="i8"), offset=2)
    return _with_data(col, Buffer(col.data_buffer._x, bufsize=8 * 11))  # needs 8 * 12


def _short_bitmask():
    col = with_mask(np.arange(20, dtype="i8"), [1, 0] * 10, offset=5)
    return _with_validity(col, Buffer(pack_bits([1] * 8), bufsize=3))  # needs 4 bytes


def _short_bytemask():
    col = with_mask(np.arange(20, dtype="i8"), [1, 0] * 10, kind="bytemask", offset=5)
    return _with_validity(col, Buffer(np.ones(40, "u1"), bufsize=24))


def _short_bitpacked():
    col = bools_bitpacked([1, 0, 1] * 10, offset=9)
    return _with_data(col, Buffer(col.data_buffer._x, bufsize=4))  # needs 5 bytes


def _strings_offsets(offs, **kw):
    return strings(["ab", "cd", "ef"], offsets_override=np.array(offs), **kw)


def _str_bad_utf8():
    col = strings(["ab", "cd"])
    col.data_buffer._x[0] = 0xFF
    return col


def _str_no_offsets():
    return _set(strings(["a", "b"]), offsets=None)


def _str_data_bufsize_short():
    # the column's last offset (5) is beyond the claimed bufsize
    return strings(["ab", "cde"], data_bufsize=4)


def _dtype(dtype, data_dtype=None):
    return primitive(np.arange(4, dtype="i8"), col_dtype=dtype, data_dtype=data_dtype or dtype)


def _cuda_data():
    return primitive(np.arange(4), device=(CUDA, 0))


def _cuda_validity():
    col = with_mask(np.arange(4), [1, 0, 1, 1])
    return _with_validity(col, Buffer(col.get_buffers()["validity"][0]._x, device=(CUDA, 0)))


def _ptr_null():
    col = primitive(np.arange(4))
    return _with_data(col, Buffer(col.data_buffer._x, ptr=0))


def _weird(**kw):
    """The data buffer answers ptr, bufsize or __dlpack_device__ as given (device_exc:
    __dlpack_device__ raises it)."""
    col = primitive(np.arange(4))
    answers = {k: kw[k] for k in ("ptr", "bufsize") if k in kw}
    answers["__dlpack_device__"] = kw.get("device_exc", kw.get("device", (1, 0)))
    return _with_data(col, mutate(Buffer(col.data_buffer._x), **answers))


class _Boom(Exception):
    pass


def _raising_buffers():
    col = primitive(np.arange(3))

    def get_buffers():
        raise _Boom("producer failure")

    col.get_buffers = get_buffers
    return col


def _mixed_chunks():
    return chunked(primitive(np.arange(3, dtype="i4")), strings(["a", "b"]))


def _cat_no_categories():
    col = categorical([0, 1], strings(["a", "b"]), null="none")
    col._categorical.d["categories"] = None
    return col


def _cat_not_categorical():
    col = primitive(np.arange(3, dtype="i1"), col_dtype=(CATEGORICAL, 8, "c", "="))
    return col  # describe_categorical raises TypeError


def _no_data_key():
    col = primitive(np.arange(3))
    col.get_buffers = lambda: {"validity": None, "offsets": None}
    return col


# (id, column factory, expected exception types)
CASES = [
    ("data-bufsize-short", _short_data, ValueError),
    ("bitmask-too-short", _short_bitmask, ValueError),
    ("bytemask-too-short", _short_bytemask, ValueError),
    ("bitpacked-data-too-short", _short_bitpacked, ValueError),
    ("negative-offset", lambda: _set(primitive(np.arange(4)), offset=-1), ValueError),
    ("negative-size", lambda: _set(primitive(np.arange(4)), size=-2), ValueError),
    (
        "huge-offset",
        lambda: _set(primitive(np.arange(4)), offset=2**62),
        (ValueError, OverflowError),
    ),
    ("huge-size", lambda: _set(primitive(np.arange(4)), size=2**62), (ValueError, OverflowError)),
    ("offsets-beyond-data", lambda: _strings_offsets([0, 2, 4, 99, 103]), ValueError),
    ("offsets-decreasing", lambda: _strings_offsets([0, 4, 2, 6, 11]), ValueError),
    ("offsets-negative", lambda: _strings_offsets([-3, 2, 4, 6, 11]), ValueError),
    ("offsets-buffer-short", lambda: _strings_offsets([0, 2, 4]), ValueError),
    ("offsets-beyond-bufsize", _str_data_bufsize_short, ValueError),
    (
        "large-offsets-beyond",
        lambda: _strings_offsets([0, 2, 4, 2**40, 2**40], large=True),
        ValueError,
    ),
    ("strings-no-offsets", _str_no_offsets, ValueError),
    ("strings-bad-utf8", _str_bad_utf8, UnicodeDecodeError),
    ("unknown-kind", lambda: _dtype((99, 64, "l", "=")), UNSUPPORTED),
    # (a fixed-width kind's format string is redundant: a consumer may trust
    # kind and width there; for datetimes and strings the format is the type)
    ("unknown-datetime-format", lambda: _dtype((DATETIME, 64, "tq:", "=")), UNSUPPORTED),
    ("datetime-format-not-time", lambda: _dtype((DATETIME, 64, "l", "=")), UNSUPPORTED),
    (
        "binary-string-format",
        lambda: _set(strings(["a"]), dtype=(STRING, 8, "z", "=")),
        UNSUPPORTED,
    ),
    ("binary-format", lambda: _dtype((STRING, 8, "z", "=")), UNSUPPORTED),
    ("decimal-format", lambda: _dtype((FLOAT, 128, "d:38,4", "=")), UNSUPPORTED),
    ("float-width-128", lambda: _dtype((FLOAT, 128, "g", "=")), UNSUPPORTED),
    ("int-width-3", lambda: _dtype((INT, 3, "l", "=")), UNSUPPORTED),
    ("bad-endianness", lambda: _dtype((INT, 64, "l", "x")), UNSUPPORTED),
    ("dtype-not-tuple", lambda: _dtype("int64"), (TypeError, ValueError)),
    ("dtype-short-tuple", lambda: _dtype((INT, 64)), (TypeError, ValueError)),
    ("dtype-kind-not-int", lambda: _dtype(("INT", 64, "l", "=")), (TypeError, ValueError)),
    ("bad-null-kind", lambda: _set(primitive(np.arange(3)), null=(9, None)), UNSUPPORTED),
    (
        "bad-mask-null-value",
        lambda: _set(with_mask([1, 2], [1, 0]), null=(USE_BITMASK, 5)),
        ValueError,
    ),
    (
        "bitmask-without-validity",
        lambda: _set(with_mask([1, 2], [1, 0]), validity=None),
        ValueError,
    ),
    ("cuda-data", _cuda_data, BufferError),
    ("cuda-validity", _cuda_validity, BufferError),
    ("device-raises", lambda: _weird(device_exc=_Boom("no device")), _Boom),
    ("device-garbage", lambda: _weird(device="cpu"), (TypeError, ValueError)),
    ("ptr-not-int", lambda: _weird(ptr="0x1234"), TypeError),
    ("ptr-negative", lambda: _weird(ptr=-8), (ValueError, OverflowError)),
    ("ptr-null", _ptr_null, ValueError),
    ("bufsize-negative", lambda: _weird(bufsize=-1), (ValueError, OverflowError)),
    ("bufsize-not-int", lambda: _weird(bufsize=32.0), TypeError),
    ("get-buffers-raises", _raising_buffers, _Boom),
    ("no-data-key", _no_data_key, (KeyError, ValueError, TypeError)),
    ("chunks-mixed-types", _mixed_chunks, (ValueError, TypeError, NotImplementedError)),
    (
        "categorical-no-categories",
        _cat_no_categories,
        (TypeError, ValueError, NotImplementedError),
    ),
    ("categorical-describe-raises", _cat_not_categorical, (TypeError, ValueError)),
    (
        "categorical-code-out-of-range",
        lambda: categorical([0, 7], strings(["a", "b"]), null="none"),
        (ValueError, IndexError),
    ),
    (
        "categorical-negative-code-not-null",
        lambda: categorical([0, -2], strings(["a", "b"]), null="none"),
        (ValueError, IndexError),
    ),
]


@pytest.mark.parametrize("nulls", ["mask", "fill"])
@pytest.mark.parametrize("make,exc", [pytest.param(m, e, id=i) for i, m, e in CASES])
def test_broken_columns(make, exc, nulls):
    col = make()
    with pytest.raises(exc):
        dfbuffer.column_to_ndarray(col, nulls=nulls)


@pytest.mark.parametrize("make,exc", [pytest.param(m, e, id=i) for i, m, e in CASES[:16]])
def test_broken_columns_in_from_dataframe(make, exc):
    with pytest.raises(exc):
        dfbuffer.from_dataframe(frame(a=primitive(np.arange(3)), b=make()))


def test_cuda_error_names_the_device():
    with pytest.raises(BufferError, match="(?i)device|cuda"):
        dfbuffer.column_to_ndarray(_cuda_data())


# --------------------------------------------------------------------------
# buffer_to_ndarray


def _buf():
    return Buffer(np.arange(10, dtype="i8"))


BUFFER_CASES = [
    ("offset-negative", dict(offset=-1), ValueError),
    ("length-negative", dict(length=-1), ValueError),
    ("offset-past-end", dict(offset=11), ValueError),
    ("length-past-end", dict(offset=3, length=8), ValueError),
    ("huge-length", dict(length=2**62), (ValueError, OverflowError)),
    ("huge-offset", dict(offset=2**62, length=1), (ValueError, OverflowError)),
    ("overflowing-sum", dict(offset=2**63 - 1, length=2**63 - 1), (ValueError, OverflowError)),
    ("offset-float", dict(offset=1.5), TypeError),
    ("length-str", dict(length="3"), TypeError),
]


@pytest.mark.parametrize("kw,exc", [pytest.param(k, e, id=i) for i, k, e in BUFFER_CASES])
def test_buffer_to_ndarray_bounds(kw, exc):
    with pytest.raises(exc):
        dfbuffer.buffer_to_ndarray(_buf(), I64, **kw)


@pytest.mark.parametrize(
    "dtype,exc",
    [
        pytest.param("not-a-dtype", TypeError, id="bad-numpy-dtype"),
        pytest.param((99, 8, "C", "="), UNSUPPORTED, id="unknown-kind"),
        pytest.param((INT, 7, "l", "="), UNSUPPORTED, id="odd-width"),
        pytest.param(object, (TypeError, ValueError), id="object-dtype"),
        pytest.param((1, 2), (TypeError, ValueError), id="short-tuple"),
    ],
)
def test_buffer_to_ndarray_bad_dtype(dtype, exc):
    with pytest.raises(exc):
        dfbuffer.buffer_to_ndarray(_buf(), dtype)


def test_buffer_to_ndarray_bitmask_bounds():
    buf = Buffer(np.zeros(2, "u1"))
    with pytest.raises(ValueError):
        dfbuffer.buffer_to_ndarray(buf, BITMASK_DTYPE, offset=9, length=8)
    res = dfbuffer.buffer_to_ndarray(buf, BITMASK_DTYPE, offset=8, length=8)
    assert res.shape == (8,)


def test_buffer_to_ndarray_cuda():
    buf = Buffer(np.arange(4), device=(CUDA, 1))
    with pytest.raises(BufferError, match="(?i)device|cuda"):
        dfbuffer.buffer_to_ndarray(buf, I64)


@pytest.mark.parametrize(
    "obj,exc",
    [
        pytest.param(object(), (TypeError, AttributeError), id="no-attributes"),
        pytest.param(np.arange(3), (TypeError, AttributeError), id="ndarray-is-not-a-buffer"),
        pytest.param(None, (TypeError, AttributeError), id="none"),
    ],
)
def test_buffer_to_ndarray_not_a_buffer(obj, exc):
    with pytest.raises(exc):
        dfbuffer.buffer_to_ndarray(obj, I64)


def test_buffer_to_ndarray_misaligned_offset_is_fine_or_clear():
    # an odd byte address: either a correct (unaligned) view or a clear error
    raw = np.zeros(17, "u1")
    raw[1:9] = np.array([42], "<i8").view("u1")
    buf = Buffer(raw, ptr=raw.ctypes.data + 1, bufsize=16)
    try:
        res = dfbuffer.buffer_to_ndarray(buf, "<i8", length=1)
    except ValueError:
        return
    assert res[0] == 42


# --------------------------------------------------------------------------
# column_to_ndarray / from_dataframe arguments


@pytest.mark.parametrize("nulls", ["drop", "", None, 1, "MASK"])
def test_bad_nulls_argument(nulls):
    exc = ValueError if isinstance(nulls, str) else (TypeError, ValueError)
    with pytest.raises(exc):
        dfbuffer.column_to_ndarray(primitive([1, 2]), nulls=nulls)
    with pytest.raises(exc):
        dfbuffer.from_dataframe(frame(a=primitive([1, 2])), nulls=nulls)


@pytest.mark.parametrize("obj", [object(), np.arange(3), {"a": [1, 2]}, None])
def test_from_dataframe_not_a_dataframe(obj):
    with pytest.raises(TypeError):
        dfbuffer.from_dataframe(obj)


def test_column_to_ndarray_not_a_column():
    with pytest.raises(TypeError, match="__arrow_array__ or __array__"):
        dfbuffer.column_to_ndarray(object())
    # an ndarray is read through __array__, the last resort, but a column is 1-D
    with pytest.raises(ValueError, match="1-D"):
        dfbuffer.column_to_ndarray(np.zeros((2, 2)))


def test_from_dataframe_producer_raises():
    class Bad:
        def __dataframe__(self, nan_as_null=False, allow_copy=True):
            raise _Boom("cannot")

    with pytest.raises(_Boom):
        dfbuffer.from_dataframe(Bad())


def test_from_dataframe_dataframe_returns_garbage():
    class Bad:
        def __dataframe__(self, nan_as_null=False, allow_copy=True):
            return 42

    with pytest.raises((TypeError, AttributeError)):
        dfbuffer.from_dataframe(Bad())


def test_from_dataframe_column_names_mismatch():
    df = frame(a=primitive([1, 2]))
    df.column_names = lambda: ["a", "b"]  # more names than columns
    with pytest.raises((ValueError, IndexError)):
        dfbuffer.from_dataframe(df)


def test_chunks_of_different_lengths_validity_mismatch():
    # a validity buffer sized for the first chunk only, reused for the second
    a = with_mask(np.arange(4), [1, 0, 1, 1])
    b = primitive(np.arange(40))
    b._validity = (a.get_buffers()["validity"][0], BITMASK_DTYPE)
    b._null = (USE_BITMASK, 0)
    b._offset = 3
    with pytest.raises(ValueError):
        dfbuffer.column_to_ndarray(chunked(a, b))


def test_broken_bytemask_dtype_claims_bitmask_width():
    # USE_BYTEMASK but the validity buffer is 1 bit per value and too short
    col = with_mask(np.arange(64), [1] * 63 + [0], kind="bitmask")
    col._null = (4, 0)
    with pytest.raises(ValueError):
        dfbuffer.column_to_ndarray(col)


def test_constants_used_here():
    assert (BOOL, FLOAT, INT, STRING) == (20, 2, 0, 21)
    assert BYTEMASK_DTYPE[1] == 8 and INT32_DTYPE[1] == 32 and UINT8_DTYPE[1] == 8
    assert Column is not None
