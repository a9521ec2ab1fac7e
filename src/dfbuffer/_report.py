"""The interop report behind ``python -m dfbuffer`` (``dfbuffer/__main__.py``).

After the versions, it shows one conversion of each kind dfbuffer does, with its result
(``dfbuffer._demo``).  Then it lists the protocols ``Buffer.from_object`` tries, in their order (the
extension's protocol registry, ``_interchange._protocols()``).  Then, for
each producer library installed (numpy, pandas, pyarrow, polars, nanoarrow, torch,
cupy) and each exchange path (DLPack, the array interface, the buffer
protocol, ``__array__``, ``__arrow_array__``, the Arrow PyCapsule interface,
the interchange protocol), try the
exchange on small data made here, and report whether it worked and whether
it was zero-copy (the consumer sees the producer's address).  Then run
``dfbuffer.testing.check_dataframe`` on the libraries' ``__dataframe__``
objects.  ``--json`` prints the same rows for machines.  Always exits 0:
a path dfbuffer or the library does not offer shows as "n/a (reason)".
"""

from __future__ import annotations

import argparse
import importlib
import importlib.util
import json
import platform
import textwrap
import warnings
from collections.abc import Callable
from typing import Any

# exposes only a producer's DLPack methods (forces that path)
from dfbuffer.testing import _DLPackOnly

PRODUCERS = ("numpy", "pandas", "pyarrow", "polars", "nanoarrow", "torch", "cupy")
N = 1000  # elements of the test data: small, the report takes well under a second


class NotAvailable(Exception):
    """A path that this installation does not offer (not an error)."""


