"""dfbuffer on Spark: NumPy matrices from the Arrow batches of ``mapInArrow`` and
``groupBy(...).applyInArrow`` (pyspark >= 4.0), a distributed least squares.

Run it (starts Spark in local mode, one core, no UI, on the loopback interface; needs
``pip install pyspark`` and a Java runtime; checks the results and prints one JSON line of
checks; exit status 1 if one fails):

    python examples/spark_map_in_arrow.py [ROWS]

What it shows (see docs/at-scale.md, "Spark"):

1. ``df.mapInArrow(gram_partition, GRAM_SCHEMA)``: each Python worker reads its
   partition's Arrow batches as one stream (``pyarrow.RecordBatchReader.from_batches``)
   with ``dfbuffer.iter_matrices(reader, BATCH_ROWS, dtype=np.float64, out=out)``, every
   batch written into the same ``out``, and returns one row: the partition's Gram matrix
   ``A.T @ A`` of ``A = [1, X, y]`` (complete rows only).  The driver adds the partitions'
   matrices and solves the normal equations: the least-squares coefficients, equal (within
   float tolerance) to ``numpy.linalg.lstsq`` on ``dfbuffer.to_matrix`` of the whole table.
   Each worker holds one Arrow batch and one ``out`` at a time, whatever the partition size.
2. ``df.mapInArrow(batch_stats, STATS_SCHEMA)``: ``dfbuffer.to_matrix(batch,
   nulls="mask")`` of every Arrow batch as it comes, one row of column sums and null counts
   per batch.
3. ``df.groupBy("g").applyInArrow(group_means, MEANS_SCHEMA)``: each group arrives as one
   ``pyarrow.Table``; ``to_matrix(table, nulls="mask").mean(axis=0)`` per group.

Spark sends batches to its Python workers as Arrow IPC over a socket: pyarrow reads them
into buffers of its own, which ``from_dataframe`` / ``iter_batches`` would view without a
copy; a matrix (``to_matrix``, ``iter_matrices``) is one copy of the batch's columns into
one 2-D array (into ``out``, reused, with ``iter_matrices``).
"""

from __future__ import annotations

import itertools
import json
import os
import sys
from collections.abc import Iterator
from typing import Any

import numpy as np
import pyarrow as pa

import dfbuffer

FEATURES = ["x0", "x1", "x2"]
TARGET = "y"
BATCH_ROWS = 256  # rows per iter_matrices batch in a worker
K = len(FEATURES) + 2  # A = [1, X, y]

GRAM_SCHEMA = "gram array<double>, rows long, dropped long"
STATS_SCHEMA = "rows long, sums array<double>, nulls array<long>"
MEANS_SCHEMA = "g long, rows long, means array<double>"


