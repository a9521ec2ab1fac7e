"""dfbuffer in a training loop: a torch IterableDataset over a Parquet dataset (or any
Arrow stream), at bounded memory, each batch handed to torch without a copy.

Run it (writes a small Parquet dataset of four files to a temporary directory, trains on
it, checks the results and prints one JSON line of checks; exit status 1 if one fails):

    python examples/torch_iterable_dataset.py

What it shows (see docs/at-scale.md, "torch and scikit-learn"):

1. ``ArrowMatrixDataset``: ``pyarrow.dataset.dataset(path).scanner(batch_size=...)
   .to_reader()`` read by ``dfbuffer.iter_matrices(reader, batch_size, dtype=np.float32,
   out=out)``: one source batch read at a time, every batch written into the same
   ``out`` array, and ``torch.from_dlpack(X)`` a tensor over that memory (no copy: the
   tensor's ``data_ptr()`` is ``out``'s address).  Memory is bounded by the scanner's
   batch size plus one ``out``, whatever the size of the dataset.
2. Worker sharding: in a ``DataLoader(num_workers=k)`` each worker process reads its own
   fragments (files), ``fragments[worker.id::worker.num_workers]``
   (``torch.utils.data.get_worker_info()``), so every row is read exactly once.  A worker
   yields a new matrix per batch instead of writing into ``out``: its tensors are pickled
   to the main process by a feeder thread *after* ``__next__`` returned, so a reused
   ``out`` could be overwritten before it was sent (torch copies worker tensors into
   shared memory anyway).
3. A training loop (linear regression, ``torch.optim.SGD``) over the batches, and the
   same loop over scikit-learn's ``SGDRegressor.partial_fit`` (when scikit-learn is
   installed): a model trained out of core, batch by batch.

Only the dataset class needs torch; ``iter_xy`` and ``fit_sgd_regressor`` work without it.
"""

from __future__ import annotations

import json
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.dataset as pads
import pyarrow.parquet as pq

import dfbuffer

FEATURES = ["x0", "x1", "x2"]
TARGET = "y"
COEF = np.array([1.5, -2.0, 0.5])
INTERCEPT = 0.25


def write_dataset(path: Path, n_rows: int = 8_000, n_files: int = 4, seed: int = 0) -> Path:
    """A Parquet dataset of ``n_files`` files: features, a target and a row id."""
    rng = np.random.default_rng(seed)
    path.mkdir(parents=True, exist_ok=True)
    per_file = n_rows // n_files
    for f in range(n_files):
        X = rng.normal(size=(per_file, len(FEATURES)))
        y = X @ COEF + INTERCEPT + rng.normal(scale=0.01, size=per_file)
        cols: dict[str, Any] = {name: X[:, j] for j, name in enumerate(FEATURES)}
        cols[TARGET] = y
        cols["row"] = np.arange(f * per_file, (f + 1) * per_file)
        # small row groups: the scanner reads one at a time
        pq.write_table(pa.table(cols), path / f"part-{f}.parquet", row_group_size=500)
    return path


def fragment_reader(path: str | Path, columns: list[str], scan_batch_size: int,
                    shard: tuple[int, int] | None = None) -> pa.RecordBatchReader:
    """An Arrow stream of ``columns`` of the Parquet dataset at ``path``; with ``shard =
    (i, k)`` only every k-th fragment (file) from the i-th."""
    ds = pads.dataset(path, format="parquet")
    if shard is not None:
        i, k = shard
        fragments = sorted(ds.get_fragments(), key=lambda frag: frag.path)[i::k]
        ds = pads.FileSystemDataset(fragments, ds.schema, ds.format, ds.filesystem)
    return ds.scanner(columns=columns, batch_size=scan_batch_size).to_reader()