def _run(fn: Callable[[], tuple[bool | None, str]]) -> tuple[str, bool | None, str]:
    """Runs one exchange.  Returns (status, zero_copy, detail) with status
    "ok", "n/a" or "error"; never raises."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            zero_copy, detail = fn()
        return "ok", zero_copy, detail
    except NotAvailable as exc:
        return "n/a", None, str(exc)
    except NotImplementedError as exc:  # a peer that declares a path it does not serve
        return "n/a", None, f"not implemented: {exc}"
    except Exception as exc:  # the report must never crash
        return "error", None, f"{type(exc).__name__}: {exc}"


def _version(mod: Any) -> str:
    return str(getattr(mod, "__version__", "?"))


def _import(name: str) -> Any | None:
    if importlib.util.find_spec(name) is None:
        return None
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return importlib.import_module(name)
    except Exception:
        return None


# ---------------------------------------------------------------------------
# Helpers shared by the paths
# ---------------------------------------------------------------------------


class _ArrayInterfaceOnly:
    """Exposes only an ``__array_interface__`` dict (forces that path)."""

    def __init__(self, interface: dict, keep: Any) -> None:
        self.__array_interface__ = interface
        self._keep = keep


class _ArrowArrayOnly:
    """Exposes only ``__arrow_c_array__`` (forces the Arrow path even for
    objects that also speak DLPack or the buffer protocol)."""

    def __init__(self, obj: Any) -> None:
        self._obj = obj

    def __arrow_c_array__(self, requested_schema: Any = None) -> Any:
        return self._obj.__arrow_c_array__(requested_schema)


class _ArrayMethodOnly:
    """Exposes only ``__array__`` (forces that last-resort path)."""

    def __init__(self, arr: Any) -> None:
        self._arr = arr

    def __array__(self, dtype: Any = None, copy: Any = None) -> Any:
        return self._arr


class _StreamOnly:
    """Exposes only ``__arrow_c_stream__`` (forces the Arrow path even for
    objects that also have ``__dataframe__``)."""

    def __init__(self, obj: Any) -> None:
        self._obj = obj

    def __arrow_c_stream__(self, requested_schema: Any = None) -> Any:
        return self._obj.__arrow_c_stream__(requested_schema)


def _from_object(dfbuffer: Any, obj: Any) -> Any:
    return dfbuffer.Buffer.from_object(obj)


def _buffer_over(dfbuffer: Any, np: Any, arr: Any) -> Any:
    """A dfbuffer.Buffer over a NumPy array (the start of every export path)."""
    return dfbuffer.Buffer.from_object(arr)


def _same(a: int, b: int) -> tuple[bool, str]:
    return a == b, ("same address" if a == b else f"copied ({a:#x} != {b:#x})")


def _same_values(equal: bool, a: int, b: int) -> tuple[bool, str]:
    """_same(a, b) for an export whose values compared ``equal`` to the source."""
    if not equal:
        raise AssertionError("values differ")
    return _same(a, b)


def _ndarray_address(arr: Any) -> int:
    return int(arr.__array_interface__["data"][0])


# ---------------------------------------------------------------------------
# The paths, per producer
# ---------------------------------------------------------------------------


def _numpy_paths(dfb: Any, np: Any) -> list[tuple[str, Callable]]:
    x = np.arange(N, dtype=np.int64)
    addr = x.ctypes.data

    def dlpack_import():
        buf = _from_object(dfb, _DLPackOnly(x))
        return _same(buf.ptr, addr)

    def dlpack_export():
        out = np.from_dlpack(_buffer_over(dfb, np, x))
        return _same_values(np.array_equal(out, x), out.ctypes.data, addr)

    def array_method_import():
        buf = _from_object(dfb, _ArrayMethodOnly(x))
        return _same(buf.ptr, addr)

    def ai_import():
        buf = _from_object(dfb, _ArrayInterfaceOnly(x.__array_interface__, x))
        return _same(buf.ptr, addr)

    def ai_export():
        buf = _buffer_over(dfb, np, x)
        ai = buf.__array_interface__
        out = np.asarray(_ArrayInterfaceOnly(ai, buf))
        return _same_values(np.array_equal(out, x), out.ctypes.data, addr)

    def bp_import():
        buf = _from_object(dfb, memoryview(x))
        return _same(buf.ptr, addr)

    def bp_export():
        out = np.asarray(memoryview(_buffer_over(dfb, np, x)))
        return _same_values(np.array_equal(out.view(np.int64), x), out.ctypes.data, addr)

    def arrow():
        raise NotAvailable("numpy speaks no Arrow PyCapsule interface")

    def interchange():
        raise NotAvailable("numpy has no __dataframe__")

    return [
        ("DLPack import", dlpack_import),
        ("DLPack export", dlpack_export),
        ("array interface import", ai_import),
        ("array interface export", ai_export),
        ("buffer protocol import", bp_import),
        ("buffer protocol export", bp_export),
        ("__array__ import", array_method_import),
        ("Arrow PyCapsule", arrow),
        ("interchange __dataframe__", interchange),
    ]


def _column_row(dfb: Any, make_obj: Callable, source_addr: Callable) -> Callable:
    def run():
        out = dfb.column_to_ndarray(make_obj())
        return _same(_ndarray_address(out), source_addr())

    return run


def _from_dataframe_rows(dfb: Any, make_obj: Callable, source_addr: Callable) -> Callable:
    def run():
        out = dfb.from_dataframe(make_obj())
        a = out["a"]
        return _same(_ndarray_address(a), source_addr())

    return run


def _pandas_paths(dfb: Any, np: Any, pd: Any) -> list[tuple[str, Callable]]:
    values = np.arange(N, dtype=np.int64)
    df = pd.DataFrame({"a": values, "b": values.astype(np.float64)})
    col_addr = lambda: df["a"].to_numpy().ctypes.data  # noqa: E731

    def dlpack():
        if not hasattr(pd.Series, "__dlpack__"):
            raise NotAvailable("pandas.Series has no __dlpack__")
        buf = _from_object(dfb, _DLPackOnly(df["a"]))
        return _same(buf.ptr, col_addr())

    def xbuffer():
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            xdf = df.__dataframe__()
        pbuf = xdf.get_column_by_name("a").get_buffers()["data"][0]
        buf = _from_object(dfb, pbuf)
        return _same(buf.ptr, pbuf.ptr)

    def interchange():
        if not hasattr(df, "__dataframe__"):
            raise NotAvailable("pandas has no __dataframe__ any more")
        return _from_dataframe_rows(dfb, lambda: df.__dataframe__(), col_addr)()

    def stream():
        if not hasattr(df, "__arrow_c_stream__"):
            raise NotAvailable("this pandas has no __arrow_c_stream__")
        return _from_dataframe_rows(dfb, lambda: _StreamOnly(df), col_addr)()

    def arrow_array_method():
        if _import("pyarrow") is None:
            raise NotAvailable("__arrow_array__ needs pyarrow")
        ext = pd.array(values, dtype="int64[pyarrow]")
        chunk = ext.__arrow_array__()
        chunk = chunk.chunk(0) if hasattr(chunk, "chunk") else chunk
        buf = _from_object(dfb, ext)
        return _same(buf.ptr, chunk.buffers()[1].address)

    return [
        ("DLPack import", dlpack),
        ("__arrow_array__ import", arrow_array_method),
        ("interchange buffer import", xbuffer),
        ("interchange __dataframe__", interchange),
        ("Arrow stream from_dataframe", stream),
    ]


def _pyarrow_paths(dfb: Any, np: Any, pa: Any) -> list[tuple[str, Callable]]:
    arr = pa.array(np.arange(N, dtype=np.int64))
    table = pa.table({"a": arr, "b": pa.array(np.arange(N, dtype=np.float64))})
    addr = arr.buffers()[1].address
    table_addr = lambda: table.column("a").chunks[0].buffers()[1].address  # noqa: E731

    def dlpack_import():
        if not hasattr(arr, "__dlpack__"):
            raise NotAvailable("this pyarrow has no Array.__dlpack__")
        buf = _from_object(dfb, _DLPackOnly(arr))
        return _same(buf.ptr, addr)

    def bp_import():
        buf = _from_object(dfb, memoryview(arr.buffers()[1]))
        return _same(buf.ptr, addr)

    def capsule_import():
        buf = _from_object(dfb, _ArrowArrayOnly(arr))
        return _same(buf.ptr, addr)

    def capsule_export():
        x = np.arange(N, dtype=np.int64)
        out = pa.array(_buffer_over(dfb, np, x))
        ok = out.to_pylist()[:3] == [0, 1, 2]
        return _same_values(ok, out.buffers()[1].address, x.ctypes.data)

    def interchange():
        return _from_dataframe_rows(dfb, lambda: table.__dataframe__(), table_addr)()

    def stream():
        return _from_dataframe_rows(dfb, lambda: _StreamOnly(table), table_addr)()

    return [
        ("DLPack import", dlpack_import),
        ("buffer protocol import", bp_import),
        ("Arrow PyCapsule import", capsule_import),
        ("Arrow PyCapsule export", capsule_export),
        ("Arrow column_to_ndarray", _column_row(dfb, lambda: arr, lambda: addr)),
        ("interchange __dataframe__", interchange),
        ("Arrow stream from_dataframe", stream),
    ]


def _polars_paths(dfb: Any, np: Any, pl: Any) -> list[tuple[str, Callable]]:
    s = pl.Series("a", np.arange(N, dtype=np.int64))
    df = pl.DataFrame({"a": s, "b": np.arange(N, dtype=np.float64)})

    def addr() -> int:
        # polars exposes no address directly; NumPy's zero-copy view of a
        # null-free numeric Series shares it.
        return df["a"].to_numpy().ctypes.data

    def dlpack():
        if not hasattr(s, "__dlpack__"):
            raise NotAvailable("polars.Series has no __dlpack__")
        buf = _from_object(dfb, _DLPackOnly(s))
        return _same(buf.ptr, addr())

    def interchange():
        if not hasattr(df, "__dataframe__"):
            raise NotAvailable(f"polars {_version(pl)} removed __dataframe__")
        return _from_dataframe_rows(dfb, lambda: df.__dataframe__(), addr)()

    def stream():
        return _from_dataframe_rows(dfb, lambda: _StreamOnly(df), addr)()

    return [
        ("DLPack import", dlpack),
        ("Arrow column_to_ndarray", _column_row(dfb, lambda: s, addr)),
        ("interchange __dataframe__", interchange),
        ("Arrow stream from_dataframe", stream),
    ]


def _nanoarrow_paths(dfb: Any, np: Any, na: Any) -> list[tuple[str, Callable]]:
    values = np.arange(N, dtype=np.int64)
    arr = na.c_array_from_buffers(na.int64(), N, [None, values])
    batch = na.c_array_from_buffers(na.struct({"a": na.int64()}), N, [None], children=[arr])
    addr = lambda: values.ctypes.data  # noqa: E731  (nanoarrow views the NumPy memory)

    def capsule_import():
        return _same(_from_object(dfb, arr).ptr, addr())

    def capsule_export():
        x = np.arange(N, dtype=np.int64)
        out = na.c_array(_buffer_over(dfb, np, x))
        ok = na.Array(out).to_pylist()[:3] == [0, 1, 2]
        return _same_values(ok, int(out.buffers[1]), x.ctypes.data)

    def stream():
        return _from_dataframe_rows(dfb, lambda: na.c_array_stream(batch), addr)()

    return [
        ("Arrow PyCapsule import", capsule_import),
        ("Arrow PyCapsule export", capsule_export),
        ("Arrow column_to_ndarray", _column_row(dfb, lambda: arr, addr)),
        ("Arrow stream from_dataframe", stream),
    ]


def _torch_paths(dfb: Any, np: Any, torch: Any) -> list[tuple[str, Callable]]:
    t = torch.arange(N, dtype=torch.int64)

    def dlpack_import():
        buf = _from_object(dfb, _DLPackOnly(t))
        return _same(buf.ptr, t.data_ptr())

    def dlpack_export():
        x = np.arange(N, dtype=np.int64)
        out = torch.from_dlpack(_buffer_over(dfb, np, x))
        return _same(out.data_ptr(), x.ctypes.data)

    return [("DLPack import", dlpack_import), ("DLPack export", dlpack_export)]


def _cupy_paths(dfb: Any, np: Any, cp: Any) -> list[tuple[str, Callable]]:
    def make():
        try:
            return cp.arange(N, dtype=cp.int64)
        except Exception as exc:
            raise NotAvailable(f"no usable GPU ({type(exc).__name__})") from exc

    def dlpack_import():
        x = make()
        buf = _from_object(dfb, _DLPackOnly(x))
        return _same(buf.ptr, x.data.ptr)

    def cai_import():
        x = make()
        buf = _from_object(dfb, x)
        return _same(buf.ptr, x.data.ptr)

    def cai_export():
        x = make()
        buf = _from_object(dfb, x)
        out = cp.asarray(buf)
        return _same(out.data.ptr, x.data.ptr)

    return [
        ("DLPack import", dlpack_import),
        ("CUDA array interface import", cai_import),
        ("CUDA array interface export", cai_export),
    ]


# ---------------------------------------------------------------------------
# The report
# ---------------------------------------------------------------------------


def _protocols(dfb: Any, np: Any) -> dict[str, str]:
    """What this build of dfbuffer offers, probed on a small NumPy array."""
    x = np.arange(4, dtype=np.int64)
    buf = _buffer_over(dfb, np, x)

    def check(fn: Callable[[], Any]) -> str:
        def run() -> tuple[None, str]:
            fn()
            return None, ""

        status, _, detail = _run(run)
        return "yes" if status == "ok" else f"{status} ({detail})"

    def pickle5():
        import pickle

        return pickle.loads(pickle.dumps(buf, protocol=5))

    def converted(fn: Callable[[], Any]) -> Callable[[], Any]:
        """Runs a converter on x (through buf) and checks the values it returns."""

        def run() -> None:
            if not np.array_equal(fn(), x):
                raise AssertionError("values differ")

        return run

    def from_dataframe() -> Any:
        return dfb.from_dataframe(dfb.to_interchange(buf))[""]

    return {
        "Buffer.from_object": check(lambda: dfb.Buffer.from_object(x)),
        "__dlpack__ (versioned)": check(lambda: buf.__dlpack__(max_version=(1, 0))),
        "__dlpack__ (legacy)": check(lambda: buf.__dlpack__()),
        "__array_interface__": check(lambda: buf.__array_interface__),
        "buffer protocol": check(lambda: memoryview(buf)),
        "__cuda_array_interface__": "CUDA memory only (not probed on CPU)",
        "__arrow_c_array__": check(lambda: buf.__arrow_c_array__()),
        "pickle protocol 5": check(pickle5),
        "buffer_to_ndarray": check(converted(lambda: dfb.buffer_to_ndarray(buf, x.dtype))),
        "column_to_ndarray": check(converted(lambda: dfb.column_to_ndarray(buf))),
        "from_dataframe": check(converted(from_dataframe)),
        "to_interchange": check(lambda: dfb.to_interchange(buf).get_column(0).size()),
    }


def _conformance(dfb: Any, mods: dict[str, Any]) -> list[dict[str, Any]]:
    """check_dataframe on each library's interchange object."""
    from dfbuffer.testing import check_dataframe

    np = mods["numpy"]
    out: list[dict[str, Any]] = []
    makers: list[tuple[str, Callable[[], Any]]] = []
    if mods.get("pandas") is not None:
        pd = mods["pandas"]

        def pandas_obj():
            df = pd.DataFrame(
                {
                    "int": np.arange(5),
                    "float": [0.5, np.nan, 1.5, 2.5, 3.5],
                    "str": ["a", None, "ccc", "d", "e"],
                    "cat": pd.Categorical(["x", None, "y", "x", "y"]),
                    "nullable": pd.array([1, None, 3, 4, 5], dtype="Int64"),
                }
            )
            return df.__dataframe__()

        makers.append(("pandas", pandas_obj))
    if mods.get("pyarrow") is not None:
        pa = mods["pyarrow"]

        def arrow_table():
            return pa.table(
                {
                    "int": pa.array([1, None, 3, 4, 5]),
                    "str": pa.array(["a", None, "ccc", "d", "e"]),
                    "ts": pa.array([1, None, 3, 4, 5], pa.timestamp("us", tz="UTC")),
                    "cat": pa.array(["x", None, "y", "x", "y"]).dictionary_encode(),
                }
            )

        makers.append(("pyarrow", lambda: arrow_table().__dataframe__()))

        def ours():
            return dfb.to_interchange(arrow_table())

        makers.append(("dfbuffer.to_interchange(pyarrow)", ours))
    if mods.get("polars") is not None:
        pl = mods["polars"]

        def polars_obj():
            df = pl.DataFrame({"a": [1, 2]})
            if not hasattr(df, "__dataframe__"):
                raise NotAvailable(f"polars {_version(pl)} removed __dataframe__")
            return df.__dataframe__()

        makers.append(("polars", polars_obj))
    for name, make in makers:
        holder: dict[str, Any] = {}

        def run(make=make, holder=holder):
            holder["report"] = check_dataframe(make())
            return None, ""

        status, _, detail = _run(run)
        row: dict[str, Any] = {"producer": name, "status": status, "detail": detail}
        if "report" in holder:
            rep = holder["report"]
            row.update(
                ok=rep.ok,
                passed=len(rep.passed),
                failed_ids=rep.failed_ids,
                failed=[list(f) for f in rep.failed[:20]],
            )
            row["detail"] = (
                f"conformant ({len(rep.passed)} requirements passed)"
                if rep.ok
                else f"fails {', '.join(rep.failed_ids)} ({len(rep.passed)} passed)"
            )
        out.append(row)
    return out


