"""dfbuffer at scale: convert a Dask DataFrame partition by partition on worker processes.

Run it (starts a two-process LocalCluster on the loopback interface, its HTTP server on a
free port):

    python examples/dask_partitions.py

What it shows (see docs/at-scale.md):

1. ``map_partitions``: each worker converts its own pyarrow-backed pandas partition with
   ``dfbuffer.from_dataframe`` (zero-copy views of the Arrow memory, masked arrays for
   nulls) and returns a small per-partition summary.
2. ``to_delayed``: the converted NumPy arrays themselves, gathered to the client and
   checked against the source frame.
2b. ``map_partitions`` with ``dfbuffer.iter_matrices``: each worker reads its partition in
   fixed-size batches written into one reused array (bounded memory, whatever the
   partition's size) and returns the partition's Gram matrix ``A.T @ A`` of
   ``A = [1, x, y]`` (complete rows); their sum equals the one of the whole frame's
   ``dfbuffer.to_matrix``.
3. A ``dfbuffer.Buffer`` made on one worker and consumed on the other arrives intact.
4. distributed's serialisation carries a Buffer's memory out of band: the pickle frame is
   a few hundred bytes, the data travels as a separate frame that *is* the Buffer's memory
   on the sending side (no copy into the pickle stream).
"""

from __future__ import annotations

import dask
import dask.dataframe as dd
import numpy as np
import pandas as pd
import pyarrow as pa

import dfbuffer

N_ROWS = 20_000
N_PARTITIONS = 4


def source_frame(n: int = N_ROWS) -> pd.DataFrame:
    """A pandas frame with pyarrow-backed columns, nulls included."""
    i = np.arange(n)
    return pd.DataFrame({
        "x": pd.array(i, dtype=pd.ArrowDtype(pa.int64())),
        "y": pd.array(pa.array(i * 0.5, mask=i % 7 == 0), dtype=pd.ArrowDtype(pa.float64())),
        "s": pd.array(pa.array([f"k{v % 13}" for v in i], mask=i % 5 == 0),
                      dtype=pd.ArrowDtype(pa.string())),
    })


def partition_summary(part: pd.DataFrame) -> pd.DataFrame:
    """Runs on a worker: convert one partition with dfbuffer, summarise it."""
    cols = dfbuffer.from_dataframe(part)
    y = cols["y"]
    return pd.DataFrame({
        "rows": [len(cols["x"])],
        "x_sum": [int(cols["x"].sum())],
        "y_nulls": [int(np.ma.count_masked(y))],
        "y_sum": [float(y.sum()) if y.count() else 0.0],
        "s_nulls": [int(np.ma.count_masked(cols["s"]))],
        "x_zero_copy": [not cols["x"].flags.writeable],  # a read-only view of Arrow memory
    })


SUMMARY_META = pd.DataFrame({
    "rows": pd.Series([], dtype="int64"), "x_sum": pd.Series([], dtype="int64"),
    "y_nulls": pd.Series([], dtype="int64"), "y_sum": pd.Series([], dtype="float64"),
    "s_nulls": pd.Series([], dtype="int64"), "x_zero_copy": pd.Series([], dtype="bool"),
})


GRAM_BATCH_ROWS = 512  # rows per iter_matrices batch on a worker
GRAM_META = pd.DataFrame({f"g{i}": pd.Series([], dtype="float64") for i in range(9)})


def partition_gram(part: pd.DataFrame) -> pd.DataFrame:
    """Runs on a worker: the Gram matrix of [1, x, y] over the partition's complete rows,
    read in batches of GRAM_BATCH_ROWS into one reused matrix."""
    gram = np.zeros((3, 3))
    out = np.empty((GRAM_BATCH_ROWS, 2))
    for m in dfbuffer.iter_matrices(part, GRAM_BATCH_ROWS, columns=["x", "y"],
                                    dtype=np.float64, out=out):
        m = m[~np.isnan(m).any(axis=1)]  # nulls="fill": NaN where y is null
        a = np.column_stack([np.ones(len(m)), m])
        gram += a.T @ a
    return pd.DataFrame({f"g{i}": [v] for i, v in enumerate(gram.ravel())})


def whole_gram(pdf: pd.DataFrame) -> np.ndarray:
    """The same Gram matrix from one to_matrix of the whole frame."""
    m = dfbuffer.to_matrix(pdf, columns=["x", "y"], dtype=np.float64)
    m = m[~np.isnan(m).any(axis=1)]
    a = np.column_stack([np.ones(len(m)), m])
    return a.T @ a


def make_buffer(n: int) -> dfbuffer.Buffer:
    """Runs on a worker: a Buffer over a fresh array (the array is its owner)."""
    return dfbuffer.Buffer.from_object(np.arange(n, dtype=np.float64) * 2.0)


def check_buffer(buf: dfbuffer.Buffer, n: int) -> tuple:
    """Runs on the other worker: what arrived."""
    arr = np.asarray(buf)
    return (type(buf).__name__, buf.dtype.str, buf.shape, buf.readonly,
            bool(np.array_equal(arr, np.arange(n) * 2.0)))