def iter_xy(reader: Any, batch_size: int, out: np.ndarray | None = None,
            drop_last: bool = False) -> Iterator[tuple[np.ndarray, np.ndarray]]:
    """(X, y) float32 batches of an Arrow stream of FEATURES + [TARGET]: one
    ``iter_matrices`` over all columns, split into views (no copy)."""
    k = len(FEATURES)
    for m in dfbuffer.iter_matrices(reader, batch_size, columns=[*FEATURES, TARGET],
                                    dtype=np.float32, out=out, drop_last=drop_last):
        yield m[:, :k], m[:, k]


def _torch_dataset_class() -> type:
    import torch
    from torch.utils.data import IterableDataset, get_worker_info

    class ArrowMatrixDataset(IterableDataset):
        """Yields ``(X, y)`` float32 tensors of ``batch_size`` rows of a Parquet dataset.

        Use with ``DataLoader(ds, batch_size=None)``: the dataset makes the batches.  In
        the main process (``num_workers=0``) every batch is written into one array and
        the tensors are views of it, overwritten by the next batch (copy what you keep);
        in a worker process each batch is a new array (see the module's docstring).
        """

        def __init__(self, path: str | Path, batch_size: int, scan_batch_size: int = 1024,
                     with_row_ids: bool = False) -> None:
            super().__init__()
            self.path = str(path)
            self.batch_size = batch_size
            self.scan_batch_size = scan_batch_size
            self.with_row_ids = with_row_ids
            self.out: np.ndarray | None = None  # the last out array (tests look at it)

        def __iter__(self) -> Iterator[Any]:
            worker = get_worker_info()
            shard = None if worker is None else (worker.id, worker.num_workers)
            columns = [*FEATURES, TARGET] + (["row"] if self.with_row_ids else [])
            reader = fragment_reader(self.path, columns, self.scan_batch_size, shard)
            k = len(FEATURES)
            out = None
            if worker is None:
                out = np.empty((self.batch_size, len(columns)), np.float32)
                self.out = out
            for m in dfbuffer.iter_matrices(reader, self.batch_size, columns=columns,
                                            dtype=np.float32, out=out):
                t = torch.from_dlpack(m)  # shares m's memory (out's, in the main process)
                if self.with_row_ids:
                    yield t[:, :k], t[:, k], t[:, k + 1]
                else:
                    yield t[:, :k], t[:, k]

    return ArrowMatrixDataset


def train_torch(batches: Any, epochs: int = 1, lr: float = 0.1, seed: int = 0) -> Any:
    """Linear regression by minibatch SGD over ``batches()`` (a callable giving an
    iterable of (X, y) tensors per epoch); returns the trained ``torch.nn.Linear``."""
    import torch

    torch.manual_seed(seed)
    model = torch.nn.Linear(len(FEATURES), 1)
    opt = torch.optim.SGD(model.parameters(), lr=lr)
    for _ in range(epochs):
        for X, y in batches():
            opt.zero_grad()
            loss = torch.nn.functional.mse_loss(model(X).squeeze(1), y)
            loss.backward()
            opt.step()
    return model


def fit_sgd_regressor(batches: Any) -> Any:
    """scikit-learn out of core: ``SGDRegressor.partial_fit`` batch by batch."""
    from sklearn.linear_model import SGDRegressor

    model = SGDRegressor(learning_rate="constant", eta0=0.01, shuffle=False, random_state=0)
    for X, y in batches:
        model.partial_fit(X, y)
    return model


