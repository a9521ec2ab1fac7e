"""dfbuffer on Ray Data: NumPy matrices from ``map_batches(batch_format="pyarrow")`` and a
``collate_fn`` for ``iter_torch_batches`` built on ``dfbuffer.to_matrix``.

Run it (starts a one-CPU local Ray, no dashboard, a small object store; needs ``pip
install 'ray[data]'``, and torch for step 3; checks the results and prints one JSON line
of checks; exit status 1 if one fails):

    python examples/ray_data.py [ROWS]

What it shows (see docs/at-scale.md, "Ray Data"):

1. ``ds.map_batches(batch_gram, batch_format="pyarrow", batch_size=BATCH_ROWS)``: each
   task turns its Arrow batch into one float64 matrix with ``dfbuffer.to_matrix`` and
   returns one row, the batch's Gram matrix ``A.T @ A`` of ``A = [1, X, y]``; the driver
   adds them and solves the normal equations: the least-squares coefficients, equal
   (within float tolerance) to ``numpy.linalg.lstsq`` on ``to_matrix`` of the whole table.
2. ``ds.map_batches(Predict(coef), batch_format="pyarrow")``: a prediction column per
   batch (``X @ coef``), row for row what the whole matrix gives.
3. ``ds.iter_torch_batches(batch_size=..., collate_fn=MatrixCollate())``: an
   ``ArrowBatchCollateFn`` whose ``__call__`` gets each batch as a pyarrow Table and
   returns ``(X, y)`` tensors: ``torch.from_dlpack`` of one ``to_matrix(...,
   dtype=np.float32)``, no copy after the matrix.  Without torch, the same function over
   ``ds.iter_batches(batch_format="pyarrow")`` gives NumPy matrices.

Ray Data's batches are Arrow tables in its object store: a matrix is one copy of a
batch's columns into one 2-D array; ``dfbuffer.from_dataframe(batch)`` would give
zero-copy column views instead.  Memory per task is bounded by ``batch_size``.
"""

from __future__ import annotations

import json
import sys
from typing import Any

import numpy as np
import pyarrow as pa

import dfbuffer

FEATURES = ["x0", "x1", "x2"]
TARGET = "y"
BATCH_ROWS = 500
K = len(FEATURES) + 2  # A = [1, X, y]


def source_table(n: int, seed: int = 0) -> pa.Table:
    """Features (x2 null in one row of 13), a target and a row id."""
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, len(FEATURES)))
    y = X @ np.array([1.5, -2.0, 0.5]) + 0.25 + rng.normal(scale=0.01, size=n)
    i = np.arange(n)
    return pa.table({
        "row": i,
        "x0": X[:, 0],
        "x1": X[:, 1],
        "x2": pa.array(X[:, 2], mask=i % 13 == 0),
        "y": y,
    })


def batch_gram(batch: pa.Table) -> pa.Table:
    """map_batches: one Arrow batch -> one row, its Gram matrix (complete rows only)."""
    m = dfbuffer.to_matrix(batch, columns=[*FEATURES, TARGET], dtype=np.float64)
    m = m[~np.isnan(m).any(axis=1)]  # nulls="fill": NaN where null
    a = np.column_stack([np.ones(len(m)), m])
    return pa.table({"gram": [(a.T @ a).ravel().tolist()], "rows": [batch.num_rows]},
                    schema=pa.schema([("gram", pa.list_(pa.float64())), ("rows", pa.int64())]))


class Predict:
    """map_batches: ``X @ coef + intercept`` for every row (NaN where a feature is null)."""

    def __init__(self, coef: np.ndarray) -> None:
        self.coef = np.asarray(coef, dtype=np.float64)

    def __call__(self, batch: pa.Table) -> pa.Table:
        X = dfbuffer.to_matrix(batch, columns=FEATURES, dtype=np.float64)
        pred = X @ self.coef[1:] + self.coef[0]
        return pa.table({"row": batch.column("row"), "pred": pred})


def to_xy(batch: pa.Table) -> tuple[np.ndarray, np.ndarray]:
    """One float32 matrix of a batch, split into (X, y) views."""
    m = dfbuffer.to_matrix(batch, columns=[*FEATURES, TARGET, "row"], dtype=np.float32)
    return m[:, :len(FEATURES) + 1], m[:, len(FEATURES) + 1]  # (X and y, row ids)


