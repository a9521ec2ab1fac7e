"""What ``python -m dfbuffer`` shows first: one conversion of each kind dfbuffer does.

Five conversions on small data made here, each with its result: a frame's columns to
NumPy (``from_dataframe``), a matrix (``to_matrix``), an Arrow export (``to_arrow``, read
by a consumer), an interchange view (``to_interchange`` and ``buffer_to_ndarray``) and a
stream read in fixed-size batches (``iter_matrices`` into one ``out`` array).  Each takes
its input from the best library installed (polars, pandas, pyarrow, nanoarrow, in that
order) and falls back to NumPy arrays and dfbuffer's own Arrow export, so that all five run
with only NumPy and dfbuffer installed; a row says which input it used and why (a library
not installed).  A conversion that fails shows as "failed (reason)", never as a crash.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np


def _fmt(a: Any) -> str:
    """An array's values on one line, ``--`` where masked (NumPy's own str)."""
    return " ".join(str(a).split())


def _same(a: int, b: int) -> str:
    return "zero-copy" if a == b else "copied"


def _data_address(a: Any) -> int:
    return int(np.ma.getdata(a).__array_interface__["data"][0])


def _frame(mods: dict[str, Any]) -> tuple[str, Any, Callable[[], int] | None, str]:
    """The frame of the first two conversions: (what it is, the frame, the address of
    its x values or None, why a fallback was taken ('' if none))."""
    x, n, s = [1.5, None, 3.0], [1, 2, 3], ["a", "b", None]
    pl, pd, pa = mods.get("polars"), mods.get("pandas"), mods.get("pyarrow")
    if pl is not None:
        df = pl.DataFrame({"x": x, "n": n, "s": s})
        return "polars.DataFrame", df, lambda: df["x"].to_arrow().buffers()[1].address, ""
    if pd is not None:
        df = pd.DataFrame({"x": x, "n": n, "s": s})
        return "pandas.DataFrame", df, lambda: df["x"].to_numpy().ctypes.data, (
            "polars not installed")
    if pa is not None:
        t = pa.table({"x": x, "n": n, "s": s})
        return "pyarrow.Table", t, lambda: t.column("x").chunks[0].buffers()[1].address, (
            "polars, pandas not installed")
    # a mapping's columns are numbers (strings need an Arrow or pandas column)
    xs = np.ma.masked_invalid(np.array([1.5, np.nan, 3.0]))
    d = {"x": xs, "n": np.ma.array(n, mask=[False, True, False])}
    return "dict of NumPy (masked) arrays", d, lambda: xs.ctypes.data, (
        "polars, pandas, pyarrow not installed")


def build_demo(dfb: Any, mods: dict[str, Any]) -> list[dict[str, Any]]:
    """The five conversions: a row each, {kind, call, input, note, status, result}
    (status "ok" or "failed"; note: why that input, '' when the first choice)."""
    rows: list[dict[str, Any]] = []
    pa, na = mods.get("pyarrow"), mods.get("nanoarrow")

    def add(kind: str, call: str, source: str, note: str, run: Callable[[], list[str]]):
        try:
            result, status = run(), "ok"
        except Exception as exc:  # the report never crashes
            result, status = [f"{type(exc).__name__}: {exc}"], "failed"
        rows.append({"kind": kind, "call": call, "input": source, "note": note,
                     "status": status, "result": result})

    what, frame, x_address, why = _frame(mods)

    def columns() -> list[str]:
        cols = dfb.from_dataframe(frame)
        x = cols["x"]
        zc = f", {_same(_data_address(x), x_address())}" if x_address else ""
        other = "s" if "s" in cols else "n"
        y = cols[other]
        return [f"x: {_fmt(x)} ({type(x).__name__}, {x.dtype}{zc})",
                f"{other}: {_fmt(y)} ({type(y).__name__}, {y.dtype})"]

    add("a frame's columns to NumPy", "dfbuffer.from_dataframe(df)", what, why, columns)

    def matrix() -> list[str]:
        m = dfb.to_matrix(frame, columns=["x", "n"], dtype=np.float32)
        return [f"{m.shape} {m.dtype}, NaN where null: {_fmt(m.tolist())}"]

    add("a matrix", 'dfbuffer.to_matrix(df, columns=["x", "n"], dtype=np.float32)', what, why,
        matrix)

    values = np.arange(3.0)
    data = {"x": values, "y": np.array([1, 2, 3])}

    def arrow() -> list[str]:
        exported = dfb.to_arrow(data)
        if pa is not None:
            t = pa.table(exported)
            zc = _same(t.column("x").chunks[0].buffers()[1].address, values.ctypes.data)
            types = ", ".join(f"{f.name}: {f.type}" for f in t.schema)
            return [f"pyarrow.table(...): {t.num_rows} rows, {types} ({zc})"]
        if na is not None:
            got = na.ArrayStream(exported).read_all()
            types = ", ".join(f"{f.name}: {f.type.name.lower()}" for f in got.schema.fields)
            return [f"nanoarrow.ArrayStream(...).read_all(): {len(got)} rows, {types}"]
        back = dfb.from_dataframe(exported)
        zc = _same(back["x"].ctypes.data, values.ctypes.data)
        return [f"read back by dfbuffer.from_dataframe: x {_fmt(back['x'])}, "
                f"y {_fmt(back['y'])} ({zc})"]

    reader = "pyarrow" if pa is not None else "nanoarrow" if na is not None else "dfbuffer"
    add("an Arrow export", "dfbuffer.to_arrow({'x': ndarray, 'y': ndarray})",
        f"NumPy arrays, read by {reader}",
        "" if pa is not None else "pyarrow not installed", arrow)

    def view_source() -> Any:
        return pa.table(data) if pa is not None else dfb.to_arrow(data)

    def interchange() -> list[str]:
        src = view_source()
        view = dfb.to_interchange(src)
        col = view.get_column_by_name("x")
        buf, dtype = col.get_buffers()["data"]
        arr = dfb.buffer_to_ndarray(buf, dtype)
        names = list(view.column_names())
        return [f"a __dataframe__ of columns {names}, {view.num_rows()} rows",
                f"x's data buffer as NumPy (buffer_to_ndarray): {_fmt(arr)} "
                f"({_same(arr.ctypes.data, buf.ptr)})"]

    add("an interchange view", 'dfbuffer.to_interchange(table).get_column_by_name("x")',
        "pyarrow.Table" if pa is not None else "dfbuffer.to_arrow of NumPy arrays",
        "" if pa is not None else "pyarrow not installed", interchange)

    def stream() -> tuple[Any, str]:
        t = {"x": np.arange(10.0), "y": np.arange(10)}
        if pa is not None:
            return pa.table(t).to_reader(max_chunksize=4), (
                "pyarrow RecordBatchReader, source batches of 4, 4, 2 rows")
        return dfb.to_arrow(t), "dfbuffer.to_arrow of NumPy arrays, one source batch of 10"

    def batches() -> list[str]:
        src, _ = stream()
        out = np.empty((3, 2), np.float32)
        shapes, first = [], None
        for m in dfb.iter_matrices(src, 3, out=out):
            if not np.shares_memory(m, out):
                raise AssertionError("a batch not written into out")
            shapes.append(m.shape)
            first = m.tolist() if first is None else first
        return [f"{len(shapes)} batches {' '.join(map(str, shapes))}, {out.dtype}, each "
                "written into the one out array",
                f"the first: {_fmt(first)}"]

    try:
        stream_input = stream()[1]
    except Exception as exc:
        stream_input = f"(none: {type(exc).__name__})"
    add("a stream in batches", "dfbuffer.iter_matrices(reader, 3, out=out)", stream_input,
        "" if pa is not None else "pyarrow not installed", batches)
    return rows


def render_demo(rows: list[dict[str, Any]], wrap: Callable[..., list[str]],
                width: int) -> list[str]:
    """The text of the demo rows: a numbered heading per conversion, then its input and
    its result lines, wrapped between words at ``width``."""
    lines = ["What dfbuffer does (one conversion of each kind, on data made here):"]
    for i, r in enumerate(rows, 1):
        lines.extend(wrap(f"{i}. {r['kind']}: {r['call']}", width, "     ", "  "))
        note = f" ({r['note']})" if r["note"] else ""
        lines.extend(wrap(f"input: {r['input']}{note}", width, "     ", "     "))
        for res in r["result"]:
            text = f"-> {res}" if r["status"] == "ok" else f"-> FAILED: {res}"
            lines.extend(wrap(text, width, "        ", "     "))
    return lines
