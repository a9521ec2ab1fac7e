"""iter_matrices over a Parquet file read as a stream, and over an in-memory stream, against
what users would otherwise write: time ratios and peak memory.

    PYTHONPATH=build/dev/stage python benchmarks/bench_streams.py [--quick] [options]

The data: one Parquet file per (columns, dtype), --file-mb MB of uniform random values
(2048 by default, 48 with --quick), row groups of about 64 MiB, made under --dir on the
first run and deleted at the end unless --keep.  For each batch size B (--sizes), columns
(--cols) and dtype (--dtypes), every contender yields 2-D NumPy arrays (C order unless
noted) of B rows and touches one value of each; the ones that are not dfbuffer make the
matrix with `np.column_stack` of the columns their library hands out:

  Parquet source (read as a stream, never the whole file):
    pyarrow_loop       for b in pq.ParquetFile(p).iter_batches(B): column_stack(to_numpy)
    iter_matrices      iter_matrices(RecordBatchReader over iter_batches(max(B, 65536)), B)
    iter_matrices_out  the same with out= (one output array for all batches)
    polars             pl.scan_parquet(p).collect_batches(chunk_size=B):
                       df.to_numpy(order="c") (the others' matrix; polars' default is F)
    duckdb             duckdb.sql("select * from read_parquet(p)").to_arrow_reader(B)
                       (fetch_record_batch(B), deprecated in DuckDB 2)
    hf_datasets        datasets.load_dataset("parquet", streaming=True) (an
                       IterableDataset) .with_format("numpy").iter(B)
    ray_data           ray.data.read_parquet(p).iter_batches(batch_size=B,
                       batch_format="numpy")
    torch_iter         torch DataLoader(batch_size=None) over an IterableDataset yielding
                       torch.from_numpy of iter_matrices' batches
    torch_pyarrow      the same DataLoader over the pyarrow loop's batches
  In-memory source (the row groups holding the timed rows read into a pyarrow Table,
  which pyarrow makes one chunk, before the timing):
    pyarrow_loop       for b in table.to_reader(max_chunksize=B): column_stack(to_numpy)
    iter_matrices(_out) iter_matrices(table.to_reader(), B) [out=]
    polars             pl.from_arrow(table).iter_slices(B): df.to_numpy(order="c")
    duckdb             duckdb.from_arrow(table).to_arrow_reader(B)
    hf_datasets        datasets.Dataset(InMemoryTable(table)).with_format("numpy").iter(B)
    ray_data           ray.data.from_arrow(table).iter_batches(...)  (made before timing)
    torch_iter, torch_pyarrow  as above, over the table

pyarrow's loops give batches of at most B rows (shorter at a row group's or chunk's end);
iter_matrices gives exactly B.  A library's setup (ray.init, the HF and Ray dataset
objects, polars' lazy frame) is made before the clock starts; its first batch is inside
it.  Contenders missing here (not importable) are skipped.

Also timed, for scale: reader_only, the stream iter_matrices reads, alone (`for b in
reader: pass`, no matrix made): what no contender reading that stream can go below.

Time: best of --repeat, contenders in turn (load hits each alike), each over the first
--limit-mb MB of rows of the file (default all of it: it stops reading there).  Printed:
each contender's time / the pyarrow loop's, and iter_matrices' time / the fastest peer's
(pyarrow_loop, polars, duckdb, hf_datasets, ray_data; the torch DataLoaders are
compared with each other).

Memory (--memory; Parquet source only): each contender in a child process of its own
over the whole file, its peak resident set (VmHWM) above its resident set before the
stream is opened, against `reader_only` (for b in iter_batches(max(B, 65536)): pass,
the reader iter_matrices reads) and `reader_B` (iter_batches(B), the pyarrow loop's
reader); printed in MiB and in output batches (B x columns x itemsize).  Ray's object
store and worker processes and DuckDB's buffer manager are counted only as far as they
live in the child's own resident set.

pyarrow's ParquetFile pre-buffers by default (pre_buffer=True), which for iter_batches
over a whole file reads ahead as far as the file: its readers then peak at about the
file's size whatever the consumer.  --no-pre-buffer opens every pyarrow reader (the
loop's, iter_matrices', reader_only's) with pre_buffer=False, which reads a row group at
a time: the setting under which a bounded-memory consumer's peak means something.

Options: --sizes 256,4096,65536 --cols 10,100 --dtypes float32,float64
--sources parquet,memory --contenders a,b --repeat R --limit-mb N --memory --keep
--dir /tmp --file-mb MB --quick; --base-batches FILE adds iter_matrices_base and
iter_matrices_out_base, iter_matrices of another version of src/dfbuffer/_batches.py (e.g. `git show
REV:src/dfbuffer/_batches.py > /tmp/base.py`) run on the same extension, timed in turn with
the rest: a change to the Python re-chunking measured in one run.  --cpu times the
process's CPU time (all its threads) instead of the wall clock: for dfbuffer against
itself on a loaded machine; not for peers whose work runs in other processes (Ray) or
on several threads.
"""

