"""The recipes of examples/ on their real engines: a torch IterableDataset over a Parquet
dataset (torch_iterable_dataset.py), Spark's mapInArrow and applyInArrow
(spark_map_in_arrow.py), Ray Data's map_batches and iter_torch_batches (ray_data.py).
(The Dask recipe, examples/dask_partitions.py, is tests/integration/test_dask.py.)

Each example runs as a script in a child process (tests/child_processes.py), bounded by a
timeout, which starts and stops its engine itself (Spark in local mode on one core, Ray
with one CPU); it prints one JSON line of checks, each comparing what the engine computed
batch by batch with the same computation on ``dfbuffer.to_matrix`` of the whole table
(values, least-squares coefficients, a model trained batch by batch, zero-copy handover
to torch).  A test skips when its engine is not installed (Spark also without ``java``);
the engines are found without importing them here."""

from __future__ import annotations

import importlib.util
import json
import os
import pathlib
import shutil
import sys

import numpy as np
import pytest
from child_processes import ChildProcess, Command

import dfbuffer

EXAMPLES = pathlib.Path(__file__).resolve().parents[2] / "examples"


def _have(*modules: str) -> bool:
    return all(importlib.util.find_spec(m) is not None for m in modules)


HAVE_TORCH = _have("torch")
HAVE_SKLEARN = _have("sklearn")
HAVE_SPARK = _have("pyspark") and shutil.which("java") is not None
HAVE_RAY = _have("ray")


def _example(name: str, *args: str, timeout: float = 300) -> Command:
    env = dict(os.environ)
    pkg_root = os.path.dirname(os.path.dirname(os.path.abspath(dfbuffer.__file__)))
    env["PYTHONPATH"] = os.pathsep.join(p for p in (pkg_root, env.get("PYTHONPATH", "")) if p)
    env["PYSPARK_PYTHON"] = sys.executable  # Spark's Python workers: this interpreter
    env["RAY_USAGE_STATS_ENABLED"] = "0"
    return Command([sys.executable, str(EXAMPLES / name), *args], env=env, timeout=timeout)


_TORCH = (ChildProcess(lambda: _example("torch_iterable_dataset.py", "4000"))
          if HAVE_TORCH else None)
_SPARK = (ChildProcess(lambda: _example("spark_map_in_arrow.py", "3000", timeout=400))
          if HAVE_SPARK else None)
_RAY = ChildProcess(lambda: _example("ray_data.py", "3000")) if HAVE_RAY else None


def _checks(job: ChildProcess | None) -> dict:
    assert job is not None
    proc = job.result()
    assert proc.returncode == 0, (proc.stdout[-2000:], proc.stderr[-4000:])
    checks = json.loads(proc.stdout.strip().splitlines()[-1])
    failed = [name for name, ok in checks.items() if ok is not True]
    assert not failed, (failed, proc.stderr[-4000:])
    return checks


@pytest.mark.skipif(not HAVE_TORCH, reason="torch is not installed")
@pytest.mark.child_process(_TORCH)
def test_torch_iterable_dataset_recipe():
    checks = _checks(_TORCH)
    want = {"main_process_values", "main_process_zero_copy", "batch_sizes",
            "workers_read_each_row_once", "workers_values", "torch_training_same_as_whole",
            "torch_training_converged"}
    if HAVE_SKLEARN:
        want |= {"sklearn_partial_fit_same_as_whole", "sklearn_partial_fit_converged"}
    assert set(checks) == want


@pytest.mark.skipif(not HAVE_TORCH, reason="torch is not installed")
def test_torch_dataset_batches_share_out(tmp_path):
    """In the main process every tensor is a view of the dataset's one ``out`` array (by
    address and by np.shares_memory), and the batches are the whole matrix's rows."""
    import torch

    spec = importlib.util.spec_from_file_location(
        "torch_iterable_dataset", EXAMPLES / "torch_iterable_dataset.py")
    assert spec is not None and spec.loader is not None
    example = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(example)
    path = example.write_dataset(tmp_path / "data", n_rows=1200, n_files=2)
    ds = example._torch_dataset_class()(path, 100, scan_batch_size=70, with_row_ids=True)
    rows = []
    for X, y, row in torch.utils.data.DataLoader(ds, batch_size=None):
        assert X.data_ptr() == ds.out.ctypes.data
        assert np.shares_memory(X.numpy(), ds.out) and np.shares_memory(y.numpy(), ds.out)
        rows.append(torch.cat([X, y[:, None], row[:, None]], dim=1).numpy().copy())
    import pyarrow.dataset as pads

    whole = dfbuffer.to_matrix(pads.dataset(path).to_table().sort_by("row"),
                               columns=[*example.FEATURES, example.TARGET, "row"],
                               dtype=np.float32)
    assert len(rows) == 12
    np.testing.assert_array_equal(np.concatenate(rows), whole)


@pytest.mark.skipif(not HAVE_SPARK, reason="pyspark or java is not installed")
@pytest.mark.child_process(_SPARK)
def test_spark_map_in_arrow_recipe():
    checks = _checks(_SPARK)
    assert set(checks) == {
        "partitions", "rows", "dropped_rows", "gram_equals_single_machine",
        "least_squares_equals_lstsq", "least_squares_recovers_model",
        "batches_of_maxRecordsPerBatch", "batch_sums", "batch_nulls", "groups",
        "group_rows", "group_means"}


@pytest.mark.skipif(not HAVE_RAY, reason="ray is not installed")
@pytest.mark.child_process(_RAY)
def test_ray_data_recipe():
    checks = _checks(_RAY)
    want = {"rows", "several_batches", "least_squares_equals_lstsq",
            "least_squares_recovers_model", "predictions", "numpy_batches"}
    if HAVE_TORCH:
        want |= {"torch_batches", "torch_batch_sizes", "collate_zero_copy"}
    assert set(checks) == want
