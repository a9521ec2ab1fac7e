"""The flat Arrow types beyond numbers and strings, one array of each with nulls: binary
(offsets, views, fixed size), decimals of every width and a negative scale, times of day;
the inputs of the per-type tests (tests/arrow/test_arrow_types.py, tests/kernels/)."""

from __future__ import annotations

import decimal

import pyarrow as pa

D = decimal.Decimal

BINARY_VALUES = [b"ab", None, b"", b"x" * 20, b"\x00\xff", None, b"0123456789abc"]
DECIMAL_VALUES = [D("1.23"), None, D("-0.05"), D("0.00"), D("99.99"), None, D("-12.30")]
MONTH_DAY_NANO = [(1, 2, 3), None, (-3, 0, -7), (4, 5, 6), (0, 0, 0)]


def flat_arrays() -> dict[str, pa.Array]:
    """One array per type of these families, with nulls (decimal32 and decimal64 where
    pyarrow has them)."""
    big = [D("123456789012345678901234567.89"), None, D("-0.01"), D("0.00")]
    huge = [D("-12345678901234567890123456789012345678901234567.89"), None, D("7.00")]
    got = {
        "binary": pa.array(BINARY_VALUES, pa.binary()),
        "large_binary": pa.array(BINARY_VALUES, pa.large_binary()),
        "binary_view": pa.array(BINARY_VALUES, pa.binary_view()),
        "fixed_size_binary": pa.array([b"abc", None, b"\x00\x01\x02", b"xyz"], pa.binary(3)),
        "decimal128": pa.array(DECIMAL_VALUES + big, pa.decimal128(38, 2)),
        "decimal256": pa.array(DECIMAL_VALUES + huge, pa.decimal256(60, 2)),
        "decimal_negative_scale": pa.array(
            [D("1.23E+4"), None, D("0"), D("-5E+2")], pa.decimal128(5, -2)
        ),
        "time32s": pa.array([0, None, 86399, 5], pa.time32("s")),
        "time32ms": pa.array([0, None, 86399999, 5], pa.time32("ms")),
        "time64us": pa.array([0, None, 86399999999, 5], pa.time64("us")),
        "time64ns": pa.array([0, None, 86399999999000, 5000], pa.time64("ns")),
    }
    if hasattr(pa, "decimal32"):  # pyarrow 18 and newer; the oldest supported is 16
        got["decimal32"] = pa.array(DECIMAL_VALUES, pa.decimal32(4, 2))
        got["decimal64"] = pa.array(DECIMAL_VALUES, pa.decimal64(12, 2))
    return got