from __future__ import annotations

import argparse
import contextlib
import importlib.util
import json
import logging
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

import dfbuffer

TIMER = time.perf_counter  # --cpu: time.process_time
PRE_BUFFER = True  # pyarrow's default; --no-pre-buffer: ParquetFile(pre_buffer=False)
BASE: Any = None  # --base-batches: the module iter_matrices_base comes from
SOURCE_BATCH = 65_536  # rows per source batch iter_matrices reads (at least B)
PEERS = ("pyarrow_loop", "polars", "duckdb", "hf_datasets", "ray_data")
ALL = ("reader_only", "pyarrow_loop", "iter_matrices", "iter_matrices_out", "polars",
       "duckdb", "hf_datasets", "ray_data", "torch_iter", "torch_pyarrow")  # fmt: skip


def _status_kib(field: str) -> int:
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith(field + ":"):
                return int(line.split()[1])
    raise RuntimeError(f"no {field} in /proc/self/status")


def make_file(path: str, mb: int, cols: int, dtype: str) -> int:
    """Write `mb` MB of random `dtype` columns to `path` (if absent); return its rows."""
    item = np.dtype(dtype).itemsize
    rows = mb * 2**20 // (cols * item)
    group = max(1024, 64 * 2**20 // (cols * item))
    if os.path.exists(path):
        return pq.ParquetFile(path).metadata.num_rows
    schema = pa.schema([(f"c{k}", pa.from_numpy_dtype(np.dtype(dtype))) for k in range(cols)])
    rng = np.random.default_rng(0)
    tmp = path + ".part"
    with pq.ParquetWriter(tmp, schema) as w:
        for start in range(0, rows, group):
            n = min(group, rows - start)
            arrays = [rng.random(n, dtype=np.float64).astype(dtype) for _ in range(cols)]
            w.write_batch(pa.record_batch(arrays, schema=schema), row_group_size=group)
    os.replace(tmp, path)
    return rows


def first_rows(path: str, rows: int) -> pa.Table:
    """The row groups of `path` that hold its first `rows` rows, as a Table (pyarrow
    makes it one chunk): the in-memory stream."""
    f = pq.ParquetFile(path)
    k, have = 0, 0
    while k < f.num_row_groups and have < rows:
        have += f.metadata.row_group(k).num_rows
        k += 1
    return f.read_row_groups(list(range(k)))


def _stack(columns: list[Any]) -> np.ndarray:
    return np.column_stack(columns)


class Stream:
    """The readers of one source (a Parquet path or an in-memory table)."""

    def __init__(self, kind: str, path: str, table: pa.Table | None) -> None:
        self.kind, self.path, self.table = kind, path, table
        self.schema = pq.read_schema(path)

    def arrow_batches(self, b: int) -> Iterator[pa.RecordBatch]:
        if self.kind == "parquet":
            return pq.ParquetFile(self.path, pre_buffer=PRE_BUFFER).iter_batches(batch_size=b)
        return iter(self.table.to_reader(max_chunksize=b))

    def reader(self, b: int) -> pa.RecordBatchReader:
        """The stream iter_matrices reads: source batches of max(b, SOURCE_BATCH) rows."""
        if self.kind == "parquet":
            f = pq.ParquetFile(self.path, pre_buffer=PRE_BUFFER)
            gen = f.iter_batches(batch_size=max(b, SOURCE_BATCH))
            return pa.RecordBatchReader.from_batches(self.schema, gen)
        return self.table.to_reader()


def prepare(name: str, st: Stream, b: int, cols: int, dtype: str) -> Callable[[int], int] | None:
    """A function(limit_rows) -> rows read, for contender `name`; None if not installed.
    What it needs made before the clock (a library's dataset object) is made here."""

    def consume(it: Iterator[Any], limit: int, to_matrix: Callable[[Any], Any]) -> int:
        rows = 0
        s = 0.0
        for x in it:
            m = to_matrix(x)
            s += float(m[0, 0])
            rows += m.shape[0]
            if rows >= limit:
                break
        return rows

    ident = lambda m: m  # noqa: E731

    if name == "pyarrow_loop":
        return lambda lim: consume(
            st.arrow_batches(b), lim, lambda x: _stack([c.to_numpy() for c in x.columns])
        )
    if name == "iter_matrices":
        return lambda lim: consume(dfbuffer.iter_matrices(st.reader(b), b), lim, ident)
    if name == "iter_matrices_base":  # --base-batches: iter_matrices of another _batches.py
        if BASE is None:
            return None
        return lambda lim: consume(BASE.iter_matrices(st.reader(b), b), lim, ident)
    if name == "iter_matrices_out_base":
        if BASE is None:
            return None
        out = np.empty((b, cols), dtype)
        return lambda lim: consume(BASE.iter_matrices(st.reader(b), b, out=out), lim, ident)
    if name == "iter_matrices_out":
        out = np.empty((b, cols), dtype)
        return lambda lim: consume(dfbuffer.iter_matrices(st.reader(b), b, out=out), lim, ident)
    if name == "polars":
        try:
            import polars as pl
        except ImportError:
            return None
        if st.kind == "parquet":
            lf = pl.scan_parquet(st.path)
            return lambda lim: consume(
                lf.collect_batches(chunk_size=b), lim, lambda d: d.to_numpy(order="c")
            )
        df = pl.from_arrow(st.table)
        return lambda lim: consume(df.iter_slices(b), lim, lambda d: d.to_numpy(order="c"))
    if name == "duckdb":
        try:
            import duckdb
        except ImportError:
            return None
        con = duckdb.connect()
        table = st.table  # noqa: F841 (read by DuckDB's replacement scan by name)

        def duck(lim: int) -> int:
            if st.kind == "parquet":
                rel = con.sql(f"select * from read_parquet('{st.path}')")
            else:
                rel = con.from_arrow(st.table)
            return consume(
                rel.to_arrow_reader(b), lim, lambda x: _stack([c.to_numpy() for c in x.columns])
            )

        return duck
    if name == "hf_datasets":
        try:
            import datasets
        except ImportError:
            return None
        datasets.disable_progress_bars()
        names = [f"c{k}" for k in range(cols)]
        if st.kind == "parquet":
            ds = datasets.load_dataset(
                "parquet", data_files=st.path, split="train", streaming=True
            ).with_format("numpy")
        else:
            from datasets.table import InMemoryTable

            ds = datasets.Dataset(InMemoryTable(st.table)).with_format("numpy")
        return lambda lim: consume(
            ds.iter(batch_size=b), lim, lambda d: _stack([d[n] for n in names])
        )
    if name == "ray_data":
        try:
            import ray
            import ray.data
        except ImportError:
            return None
        if not ray.is_initialized():
            ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False,
                     logging_level="ERROR")  # fmt: skip
        ctx = ray.data.DataContext.get_current()
        ctx.enable_progress_bars = False
        logging.getLogger("ray.data").setLevel(logging.WARNING)
        names = [f"c{k}" for k in range(cols)]
        ds = (
            ray.data.read_parquet(st.path)
            if st.kind == "parquet"
            else ray.data.from_arrow(st.table)
        )
        return lambda lim: consume(
            ds.iter_batches(batch_size=b, batch_format="numpy"), lim,
            lambda d: _stack([d[n] for n in names]),
        )  # fmt: skip
    if name in ("torch_iter", "torch_pyarrow"):
        try:
            import torch
            from torch.utils.data import DataLoader, IterableDataset
        except ImportError:
            return None

        class FromIterMatrices(IterableDataset):
            def __iter__(self):
                for m in dfbuffer.iter_matrices(st.reader(b), b):
                    yield torch.from_numpy(m)

        class FromPyarrow(IterableDataset):
            def __iter__(self):
                for x in st.arrow_batches(b):
                    yield torch.from_numpy(_stack([c.to_numpy() for c in x.columns]))

        ds = FromIterMatrices() if name == "torch_iter" else FromPyarrow()
        return lambda lim: consume(DataLoader(ds, batch_size=None, num_workers=0), lim, ident)
    if name == "reader_only":
        return lambda lim: consume(st.reader(b), lim, lambda x: np.zeros((x.num_rows, 1)))
    if name == "reader_B":
        return lambda lim: consume(st.arrow_batches(b), lim, lambda x: np.zeros((x.num_rows, 1)))
    raise ValueError(name)