def build_report() -> dict[str, Any]:
    """Runs every path.  Returns a JSON-serialisable dict (never raises on
    a missing library or feature)."""
    import numpy as np

    import dfbuffer
    from dfbuffer import _interchange

    mods: dict[str, Any] = {"numpy": np}
    versions: dict[str, str | None] = {
        "python": platform.python_version(),
        "dfbuffer": dfbuffer.__version__,
    }
    for name in PRODUCERS:
        mod = np if name == "numpy" else _import(name)
        mods[name] = mod
        versions[name] = None if mod is None else _version(mod)
    builders = {
        "numpy": lambda m: _numpy_paths(dfbuffer, np),
        "pandas": lambda m: _pandas_paths(dfbuffer, np, m),
        "pyarrow": lambda m: _pyarrow_paths(dfbuffer, np, m),
        "polars": lambda m: _polars_paths(dfbuffer, np, m),
        "nanoarrow": lambda m: _nanoarrow_paths(dfbuffer, np, m),
        "torch": lambda m: _torch_paths(dfbuffer, np, m),
        "cupy": lambda m: _cupy_paths(dfbuffer, np, m),
    }
    rows: list[dict[str, Any]] = []
    for name in PRODUCERS:
        mod = mods[name]
        if mod is None:
            rows.append(
                {
                    "producer": name,
                    "path": "*",
                    "status": "not installed",
                    "zero_copy": None,
                    "detail": "",
                }
            )
            continue
        try:
            paths = builders[name](mod)
        except Exception as exc:  # making the test data failed
            rows.append(
                {
                    "producer": name,
                    "path": "*",
                    "status": "error",
                    "zero_copy": None,
                    "detail": f"{type(exc).__name__}: {exc}",
                }
            )
            continue
        for path, fn in paths:
            status, zero_copy, detail = _run(fn)
            rows.append(
                {
                    "producer": name,
                    "path": path,
                    "status": status,
                    "zero_copy": zero_copy,
                    "detail": detail,
                }
            )
    return {
        "dfbuffer": dfbuffer.__version__,
        "dlpack": f"{_interchange.DLPACK_MAJOR_VERSION}.{_interchange.DLPACK_MINOR_VERSION}",
        "versions": versions,
        "demo": _demo(dfbuffer, mods),
        "protocols": _protocols(dfbuffer, np),
        "from_object_order": [row[0] for row in _interchange._protocols()],
        "rows": rows,
        "conformance": _conformance(dfbuffer, mods),
        "arrow_types": _arrow_types(_interchange),
    }


