"""``ndarray.resize`` around dfbuffer (docs/design.md, "Producers that free memory under a
live export").

A producer that frees memory while dfbuffer holds an export of it breaks the export's
contract, and nothing can be promised then; NumPy itself refuses such a resize while
dfbuffer holds the array (the reference check), which the first tests pin.  What dfbuffer
does promise is that it never reads memory it manages after that memory is freed: the
arrays it returned belong to the caller, who may resize them (even with refcheck=False)
while other calls run in other threads.  The threaded test resizes only arrays dfbuffer
made, so under ASan it must be clean.
"""

from __future__ import annotations

import queue
import threading

import numpy as np
import pandas as pd
import pyarrow as pa
import pytest

import dfbuffer
from dfbuffer import Buffer


def test_numpy_refuses_to_resize_an_exported_source(collect):
    a = np.arange(16, dtype=np.int64)
    b = Buffer.from_object(a)
    with pytest.raises(ValueError, match="resize"):
        a.resize(1024)
    out = dfbuffer.column_to_ndarray(pa.array(a))  # zero copy over pyarrow's memory
    assert out.flags.owndata is False
    with pytest.raises(ValueError):
        out.resize(1024, refcheck=False)  # NumPy: it does not own its data
    del b, out
    collect()
    a.resize(1024)  # every export released: the resize is allowed again
    assert a.shape == (1024,) and a[15] == 15


def test_zero_copy_results_cannot_be_resized():
    """A zero-copy result's data belongs to the producer: NumPy refuses to resize it,
    refcheck or not, so a caller cannot free producer memory through dfbuffer."""
    df = pd.DataFrame({"x": np.arange(8.0)})
    for out in (dfbuffer.from_dataframe(df)["x"],
                np.asarray(Buffer.from_object(np.arange(4))),
                dfbuffer.buffer_to_ndarray(Buffer.from_object(np.arange(4)), "i8")):
        assert not out.flags.owndata
        with pytest.raises(ValueError):
            out.resize(64, refcheck=False)


def owned(arr) -> bool:
    return isinstance(arr, np.ndarray) and arr.flags.owndata and arr.base is None


def test_resizing_results_while_converters_run():
    """One thread converts (to_matrix with worker threads, column_to_ndarray with nulls,
    strings and categoricals, from_dataframe with copies) and checks each result; another
    resizes the results it is handed, refcheck=False, growing and shrinking them, while the
    next conversions run.  dfbuffer keeps no pointer into a result it returned."""
    n = 3000
    df = pd.DataFrame({"a": np.arange(n, dtype=np.int32), "b": np.linspace(0, 1, n),
                       "c": pd.array([None if k % 5 == 0 else k for k in range(n)],
                                     dtype="Int64")})
    tbl = pa.table({"s": pa.array([None if k % 3 == 0 else str(k) for k in range(n)]),
                    "d": pa.array(["p", "q", "r"] * (n // 3)).dictionary_encode(),
                    "f": pa.array([None if k % 4 == 0 else float(k) for k in range(n)])})
    handed: queue.Queue = queue.Queue(maxsize=8)
    errors: list = []
    resized = [0]

    def convert():
        try:
            for r in range(12):
                m = dfbuffer.to_matrix(df, threads=4, order="CF"[r % 2])
                assert m.shape == (n, 3) and m[7, 0] == 7 and np.isnan(m[5, 2])
                s = dfbuffer.column_to_ndarray(tbl.column("s"), nulls="fill")
                assert s[1] == "1" and s[3] is None
                d = dfbuffer.column_to_ndarray(tbl.column("d"), categorical="codes")
                assert d.codes[:4].tolist() == [0, 1, 2, 0]
                f = dfbuffer.column_to_ndarray(tbl.column("f"), nulls="fill")
                assert f[5] == 5.0 and np.isnan(f[4])
                got = dfbuffer.from_dataframe(tbl, nulls="fill")
                # a result read back through dfbuffer, then handed over
                assert np.array_equal(np.asarray(Buffer.from_object(m))[:, 0], np.arange(n))
                for arr in (m, s, d.codes, f, got["f"], got["s"]):
                    handed.put(arr)
        except BaseException as e:  # noqa: BLE001 - reported below
            errors.append(e)
        finally:
            handed.put(None)

    def resize():
        k = 0
        while (arr := handed.get()) is not None:
            if owned(arr):
                k += 1
                arr.resize(17 if k % 2 else 5 * arr.size + 1, refcheck=False)
                arr.fill(arr.flat[0])  # and write all of it
                resized[0] += 1

    threads = [threading.Thread(target=convert), threading.Thread(target=resize)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    assert resized[0] >= 24  # to_matrix's and the copies' results at least