def time_config(st: Stream, b: int, cols: int, dtype: str, names: list[str], repeat: int,
                limit: int) -> dict[str, float]:  # fmt: skip
    fns = {}
    for n in names:
        f = prepare(n, st, b, cols, dtype)
        if f is not None:
            fns[n] = f
    best = dict.fromkeys(fns, float("inf"))
    rows = {}
    for _ in range(repeat):
        for n, f in fns.items():  # in turn
            t0 = TIMER()
            rows[n] = f(limit)
            best[n] = min(best[n], TIMER() - t0)
    want = min(rows.values())
    for n, r in rows.items():  # a reader that stopped early would look fast
        if r < want or r > want + 2 * max(b, SOURCE_BATCH):
            print(f"    note: {n} read {r} rows, others {want}")
    return best


def child_main(a: argparse.Namespace) -> None:
    """One contender over the whole Parquet file; prints baseline and peak RSS (KiB)."""
    global PRE_BUFFER
    PRE_BUFFER = not a.no_pre_buffer
    st = Stream("parquet", a.child_path, None)
    f = prepare(a.child, st, a.child_b, a.child_cols, a.child_dtype)
    if f is None:
        print(json.dumps(None))
        return
    base = _status_kib("VmRSS")
    f(1 << 62)
    print(json.dumps([base, _status_kib("VmHWM")]))