def _demo(dfb: Any, mods: dict[str, Any]) -> list[dict[str, Any]]:
    """The five conversions of ``dfbuffer._demo`` (never raises)."""
    from dfbuffer._demo import build_demo

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return build_demo(dfb, mods)


# The extension types dfbuffer recognises by their ARROW:extension:name (convert_extension.c,
# convert_nested.c), which the type table's one "extension" row (a storage layout) stands
# for: (name, logical type, zero-copy, conversion); zero-copy None: as the storage type.
EXTENSIONS = (
    ("extension arrow.bool8", "bool", True, "view"),
    ("extension arrow.uuid", "other", False, "objects"),
    ("extension arrow.fixed_shape_tensor", "list", True, "view"),
    ("extension arrow.json, arrow.opaque, others", "other", None, "storage"),
)


def _arrow_types(ix: Any) -> list[dict[str, Any]]:
    """The Arrow types of the C core's type table: whether dfbuffer reads
    each, and how it converts ("view": zero-copy); the extension row is
    one line per extension type dfbuffer recognises."""
    out: list[dict[str, Any]] = []
    for name, logical, layout, conv, _readable in ix._arrow_types():
        if layout == "storage":
            out.extend({"type": n, "logical": lg, "reads": True, "zero_copy": zc,
                        "converts": c} for n, lg, zc, c in EXTENSIONS)
            continue
        out.append({
            "type": name,
            "logical": logical,
            # nested types are read by their own walk, not the flat readers
            # (the table's `readable`): every type with a conversion is read
            "reads": conv != "refused",
            "zero_copy": conv == "view",
            "converts": conv,
        })
    return out