def run(path: Path, batch_size: int = 256) -> dict[str, bool]:
    """Everything above on the dataset at ``path``; returns the checks (all must be
    true).  Each result is compared with the same computation on ``to_matrix`` of the
    whole dataset (the single-machine, all-in-memory answer)."""
    import torch
    from torch.utils.data import DataLoader

    ArrowMatrixDataset = _torch_dataset_class()
    table = pads.dataset(path, format="parquet").to_table().sort_by("row")
    whole = dfbuffer.to_matrix(table, columns=[*FEATURES, TARGET, "row"], dtype=np.float32)
    checks: dict[str, bool] = {}

    # 1. the batches in the main process: values, and no copy into torch
    ds = ArrowMatrixDataset(path, batch_size, scan_batch_size=300, with_row_ids=True)
    got, shared, sizes = [], [], []
    for X, y, row in DataLoader(ds, batch_size=None, num_workers=0):
        assert ds.out is not None
        shared.append(X.data_ptr() == ds.out.ctypes.data
                      and np.shares_memory(X.numpy(), ds.out))
        sizes.append(len(X))
        got.append(torch.cat([X, y[:, None], row[:, None]], dim=1).numpy().copy())
    got_m = np.concatenate(got)
    got_m = got_m[np.argsort(got_m[:, -1], kind="stable")]
    checks["main_process_values"] = bool(np.array_equal(got_m, whole))
    checks["main_process_zero_copy"] = all(shared) and len(shared) > 1
    checks["batch_sizes"] = (all(s == batch_size for s in sizes[:-1])
                             and sum(sizes) == len(whole))

    # 2. two worker processes, each reading its own files: every row exactly once
    rows = []
    loader = DataLoader(ArrowMatrixDataset(path, batch_size, with_row_ids=True),
                        batch_size=None, num_workers=2, timeout=120)
    parts = []
    for X, y, row in loader:
        rows.append(row.numpy().astype(np.int64))
        parts.append(torch.cat([X, y[:, None], row[:, None]], dim=1).numpy())
    all_rows = np.concatenate(rows)
    checks["workers_read_each_row_once"] = bool(
        np.array_equal(np.sort(all_rows), np.arange(len(whole))))
    w = np.concatenate(parts)
    checks["workers_values"] = bool(np.array_equal(w[np.argsort(w[:, -1], kind="stable")], whole))

    # 3. training: the same loop over dfbuffer's batches and over slices of the whole
    # matrix gives the same model, bit for bit (same rows, same order, same float32s)
    def dfb_batches() -> Iterator[Any]:
        return iter(ArrowMatrixDataset(path, batch_size))  # in this process: out= reused

    # the scanner reads the files in path order, which is row order here
    t_whole = torch.from_numpy(whole[:, :len(FEATURES) + 1].copy())

    def whole_batches() -> Iterator[Any]:
        for i in range(0, len(t_whole), batch_size):
            yield t_whole[i:i + batch_size, :-1], t_whole[i:i + batch_size, -1]

    a = train_torch(dfb_batches, epochs=3)
    b = train_torch(whole_batches, epochs=3)
    checks["torch_training_same_as_whole"] = all(
        torch.equal(p, q) for p, q in zip(a.parameters(), b.parameters(), strict=True))
    coef = a.weight.detach().numpy().ravel()
    checks["torch_training_converged"] = bool(np.allclose(coef, COEF, atol=0.05))

    # 4. scikit-learn's partial_fit over the same batches (numpy views, no torch)
    try:
        import sklearn  # noqa: F401
    except ImportError:
        return checks
    reader = fragment_reader(path, [*FEATURES, TARGET], scan_batch_size=300)
    out = np.empty((batch_size, len(FEATURES) + 1), np.float32)
    m1 = fit_sgd_regressor(iter_xy(reader, batch_size, out=out))
    xw, yw = whole[:, :len(FEATURES)], whole[:, len(FEATURES)]
    m2 = fit_sgd_regressor((xw[i:i + batch_size], yw[i:i + batch_size])
                           for i in range(0, len(whole), batch_size))
    checks["sklearn_partial_fit_same_as_whole"] = bool(
        np.array_equal(m1.coef_, m2.coef_) and np.array_equal(m1.intercept_, m2.intercept_))
    checks["sklearn_partial_fit_converged"] = bool(np.allclose(m1.coef_, COEF, atol=0.05))
    return checks


def main(argv: list[str]) -> int:
    n_rows = int(argv[1]) if len(argv) > 1 else 8_000
    with tempfile.TemporaryDirectory() as tmp:
        path = write_dataset(Path(tmp) / "data", n_rows=n_rows)
        checks = run(path)
    print(json.dumps(checks))
    return 0 if all(checks.values()) else 1


if __name__ == "__main__":
    raise SystemExit(main(sys.argv))