def memory_config(path: str, b: int, cols: int, dtype: str, names: list[str]) -> dict[str, Any]:
    res = {}
    for n in ["reader_only", "reader_B", *names]:
        p = subprocess.run(
            [sys.executable, __file__, "--child", n, "--child-path", path, "--child-b", str(b),
             "--child-cols", str(cols), "--child-dtype", dtype,
             *(["--no-pre-buffer"] if not PRE_BUFFER else [])],
            capture_output=True, text=True, env=os.environ,
        )  # fmt: skip
        if p.returncode != 0:
            res[n] = None
            print(f"    {n}: child failed: {p.stderr.strip().splitlines()[-1:]}")
            continue
        v = json.loads(p.stdout.strip().splitlines()[-1])
        res[n] = None if v is None else (v[1] - v[0]) / 1024  # MiB above the start
    return res


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", default="256,4096,65536")
    ap.add_argument("--cols", default="10,100")
    ap.add_argument("--dtypes", default="float32,float64")
    ap.add_argument("--sources", default="parquet,memory")
    ap.add_argument("--contenders", default=",".join(ALL))
    ap.add_argument("--repeat", type=int, default=2)
    ap.add_argument("--file-mb", type=int, default=2048)
    ap.add_argument("--limit-mb", type=int, default=0, help="rows timed (0: the whole file)")
    ap.add_argument("--memory", action="store_true")
    ap.add_argument("--dir", default=tempfile.gettempdir())
    ap.add_argument("--keep", action="store_true")
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--cpu", action="store_true", help="time the process's CPU time")
    ap.add_argument("--no-pre-buffer", action="store_true", help="pyarrow readers: no pre_buffer")
    ap.add_argument("--base-batches", help="a _batches.py to time as iter_matrices_base")
    ap.add_argument("--child")
    ap.add_argument("--child-path")
    ap.add_argument("--child-b", type=int)
    ap.add_argument("--child-cols", type=int)
    ap.add_argument("--child-dtype")
    a = ap.parse_args()
    if a.child:
        child_main(a)
        return
    if a.quick:
        a.file_mb = 48
    global TIMER, BASE, PRE_BUFFER
    if a.no_pre_buffer:
        PRE_BUFFER = False
    if a.cpu:
        TIMER = time.process_time
    if a.base_batches:
        spec = importlib.util.spec_from_file_location("dfbuffer._batches_base", a.base_batches)
        BASE = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(BASE)
        for n in ("iter_matrices_base", "iter_matrices_out_base"):
            if n not in a.contenders:
                a.contenders += "," + n
    sizes = [int(x) for x in a.sizes.split(",")]
    names = [n for n in a.contenders.split(",") if n]
    print(f"load: {os.getloadavg()} on {os.cpu_count()} cores; dfbuffer {dfbuffer.__version__}, "
          f"numpy {np.__version__}, pyarrow {pa.__version__}")  # fmt: skip
    made = []
    os.makedirs(a.dir, exist_ok=True)
    try:
        for cols in map(int, a.cols.split(",")):
            for dtype in a.dtypes.split(","):
                path = os.path.join(a.dir, f"dfb_streams_{cols}x{dtype}_{a.file_mb}mb.parquet")
                if not os.path.exists(path):
                    made.append(path)
                rows = make_file(path, a.file_mb, cols, dtype)
                item = np.dtype(dtype).itemsize
                limit = rows if a.limit_mb == 0 else a.limit_mb * 2**20 // (cols * item)
                size = os.path.getsize(path) / 2**20
                print(f"\n== {cols} columns x {rows} rows {dtype}: {path} ({size:.0f} MiB), "
                      f"{min(limit, rows)} rows timed")  # fmt: skip
                for kind in filter(None, a.sources.split(",")):
                    table = first_rows(path, limit) if kind == "memory" else None
                    st = Stream(kind, path, table)
                    for b in sizes:
                        best = time_config(st, b, cols, dtype, names, a.repeat, limit)
                        base = best.get("pyarrow_loop")
                        peers = {n: t for n, t in best.items() if n in PEERS}
                        fast = min(peers, key=peers.get) if peers else None
                        print(f"  {kind:7s} B={b:<6d} best of {a.repeat}; load "
                              f"{os.getloadavg()[0]:.1f}")  # fmt: skip
                        for n, t in best.items():
                            r = f"{t / base:6.2f} x pyarrow_loop" if base else ""
                            print(f"    {n:18s} {t * 1e3:10.1f} ms  {r}")
                        for n in ("iter_matrices", "iter_matrices_out"):
                            if n in best and fast:
                                print(f"    {n} / fastest peer ({fast}): "
                                      f"{best[n] / peers[fast]:.2f}")  # fmt: skip
                        for n in ("iter_matrices", "iter_matrices_out"):
                            if n + "_base" in best and n in best:
                                r = best[n] / best[n + "_base"]
                                print(f"    {n} / {n}_base: {r:.2f}")
                        for slow in ("ray_data", "hf_datasets"):
                            if slow in best and "iter_matrices" in best:
                                print(f"    {slow} / iter_matrices: "
                                      f"{best[slow] / best['iter_matrices']:.1f}x")  # fmt: skip
                        if "torch_iter" in best and "torch_pyarrow" in best:
                            print(
                                f"    torch_iter / torch_pyarrow: "
                                f"{best['torch_iter'] / best['torch_pyarrow']:.2f}"
                            )
                    del table, st
                if a.memory:
                    for b in sizes:
                        mem = memory_config(path, b, cols, dtype, names)
                        ro = mem.get("reader_only")
                        batch_mib = b * cols * item / 2**20
                        print(f"  memory B={b}: peak RSS above the start, MiB "
                              f"(output batch {batch_mib:.3f} MiB)")  # fmt: skip
                        for n, v in mem.items():
                            if v is None or ro is None:
                                print(f"    {n:18s} skipped")
                                continue
                            print(
                                f"    {n:18s} {v:9.1f} MiB  {v - ro:+9.1f} MiB against "
                                f"reader_only = {(v - ro) / batch_mib:+10.1f} batches"
                            )
    finally:
        for p in made:
            if not a.keep:
                with contextlib.suppress(OSError):
                    os.remove(p)


if __name__ == "__main__":
    main()