# the widest a line of the text report gets (a word longer than that is never cut)
_WIDTH = 100


def _wrap(text: str, width: int, indent: str = "", first: str = "") -> list[str]:
    """``text`` in lines of at most ``width`` characters, broken between words only
    (a longer word keeps a line of its own), the first line after ``first``, the
    others after ``indent``."""
    return textwrap.wrap(text, width, initial_indent=first, subsequent_indent=indent,
                         break_long_words=False, break_on_hyphens=False) or [""]


def _table(headers: list[str], rows: list[list[str]], limit: int = 72) -> str:
    """``rows`` under ``headers``, columns aligned; a cell longer than ``limit`` (the
    last column: than what ``_WIDTH`` leaves it) wraps onto further lines."""
    widths = [max(len(h), *(min(len(r[i]), limit) for r in rows), 0)
              for i, h in enumerate(headers[:-1])]
    last = max(20, min(limit, _WIDTH - sum(w + 2 for w in widths)))
    cells = [[_wrap(c, limit) for c in r[:-1]] + [_wrap(r[-1], last)] for r in rows]
    widths = [max(len(h), *(len(x) for r in cells for x in r[i]))
              for i, h in enumerate(headers)]
    line = lambda cells: "  ".join(c.ljust(w) for c, w in zip(cells, widths, strict=True))  # noqa: E731
    out = [line(headers), line(["-" * w for w in widths])]
    for r in cells:
        for k in range(max(len(c) for c in r)):
            out.append(line([c[k] if k < len(c) else "" for c in r]))
    return "\n".join(s.rstrip() for s in out)


