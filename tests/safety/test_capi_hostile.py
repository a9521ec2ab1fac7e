"""Every entry of the C API table (dfbuffer/dfbuffer.h) called with NULL and garbage
arguments by a C consumer built at test time (tests/capi_consumer/hostile.c): each reports
through its documented convention (NULL or -1 with the documented exception, never a crash
and never undefined behaviour: the suite also runs on the ASan+UBSan build), and every Arrow
struct handed over is released exactly once."""

from __future__ import annotations

import gc

import numpy as np
import pandas as pd
import pyarrow as pa
import pytest
from capi_build import consumers
from child_processes import scratch_dir

import dfbuffer

_BUILD_JOB, _BUILDS = consumers(
    {"hostile": ("capi_hostile", "hostile.c", (), {"cpp": False, "cython": False, "opt": "-O1"})},
    lambda: scratch_dir() / "capi_hostile",
)
_BUILD = _BUILDS["hostile"]
pytestmark = pytest.mark.child_process(_BUILD_JOB)


@pytest.fixture(scope="module")
def hostile():
    return _BUILD.load()


def _buffer(res):
    return isinstance(res, dfbuffer.Buffer)


def _info_bytes(n):
    return lambda res: res == n


# name -> the documented exception type, or a check of the result
CASES = {
    "new/null table": SystemError,
    "new/null owner": TypeError,
    "new/null ptr with a size": ValueError,
    "new/null ptr, size 0": lambda b: _buffer(b) and b.bufsize == 0 and b.shape == (0,),
    "new/negative bufsize": ValueError,
    "new/address overflow": OverflowError,
    "new/negative ndim": ValueError,
    "new/huge ndim": ValueError,
    "new/negative shape": ValueError,
    "new/shape overflow": OverflowError,
    "new/strides outside the block": ValueError,
    "new/strides without shape": ValueError,
    "new/not a multiple of the itemsize": ValueError,
    "new/garbage typestr": (TypeError, ValueError),
    "new/typestr NumPy cannot parse": (TypeError, ValueError),
    "new/typestr not UTF-8": (TypeError, ValueError),
    "new/object typestr": TypeError,
    "new/unknown device": ValueError,
    "new/negative device type": ValueError,
    "new/negative device id": ValueError,
    "new/readonly 7": lambda b: _buffer(b) and b.readonly is True,
    "from_data/null table": SystemError,
    "from_data/null owner": TypeError,
    "from_data/null shape": ValueError,
    "from_data/null data with elements": ValueError,
    "from_data/null data, no elements": lambda b: _buffer(b) and b.bufsize == 0,
    "from_data/negative ndim": ValueError,
    "from_data/strides below address 0": OverflowError,
    "from_data/garbage typestr": (TypeError, ValueError),
    "get_info/null table": SystemError,
    "get_info/null buffer": TypeError,
    "get_info/not a buffer": TypeError,
    "get_info/null info, size 0": _info_bytes(0),
    "get_info/null info with a size": TypeError,
    "get_info/size 0": _info_bytes(0),
    "get_info/size 1": _info_bytes(1),
    "get_info/size larger than the runtime's": lambda n: 0 < n <= 200,
    "from_object/null table": SystemError,
    "from_object/null obj": TypeError,
    "from_object/garbage obj": TypeError,
    "from_object/garbage dtype": TypeError,
    "from_object/null dtype": _buffer,
    "as_ndarray/null table": SystemError,
    "as_ndarray/null buffer": TypeError,
    "as_ndarray/not a buffer": TypeError,
    "arrow/null table": SystemError,
    "arrow/null array": ValueError,
    "arrow/null schema": ValueError,
    "arrow/both null": ValueError,
    "arrow/both released": ValueError,
    "arrow/nulls -1": ValueError,
    "arrow/nulls INT_MAX": ValueError,
    "arrow/null format": ValueError,
    "arrow/garbage format": (ValueError, NotImplementedError),
    "arrow/empty format": (ValueError, NotImplementedError),
    "arrow/negative length": ValueError,
    "arrow/negative n_buffers": ValueError,
    "arrow/null buffers": ValueError,
    "arrow/huge offset": ValueError,
    "arrow/null values buffer": ValueError,
    "arrow/huge n_children": ValueError,
    "arrow/negative schema n_children": ValueError,
    "arrow/null_count above length": ValueError,
    "arrow/valid": lambda a: a.tolist() == [1, 2, 3, 4],
    "arrow_dict/null table": SystemError,
    "arrow_dict/null array": ValueError,
    "arrow_dict/nulls 3": ValueError,
    "arrow_dict/garbage format": (ValueError, NotImplementedError),
    "arrow_dict/struct without children": ValueError,
    "stream/null table": SystemError,
    "stream/null stream": ValueError,
    "stream/released": ValueError,
    "stream/nulls -7": ValueError,
    "stream/no get_schema": ValueError,
    "stream/get_schema fails, no message": ValueError,
    "stream/get_schema odd error code": OSError,
    "stream/get_schema leaves no schema": ValueError,
    "stream/get_next fails": MemoryError,
    "stream/empty": lambda d: d == {} or (list(d) == ["x"] and len(d["x"]) == 0),
    "column/null table": SystemError,
    "column/null column": TypeError,
    "column/nulls -1": ValueError,
    "column/nulls INT_MIN": ValueError,
    "frame/null table": SystemError,
    "frame/null obj": TypeError,
    "frame/nulls 99": ValueError,
    "b2n/null table": SystemError,
    "b2n/null buffer": TypeError,
    "b2n/null dtype": TypeError,
}