def collate_class() -> type:
    """``MatrixCollate``: an ArrowBatchCollateFn that gives ``(features_and_target,
    row_ids)`` float32 tensors of a batch, over to_matrix's memory (torch needed)."""
    import torch
    from ray.data.collate_fn import ArrowBatchCollateFn

    class MatrixCollate(ArrowBatchCollateFn):
        def __call__(self, batch: pa.Table) -> Any:
            xy, rows = to_xy(batch)
            t = torch.from_dlpack(xy)  # no copy: a view of the matrix
            return t, torch.from_dlpack(rows)

    return MatrixCollate


def init() -> None:
    """A local Ray: one CPU, no dashboard, 100 MB of object store, no progress bars."""
    import ray
    import ray.data

    ray.init(num_cpus=1, include_dashboard=False, object_store_memory=100 * 2**20,
             log_to_driver=False, configure_logging=False)
    ctx = ray.data.DataContext.get_current()
    ctx.enable_progress_bars = False


def run(n: int = 4_000) -> dict[str, bool]:
    """Everything above on a started Ray; returns the checks (all must be true), each
    against the same computation on ``dfbuffer.to_matrix`` of the whole table."""
    import ray.data

    table = source_table(n)
    W = dfbuffer.to_matrix(table, columns=[*FEATURES, TARGET, "row"], dtype=np.float64)
    ds = ray.data.from_arrow(table).repartition(4)
    checks: dict[str, bool] = {}

    # 1. least squares from per-batch Gram matrices
    grams = ds.map_batches(batch_gram, batch_format="pyarrow", batch_size=BATCH_ROWS)
    parts = pa.concat_tables(ray.get(grams.to_arrow_refs()))
    gram = np.sum([np.reshape(g, (K, K)) for g in parts.column("gram").to_pylist()], axis=0)
    coef = np.linalg.solve(gram[:-1, :-1], gram[:-1, -1])
    c = W[~np.isnan(W).any(axis=1)]
    A = np.column_stack([np.ones(len(c)), c[:, :len(FEATURES)]])
    ref, *_ = np.linalg.lstsq(A, c[:, len(FEATURES)], rcond=None)
    checks["rows"] = sum(parts.column("rows").to_pylist()) == n
    checks["several_batches"] = parts.num_rows >= n // BATCH_ROWS
    checks["least_squares_equals_lstsq"] = bool(np.allclose(coef, ref, rtol=1e-9, atol=1e-9))
    checks["least_squares_recovers_model"] = bool(
        np.allclose(coef, [0.25, 1.5, -2.0, 0.5], atol=0.02))

    # 2. predictions, row for row
    preds = ds.map_batches(Predict(coef), batch_format="pyarrow", batch_size=BATCH_ROWS)
    p = pa.concat_tables(ray.get(preds.to_arrow_refs())).sort_by("row")
    want = W[:, :len(FEATURES)] @ coef[1:] + coef[0]
    checks["predictions"] = p.column("row").to_pylist() == list(range(n)) and bool(
        np.allclose(p.column("pred").to_numpy(zero_copy_only=False), want, equal_nan=True))

    # 3. batches for a training loop: NumPy (always), torch tensors (when torch imports)
    got = [np.column_stack(to_xy(b)) for b in ds.iter_batches(batch_size=256,
                                                               batch_format="pyarrow")]
    W32 = W.astype(np.float32)
    m = np.concatenate(got)
    checks["numpy_batches"] = bool(
        np.array_equal(m[np.argsort(m[:, -1], kind="stable")], W32, equal_nan=True))
    try:
        import torch
    except ImportError:
        return checks
    batches = list(ds.iter_torch_batches(batch_size=256, collate_fn=collate_class()(),
                                         device="cpu"))
    t = torch.cat([torch.cat([xy, rows[:, None]], dim=1) for xy, rows in batches]).numpy()
    checks["torch_batches"] = bool(
        np.array_equal(t[np.argsort(t[:, -1], kind="stable")], W32, equal_nan=True))
    checks["torch_batch_sizes"] = all(len(b[0]) == 256 for b in batches[:-1])
    # the collate function's tensors are views of to_matrix's array, not copies
    xy, rows = to_xy(table.slice(0, 10))
    checks["collate_zero_copy"] = torch.from_dlpack(xy).data_ptr() == xy.ctypes.data
    return checks


def main(argv: list[str]) -> int:
    import ray

    n = int(argv[1]) if len(argv) > 1 else 4_000
    init()
    try:
        checks = run(n)
    finally:
        ray.shutdown()
    print(json.dumps(checks))
    return 0 if all(checks.values()) else 1


if __name__ == "__main__":
    raise SystemExit(main(sys.argv))