def render(report: dict[str, Any]) -> str:
    """The human-readable form of build_report()'s result."""
    v = report["versions"]
    lines = [
        f"dfbuffer {report['dfbuffer']} (DLPack {report['dlpack']}, Python {v['python']})",
        "libraries: "
        + ", ".join(f"{n} {v[n]}" if v[n] else f"{n} not installed" for n in PRODUCERS),
        "",
    ]
    if report.get("demo"):
        from dfbuffer._demo import render_demo

        lines.extend(render_demo(report["demo"], _wrap, _WIDTH))
        lines.append("")
    lines.append("dfbuffer protocols:")
    width = max(len(k) for k in report["protocols"])
    for k, val in report["protocols"].items():
        lines.append(f"  {k.ljust(width)}  {val}")
    lines.append("")
    lines.append("Buffer.from_object tries, in order (the first the object speaks wins):")
    lines.append(
        "\n".join(f"  {i:2d}. {name}" for i, name in enumerate(report["from_object_order"], 1))
    )
    lines.append("")
    lines.append("Exchange paths (small int64 data made here):")
    body = []
    for r in report["rows"]:
        works = {"ok": "yes", "n/a": "n/a", "error": "FAILED"}.get(r["status"], r["status"])
        zc = {True: "yes", False: "no", None: "-"}[r["zero_copy"]]
        detail = r["detail"] if r["status"] != "ok" or r["zero_copy"] is False else ""
        body.append([r["producer"], r["path"], works, zc, detail])
    lines.append(_table(["producer", "path", "works", "zero-copy", "detail"], body))
    lines.append("")
    lines.append("Arrow types (the type table; zero-copy where the result is a view):")
    body = [
        [
            t["type"],
            "yes" if t["reads"] else "no",
            {True: "yes", False: "no", None: "as storage"}[t["zero_copy"]] if t["reads"] else "-",
            t["converts"],
        ]
        for t in report["arrow_types"]
    ]
    lines.append(_table(["type", "reads", "zero-copy", "conversion"], body))
    lines.append("")
    lines.append("Interchange conformance (dfbuffer.testing.check_dataframe):")
    body = [[c["producer"], c["status"], c["detail"]] for c in report["conformance"]]
    if body:
        lines.append(_table(["producer", "status", "result"], body, limit=90))
        failures = _first_failures(report["conformance"])
        lines.extend(_wrap(_LEGEND + ("; the first failure of each:" if failures else ""),
                           _WIDTH, "  "))
        lines.extend(failures)
    else:
        lines.append("  (no interchange producer installed)")
    return "\n".join(lines)


_LEGEND = (
    "legend: status: whether the check ran; P-n: producer requirement n of "
    "docs/requirements.md, checked by dfbuffer.testing"
)


def _first_failures(conformance: list[dict[str, Any]], limit: int = _WIDTH) -> list[str]:
    """One entry per failed requirement ID and producer: its first failure message,
    wrapped between words at ``limit`` characters."""
    out = []
    for c in conformance:
        seen: set[str] = set()
        for rid, msg in c.get("failed") or ():
            if rid not in seen:
                seen.add(rid)
                out.extend(_wrap(f"{rid} {c['producer']}: {msg}", limit, "      ", "  "))
    return out


def main(argv: list[str] | None = None) -> int:
    """Entry point of ``python -m dfbuffer``.  Returns the exit code (0)."""
    parser = argparse.ArgumentParser(
        prog="python -m dfbuffer",
        description="Report which data exchange paths work with the installed libraries.",
    )
    parser.add_argument("--json", action="store_true", help="print JSON for machines")
    args = parser.parse_args(argv)
    report = build_report()
    if args.json:
        print(json.dumps(report, indent=2, default=str))
    else:
        print(render(report))
    return 0