@pytest.mark.parametrize("name", list(CASES))
def test_entry_with_null_or_garbage(hostile, name):
    made0, released0 = hostile.counts()
    expected = CASES[name]
    if isinstance(expected, (type, tuple)):
        with pytest.raises(expected) as ei:
            hostile.run(name)
        assert not isinstance(ei.value, (AssertionError, SyntaxError))
        assert str(ei.value)  # a message saying what was wrong
    else:
        res = hostile.run(name)
        assert expected(res), res
        del res
    gc.collect()
    made, released = hostile.counts()
    assert made - made0 == released - released0  # each struct released exactly once


def test_every_case_is_listed(hostile):
    """The C file and the table above name the same cases (a case only in C is never run)."""
    import re
    from pathlib import Path

    src = (Path(__file__).resolve().parents[1] / "capi_consumer" / "hostile.c").read_text()
    in_c = set(re.findall(r'IS\("([^"]+)"\)', src))
    assert in_c == set(CASES)
    with pytest.raises(KeyError):
        hostile.run("no such case")


# The converters pass garbage objects on to the Python-level functions: the C API raises
# exactly what the Python function raises.
_GARBAGE = [None, 3, "text", object(), np.arange(3), b"\x00" * 8, pa.array([1, None])]


def _outcome(call):
    try:
        res = call()
    except Exception as e:  # noqa: BLE001 - the type is what is compared
        return type(e)
    return type(res)


@pytest.mark.parametrize("obj", _GARBAGE, ids=repr)
def test_converters_raise_what_python_raises(hostile, obj):
    for c_call, py_call in [
        (lambda: hostile.column_to_ndarray(obj, 1),
         lambda: dfbuffer.column_to_ndarray(obj, nulls="fill")),
        (lambda: hostile.from_dataframe(obj, 2, 7),
         lambda: dfbuffer.from_dataframe(obj, nulls="raise", allow_copy=True)),
        (lambda: hostile.from_object(obj, None), lambda: dfbuffer.Buffer.from_object(obj)),
        (lambda: hostile.from_object(b"\x00" * 8, obj),
         lambda: dfbuffer.Buffer.from_object(b"\x00" * 8, dtype=obj)),
        (lambda: hostile.buffer_to_ndarray(obj, "<i8", 0, -1),
         lambda: dfbuffer.buffer_to_ndarray(obj, "<i8")),
    ]:
        assert _outcome(c_call) is _outcome(py_call)


@pytest.mark.parametrize(
    ("offset", "length"),
    [(-1, -1), (2**63 - 1, -1), (0, 2**63 - 1), (-(2**63), -(2**63)), (1, 0), (8, 1)],
)
def test_buffer_to_ndarray_offsets(hostile, offset, length):
    col = pd.DataFrame({"a": np.arange(4, dtype="i8")}).__dataframe__().get_column(0)
    buf, dt = col.get_buffers()["data"]
    py_len = None if length < 0 else length
    c = _outcome(lambda: hostile.buffer_to_ndarray(buf, dt, offset, length))
    p = _outcome(lambda: dfbuffer.buffer_to_ndarray(buf, dt, offset=offset, length=py_len))
    assert c is p
