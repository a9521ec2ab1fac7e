"""A user's script that must type-check under ``mypy --strict`` (``.ci/run``, lint step)
and run (``tests/test_typing.py``): the return types of ``from_dataframe`` follow
``categorical=``, ``to_matrix`` gives a 2-D array, and the input protocols accept a polars
frame."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
import polars as pl

import dfbuffer

if TYPE_CHECKING:
    from dfbuffer import DataFrameLike


def total(frame: DataFrameLike, name: str) -> float:
    cols = dfbuffer.from_dataframe(frame)  # dict[str, ndarray]: categoricals decoded
    return float(cols[name].sum())


def codes_of(frame: DataFrameLike, name: str) -> np.ndarray[tuple[int], np.dtype[np.int8]]:
    col = dfbuffer.from_dataframe(frame, categorical="codes")[name]
    if isinstance(col, dfbuffer.CategoricalCodes):  # "codes" may give CategoricalCodes
        return col.codes.astype(np.int8)
    raise TypeError(f"column {name!r} is not categorical")


def _rejected(frame: DataFrameLike) -> None:
    # never called: mypy --strict must reject each line (it reports an ignore that is unused)
    dfbuffer.from_dataframe(3)  # type: ignore[call-overload]
    dfbuffer.to_matrix("not a frame")  # type: ignore[call-overload]
    dfbuffer.from_dataframe(frame, categorical="codes")["c"].sum()  # type: ignore[union-attr]


def main() -> None:
    df = pl.DataFrame({"x": [1.5, 2.5, 3.0], "y": [1, 2, 3], "c": ["a", "b", "a"]})
    df = df.with_columns(pl.col("c").cast(pl.Categorical))
    assert total(df, "x") == 7.0
    assert codes_of(df, "c").tolist() == [0, 1, 0]

    m = dfbuffer.to_matrix(df, columns=["x", "y"], dtype=np.float64)
    rows, ncols = m.shape
    col_sums: np.ndarray[tuple[int], np.dtype[np.float64]] = m.sum(axis=0)
    assert (rows, ncols) == (3, 2) and col_sums.tolist() == [7.0, 6.0]

    m32: np.ndarray[tuple[int, int], np.dtype[np.float32]] = dfbuffer.to_matrix(
        df, columns=["x", "y"], dtype=np.float32
    )
    assert m32.dtype == np.float32

    arrays = dfbuffer.from_dataframe({"a": np.arange(3.0)}, copy=True)  # a mapping is a frame
    assert arrays["a"].flags.writeable
    # nulls="always_mask": a MaskedArray for every column, typed as one
    masks = dfbuffer.from_dataframe(df, columns=["x"], nulls="always_mask")
    assert not masks["x"].mask.any()

    masked = dfbuffer.to_matrix(pl.DataFrame({"x": [1.0, None]}), nulls="mask")
    assert int(masked.mask.sum()) == 1

    sch = dfbuffer.schema(df)
    assert sch.names == ["x", "y", "c"] and sch[-1].type == "categorical"


if __name__ == "__main__":
    main()
