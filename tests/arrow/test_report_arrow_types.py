"""The Arrow type lines of ``python -m dfbuffer``: every line agrees with what converts.

Each line of the report's type table gets an array of that type made here (by pyarrow, or
by a hand-written producer where pyarrow has no Python constructor); it must convert when
the line says it reads, and its result must lie in the Arrow memory exactly when the line
says zero-copy ("as storage": the result of the storage array, zero-copy as that is)."""

from __future__ import annotations

import datetime
import decimal

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pytest
from test_arrow_bad import Producer

import dfbuffer
from dfbuffer import _interchange
from dfbuffer._report import _arrow_types, build_report, render

# bool8, uuid and opaque arrive in pyarrow 18 (the oldest supported is 16)
if not hasattr(pa, "bool8"):
    pytest.skip("pyarrow < 18 cannot build these Arrow types", allow_module_level=True)


def _ext(typ, storage):
    return pa.ExtensionArray.from_storage(typ, storage)


def _samples() -> dict[str, object]:
    """One array per line of the report (None where the line reads nothing)."""
    i32 = np.array([1, -2, 0, 7], np.int32)
    dt = np.array([(1, 500), (-2, 0)], [("d", "<i4"), ("ms", "<i4")])
    tensor = pa.fixed_shape_tensor(pa.int32(), (2, 2))
    return {
        "null": pa.nulls(3),
        "bit-packed bool": pa.array([True, None, False]),
        "bool": _ext(pa.bool8(), pa.array([1, 0, 1], pa.int8())),
        "int": pa.array([1, None, 3]),
        "uint": pa.array([1, 2, 3], pa.uint16()),
        "float": pa.array([1.5, None, -2.0]),
        "utf8 string": pa.array(["a", None, "bc"]),
        "large utf8 string": pa.array(["a", None], pa.large_string()),
        "string view": pa.array(["a", None, "x" * 20], pa.string_view()),
        "binary": pa.array([b"a", None]),
        "large binary": pa.array([b"a", None], pa.large_binary()),
        "date32": pa.array([datetime.date(2020, 1, 2), None]),
        "date64": pa.array([datetime.date(2020, 1, 2), None], pa.date64()),
        "timestamp": pa.array([1, None, 3], pa.timestamp("us", "UTC")),
        "duration": pa.array([1, None], pa.duration("ms")),
        "categorical": pa.array(["a", "b", "a"]).dictionary_encode(),
        "decimal": pa.array([decimal.Decimal("1.25"), None], pa.decimal128(5, 2)),
        "fixed-size binary": pa.array([b"ab", None], pa.binary(2)),
        "binary view": pa.array([b"a", None], pa.binary_view()),
        "time32": pa.array([1, None], pa.time32("s")),
        "time64": pa.array([1, None], pa.time64("us")),
        "interval (months)": (Producer(b"tiM", 4, [None, i32]), [i32]),
        "interval (days, ms)": (Producer(b"tiD", 2, [None, dt]), [dt]),
        "interval (months, days, ns)": pa.array([(1, 2, 3), None], pa.month_day_nano_interval()),
        "list": pa.array([[1, 2], None, [3]]),
        "large list": pa.array([[1, 2], None], pa.large_list(pa.int64())),
        "list view": pa.array([[1, 2], None], pa.list_view(pa.int64())),
        "large list view": pa.array([[1, 2], None], pa.large_list_view(pa.int64())),
        "fixed-size list": pa.array([[1, 2], [3, 4]], pa.list_(pa.int64(), 2)),
        "struct": pa.array([{"a": 1}, None]),
        "map": pa.array([[("k", 1)], None], pa.map_(pa.string(), pa.int64())),
        "dense union": pa.UnionArray.from_dense(
            pa.array([0, 1], pa.int8()), pa.array([0, 0], pa.int32()),
            [pa.array([1]), pa.array(["x"])]),
        "sparse union": pa.UnionArray.from_sparse(
            pa.array([0, 1], pa.int8()), [pa.array([1, 2]), pa.array(["x", "y"])]),
        "run-end encoded": pc.run_end_encode(pa.array([1, 1, None, 2])),
        "extension arrow.bool8": _ext(pa.bool8(), pa.array([1, 0], pa.int8())),
        "extension arrow.uuid": _ext(pa.uuid(), pa.array([b"0" * 16], pa.binary(16))),
        "extension arrow.fixed_shape_tensor": _ext(
            tensor, pa.array([[1, 2, 3, 4]], pa.list_(pa.int32(), 4))),
        "extension arrow.json, arrow.opaque, others": _ext(
            pa.opaque(pa.int64(), "t", "v"), pa.array([1, 2])),
    }


def _ranges(arr) -> list[tuple[int, int]]:
    """(address, size) of every buffer of an array's tree."""
    if isinstance(arr, tuple):
        return [(a.ctypes.data, a.nbytes) for a in arr[1]]
    return [(b.address, b.size) for b in arr.buffers() if b is not None]


def _convert(src):
    """The column's result: column_to_ndarray for a hand-made producer, from_dataframe
    of a one-column table for pyarrow's arrays (structs are no column_to_ndarray input)."""
    if isinstance(src, Producer):
        return dfbuffer.column_to_ndarray(src)
    return dfbuffer.from_dataframe(pa.table({"c": src}))["c"]


def _in_arrow_memory(res, ranges) -> bool:
    ptr = np.ma.getdata(res).__array_interface__["data"][0]
    return any(a <= ptr < a + n for a, n in ranges)


def _rows() -> list[dict]:
    return _arrow_types(_interchange)


def test_every_report_line_has_a_sample():
    # a type added to the table must come with its sample here
    assert sorted(r["type"] for r in _rows()) == sorted(_samples())
    text = render(build_report())
    lines = text[text.index("Arrow types"):text.index("Interchange conformance")]
    assert "extension arrow.uuid" in lines and "refused" not in lines


@pytest.mark.parametrize("row", _rows(), ids=lambda r: r["type"])
def test_report_line_agrees_with_the_conversion(row):
    sample = _samples()[row["type"]]
    src = sample[0] if isinstance(sample, tuple) else sample
    if not row["reads"]:
        with pytest.raises(NotImplementedError):
            _convert(src)
        return
    res = _convert(src)
    if row["zero_copy"] is None:  # as the storage type converts
        storage = src.storage
        want = _convert(storage)
        assert np.ma.getdata(res).tolist() == np.ma.getdata(want).tolist()
        assert _in_arrow_memory(res, _ranges(src)) == _in_arrow_memory(want, _ranges(storage))
        return
    assert _in_arrow_memory(res, _ranges(sample)) == row["zero_copy"], row