def out_of_band_frames(buf: dfbuffer.Buffer) -> dict:
    """How distributed serialises a Buffer: frame sizes and whether the data frame is
    the Buffer's own memory."""
    from distributed.protocol import deserialize, serialize

    header, frames = serialize(buf, serializers=("pickle",))
    data_frames = [f for f in frames[1:] if memoryview(f).nbytes == buf.nbytes]
    same_memory = any(
        np.frombuffer(memoryview(f), dtype=np.uint8).ctypes.data == buf.ptr for f in data_frames)
    back = deserialize(header, frames)
    return {
        "serializer": header["serializer"],
        "pickle_frame_bytes": memoryview(frames[0]).nbytes,
        "data_frames": len(data_frames),
        "data_frame_is_buffer_memory": same_memory,
        "round_trip_equal": bool(np.array_equal(np.asarray(back), np.asarray(buf))),
    }


def run(client, n: int = N_ROWS, npartitions: int = N_PARTITIONS,
        timeout: float = 120) -> dict:
    """Everything above on `client`, each wait bounded by `timeout` seconds; returns the
    checks (all must be true)."""
    pdf = source_frame(n)
    ddf = dd.from_pandas(pdf, npartitions=npartitions)

    # 1. per-partition conversion inside map_partitions
    summary = client.compute(ddf.map_partitions(partition_summary, meta=SUMMARY_META)).result(
        timeout=timeout)
    checks = {
        "rows": int(summary["rows"].sum()) == n,
        "x_sum": int(summary["x_sum"].sum()) == int(pdf["x"].sum()),
        "y_nulls": int(summary["y_nulls"].sum()) == int(pdf["y"].isna().sum()),
        "y_sum": bool(np.isclose(summary["y_sum"].sum(), pdf["y"].sum())),
        "s_nulls": int(summary["s_nulls"].sum()) == int(pdf["s"].isna().sum()),
        "zero_copy_on_workers": bool(summary["x_zero_copy"].all()),
    }

    # 2. the converted arrays themselves, gathered
    parts = client.compute([dask.delayed(dfbuffer.from_dataframe)(p) for p in ddf.to_delayed()])
    converted = [f.result(timeout=timeout) for f in parts]
    x = np.concatenate([c["x"] for c in converted])
    y = np.ma.concatenate([c["y"] for c in converted])
    s = np.ma.concatenate([c["s"] for c in converted])
    checks["gathered_x"] = bool(np.array_equal(x, pdf["x"].to_numpy()))
    checks["gathered_y_mask"] = bool(np.array_equal(np.ma.getmaskarray(y),
                                                    pdf["y"].isna().to_numpy()))
    checks["gathered_y"] = bool(np.array_equal(y.compressed(), pdf["y"].dropna().to_numpy()))
    got_s = [None if m else v for v, m in zip(s.data.tolist(), np.ma.getmaskarray(s), strict=True)]
    checks["gathered_s"] = got_s == [None if pd.isna(v) else v for v in pdf["s"].tolist()]

    # 2b. iter_matrices inside map_partitions: per-partition Gram matrices, summed
    grams = client.compute(ddf.map_partitions(partition_gram, meta=GRAM_META)).result(
        timeout=timeout)
    gram = grams.to_numpy().sum(axis=0).reshape(3, 3)
    checks["iter_matrices_partitions"] = len(grams) == npartitions
    checks["iter_matrices_gram"] = bool(np.allclose(gram, whole_gram(pdf), rtol=1e-12))

    # 3. a Buffer made on one worker, consumed on the other
    a, b = sorted(client.scheduler_info()["workers"])[:2]
    made = client.submit(make_buffer, 1000, workers=[a], pure=False)
    seen = client.submit(check_buffer, made, 1000, workers=[b]).result(timeout=timeout)
    checks["buffer_between_workers"] = seen == ("Buffer", "<f8", (1000,), False, True)
    local = made.result(timeout=timeout)
    checks["buffer_to_client"] = bool(np.array_equal(np.asarray(local), np.arange(1000) * 2.0))

    # 4. out-of-band frames
    frames = out_of_band_frames(dfbuffer.Buffer.from_object(np.arange(100_000, dtype="u1")))
    checks["pickle5_out_of_band"] = (
        frames["serializer"] == "pickle" and frames["data_frames"] == 1
        and frames["pickle_frame_bytes"] < 1000 and frames["data_frame_is_buffer_memory"]
        and frames["round_trip_equal"])
    return checks


def main() -> int:
    from dask.distributed import Client, LocalCluster

    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True, host="127.0.0.1",
                      dashboard_address="127.0.0.1:0") as cluster, Client(cluster) as client:
        checks = run(client)
    for name, ok in checks.items():
        print(f"{'ok  ' if ok else 'FAIL'} {name}")
    return 0 if all(checks.values()) else 1


if __name__ == "__main__":
    raise SystemExit(main())