def gram_partition(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
    """mapInArrow: one partition's Arrow batches -> one row, its Gram matrix."""
    batches = iter(batches)
    first = next(batches, None)
    if first is None:
        return
    reader = pa.RecordBatchReader.from_batches(first.schema, itertools.chain([first], batches))
    gram = np.zeros((K, K))
    rows = dropped = 0
    out = np.empty((BATCH_ROWS, len(FEATURES) + 1))
    for m in dfbuffer.iter_matrices(reader, BATCH_ROWS, columns=[*FEATURES, TARGET],
                                    dtype=np.float64, out=out):
        complete = ~np.isnan(m).any(axis=1)  # nulls="fill": NaN where null
        a = np.empty((int(complete.sum()), K))
        a[:, 0] = 1.0
        a[:, 1:] = m[complete]
        gram += a.T @ a
        rows += len(m)
        dropped += len(m) - len(a)
    yield pa.RecordBatch.from_pydict(
        {"gram": [gram.ravel().tolist()], "rows": [rows], "dropped": [dropped]},
        schema=pa.schema([("gram", pa.list_(pa.float64())), ("rows", pa.int64()),
                          ("dropped", pa.int64())]))


def batch_stats(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
    """mapInArrow: every Arrow batch -> one row of column sums and null counts."""
    for batch in batches:
        m = dfbuffer.to_matrix(batch, columns=FEATURES, dtype=np.float64, nulls="mask")
        yield pa.RecordBatch.from_pydict({
            "rows": [len(m)],
            "sums": [m.sum(axis=0).filled(0.0).tolist()],
            "nulls": [np.ma.getmaskarray(m).sum(axis=0).tolist()],
        }, schema=pa.schema([("rows", pa.int64()), ("sums", pa.list_(pa.float64())),
                             ("nulls", pa.list_(pa.int64()))]))


def group_means(table: pa.Table) -> pa.Table:
    """applyInArrow: one group, as one pyarrow Table -> one row of means (nulls left
    out)."""
    m = dfbuffer.to_matrix(table, columns=FEATURES, dtype=np.float64, nulls="mask")
    return pa.table({
        "g": [table.column("g")[0].as_py()],
        "rows": [table.num_rows],
        "means": [m.mean(axis=0).filled(np.nan).tolist()],
    }, schema=pa.schema([("g", pa.int64()), ("rows", pa.int64()),
                         ("means", pa.list_(pa.float64()))]))


def source(spark: Any, n: int, partitions: int = 2) -> Any:
    """Features with nulls (x2 null in one row of 13), a target and a group key, all
    double but the key (a Spark literal such as ``10.0`` is a decimal, which to_matrix
    refuses: ``0D`` is a double)."""
    return spark.range(n, numPartitions=partitions).selectExpr(
        "id",
        "id % 3 AS g",
        "sin(id * 0.1) AS x0",
        "cos(id * 0.7) AS x1",
        "CASE WHEN id % 13 = 0 THEN NULL ELSE double(id % 11) / 10 END AS x2",
    ).selectExpr(
        "*", "1.5 * x0 - 2.0 * x1 + 0.5 * coalesce(x2, 0D) + 0.25D + 0.01D * sin(id) AS y")


def session() -> Any:
    """A local Spark: one core, no UI, loopback only, small shuffles and Arrow batches
    (several per partition, so that iter_matrices re-chunks across their borders)."""
    from pyspark.sql import SparkSession

    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)  # the workers' Python
    os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
    return (SparkSession.builder.master("local[1]").appName("dfbuffer-example")
            .config("spark.ui.enabled", "false")
            .config("spark.ui.showConsoleProgress", "false")
            .config("spark.driver.host", "127.0.0.1")
            .config("spark.driver.bindAddress", "127.0.0.1")
            .config("spark.sql.shuffle.partitions", "2")
            .config("spark.default.parallelism", "1")
            .config("spark.sql.execution.arrow.maxRecordsPerBatch", "300")
            .getOrCreate())


def run(spark: Any, n: int = 5_000) -> dict[str, bool]:
    """Everything above; returns the checks (all must be true), each against the same
    computation on ``dfbuffer.to_matrix`` of the whole table (``df.toArrow()``)."""
    df = source(spark, n)
    whole = df.toArrow().sort_by("id")
    W = dfbuffer.to_matrix(whole, columns=[*FEATURES, TARGET], dtype=np.float64)
    checks: dict[str, bool] = {}

    # 1. distributed least squares
    parts = df.mapInArrow(gram_partition, GRAM_SCHEMA).toArrow()
    gram = np.sum([np.reshape(g, (K, K)) for g in parts.column("gram").to_pylist()], axis=0)
    coef = np.linalg.solve(gram[:-1, :-1], gram[:-1, -1])  # [intercept, coefficients]
    complete = W[~np.isnan(W).any(axis=1)]
    A = np.column_stack([np.ones(len(complete)), complete[:, :-1]])
    ref, *_ = np.linalg.lstsq(A, complete[:, -1], rcond=None)
    checks["partitions"] = parts.num_rows == 2
    checks["rows"] = sum(parts.column("rows").to_pylist()) == n
    checks["dropped_rows"] = sum(parts.column("dropped").to_pylist()) == n - len(complete)
    checks["gram_equals_single_machine"] = bool(np.allclose(
        gram, np.column_stack([A, complete[:, -1]]).T @ np.column_stack([A, complete[:, -1]]),
        rtol=1e-10, atol=1e-8))
    checks["least_squares_equals_lstsq"] = bool(np.allclose(coef, ref, rtol=1e-9, atol=1e-9))
    checks["least_squares_recovers_model"] = bool(
        np.allclose(coef, [0.25, 1.5, -2.0, 0.5], atol=0.02))

    # 2. per-batch statistics
    stats = df.mapInArrow(batch_stats, STATS_SCHEMA).toArrow()
    Wm = np.ma.masked_invalid(W[:, :len(FEATURES)])
    checks["batches_of_maxRecordsPerBatch"] = max(stats.column("rows").to_pylist()) <= 300 \
        and stats.num_rows >= n // 300
    checks["batch_sums"] = bool(np.allclose(
        np.sum(stats.column("sums").to_pylist(), axis=0), Wm.sum(axis=0).filled(0.0)))
    checks["batch_nulls"] = np.sum(stats.column("nulls").to_pylist(), axis=0).tolist() == \
        np.ma.getmaskarray(Wm).sum(axis=0).tolist()

    # 3. per-group means
    means = df.groupBy("g").applyInArrow(group_means, MEANS_SCHEMA).toArrow().sort_by("g")
    g = whole.column("g").to_numpy()
    ref_means = [Wm[g == k].mean(axis=0).filled(np.nan) for k in range(3)]
    checks["groups"] = means.column("g").to_pylist() == [0, 1, 2]
    checks["group_rows"] = means.column("rows").to_pylist() == [int((g == k).sum())
                                                                 for k in range(3)]
    checks["group_means"] = bool(np.allclose(means.column("means").to_pylist(), ref_means))
    return checks


def main(argv: list[str]) -> int:
    n = int(argv[1]) if len(argv) > 1 else 5_000
    spark = session()
    try:
        checks = run(spark, n)
    finally:
        spark.stop()
    print(json.dumps(checks))
    return 0 if all(checks.values()) else 1


if __name__ == "__main__":
    raise SystemExit(main(sys.argv))
