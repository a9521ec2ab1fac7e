"""iter_matrices over an Arrow stream: time and peak memory against the loops users write.

Time (one process, best of --repeat, contenders in turn over the same in-memory batches,
--rows x --cols float64 in source batches of --source-batch rows; each contender gets a new
pyarrow RecordBatchReader over them), with yielded batches of BATCH rows (smaller than the
source's: mostly slices inside one source batch, some across a border), then of the source
batches' size (the hand-written loop's output size):

  iter_matrices      for m in dfbuffer.iter_matrices(reader, BATCH): ...   (re-chunked)
  iter_matrices_out  the same with out= (one output array for all batches)
  loop_to_matrix     for b in reader: dfbuffer.to_matrix(b)               (source batches)
  to_tensor          for b in reader: b.to_tensor()                         (pyarrow)
  column_stack       for b in reader: np.column_stack([c.to_numpy() for c in b.columns])

Memory (a child process per contender, run before the timing; its peak resident set,
VmHWM, above its resident set before the run): a stream of
--mem-mb MB generated lazily by a Python generator (each source batch made on demand) and
wrapped in pa.RecordBatchReader.from_batches, read by

  reader_only        for b in reader: pass          (the reader's own peak: the floor)
  iter_matrices, iter_matrices_out, loop_to_matrix  as above
  to_matrix_whole    dfbuffer.to_matrix(reader)     (the whole stream, length unknown)
  to_matrix_out      dfbuffer.to_matrix(reader, out=np.empty((rows, cols)))  (length known)
  out_loop           out = np.empty((rows, cols)); for b in reader:
                         dfbuffer.to_matrix(b, out=out[i:i + len(b)])  (the hand-written loop)
  from_dataframe_whole  dfbuffer.from_dataframe(reader)  (a dict of float64 columns)

Time of the whole-stream contenders (out_loop, to_matrix_out, to_matrix_whole,
from_dataframe_whole) is measured like the batches', each over a new reader of the same
in-memory batches (a RecordBatchReader over an iterator: its length unknown to dfbuffer).

Ratios are printed against peers measured in the same run (time: iter_matrices against the
hand-written loop and pyarrow, the whole-stream contenders against out_loop; memory: each
contender's peak above the interpreter's baseline, against reader_only's and against the
size of the whole result).  No figure is compared across runs.

    PYTHONPATH=build/dev/stage python benchmarks/bench_batches.py [--quick]
"""

from __future__ import annotations

import argparse
import os
import resource
import subprocess
import sys
import time

import numpy as np
import pyarrow as pa

import dfbuffer

BATCH = 50_000  # rows per yielded matrix: cuts the source batches


def make_batches(rows: int, cols: int, source_batch: int) -> list[pa.RecordBatch]:
    rng = np.random.default_rng(0)
    out = []
    for start in range(0, rows, source_batch):
        n = min(source_batch, rows - start)
        out.append(pa.record_batch({f"c{k}": rng.random(n) for k in range(cols)}))
    return out


def contenders(cols: int, batch: int = BATCH):
    out = np.empty((batch, cols))

    def iter_matrices(reader):
        s = 0.0
        for m in dfbuffer.iter_matrices(reader, batch):
            s += m[0, 0]
        return s

    def iter_matrices_out(reader):
        s = 0.0
        for m in dfbuffer.iter_matrices(reader, batch, out=out):
            s += m[0, 0]
        return s

    def loop_to_matrix(reader):
        s = 0.0
        for b in reader:
            s += dfbuffer.to_matrix(b)[0, 0]
        return s

    def to_tensor(reader):
        s = 0.0
        for b in reader:
            s += b.to_tensor().to_numpy()[0, 0]
        return s

    def column_stack(reader):
        s = 0.0
        for b in reader:
            s += np.column_stack([c.to_numpy() for c in b.columns])[0, 0]
        return s

    def to_matrix_whole(reader):
        return float(dfbuffer.to_matrix(reader)[0, 0])

    def to_matrix_out(reader, rows):
        whole = np.empty((rows, cols))
        return float(dfbuffer.to_matrix(reader, out=whole)[0, 0])

    def out_loop(reader, rows):
        whole = np.empty((rows, cols))
        i = 0
        for b in reader:
            dfbuffer.to_matrix(b, out=whole[i : i + len(b)])
            i += len(b)
        return float(whole[0, 0])

    def from_dataframe_whole(reader):
        cols_ = dfbuffer.from_dataframe(reader)
        return float(next(iter(cols_.values()))[0])

    def reader_only(reader):
        n = 0
        for b in reader:
            n += b.num_rows
        return float(n)

    return {
        "iter_matrices": iter_matrices,
        "iter_matrices_out": iter_matrices_out,
        "loop_to_matrix": loop_to_matrix,
        "to_tensor": to_tensor,
        "column_stack": column_stack,
        "to_matrix_whole": to_matrix_whole,
        "to_matrix_out": to_matrix_out,
        "out_loop": out_loop,
        "from_dataframe_whole": from_dataframe_whole,
        "reader_only": reader_only,
    }


# the contenders that take the stream's length (known to the caller) besides the reader
NEEDS_ROWS = ("to_matrix_out", "out_loop")


def time_whole(rows: int, cols: int, source_batch: int, repeat: int) -> dict[str, float]:
    """Best times of the contenders that read the whole stream into one result."""
    batches = make_batches(rows, cols, source_batch)
    schema = batches[0].schema
    fns = contenders(cols)
    names = ["out_loop", "to_matrix_out", "to_matrix_whole", "from_dataframe_whole"]
    best = dict.fromkeys(names, float("inf"))
    for _ in range(repeat):
        for name in names:
            reader = pa.RecordBatchReader.from_batches(schema, batches)
            args = (reader, rows) if name in NEEDS_ROWS else (reader,)
            t0 = time.perf_counter()
            fns[name](*args)
            best[name] = min(best[name], time.perf_counter() - t0)
    return best


def time_all(
    rows: int, cols: int, source_batch: int, repeat: int, batch: int = BATCH
) -> dict[str, float]:
    batches = make_batches(rows, cols, source_batch)
    schema = batches[0].schema
    fns = contenders(cols, batch)
    names = ["iter_matrices", "iter_matrices_out", "loop_to_matrix", "to_tensor",
             "column_stack"]
    best = dict.fromkeys(names, float("inf"))
    for _ in range(repeat):
        for name in names:  # in turn: load hits every contender alike
            reader = pa.RecordBatchReader.from_batches(schema, batches)
            t0 = time.perf_counter()
            fns[name](reader)
            best[name] = min(best[name], time.perf_counter() - t0)
    return best


def _status_kib(field: str) -> int | None:
    try:
        with open("/proc/self/status") as f:
            for line in f:
                if line.startswith(field + ":"):
                    return int(line.split()[1])
    except OSError:
        pass
    return None


def current_rss_kib() -> int:
    """The process's resident set now (KiB): the baseline the peak is measured above
    (the peak already holds the imports')."""
    rss = _status_kib("VmRSS")
    return rss if rss is not None else resource.getrusage(resource.RUSAGE_SELF).ru_maxrss


def peak_rss_kib() -> int:
    """The process's peak resident set (KiB).  On Linux, VmHWM: ru_maxrss of a child
    process starts at its parent's resident set when it was forked (the kernel keeps
    the pre-exec high-water mark), which after the timing phase is larger than any
    contender's peak; where VmHWM is missing, ru_maxrss."""
    hwm = _status_kib("VmHWM")
    return hwm if hwm is not None else resource.getrusage(resource.RUSAGE_SELF).ru_maxrss


def child(name: str, mem_mb: int, cols: int, source_batch: int) -> None:
    """Run contender `name` over a lazily generated stream; print the peak RSS (KiB)."""
    rows = mem_mb * 2**20 // (8 * cols)
    schema = pa.schema([(f"c{k}", pa.float64()) for k in range(cols)])
    fns = contenders(cols)
    base = current_rss_kib()

    def gen():
        rng = np.random.default_rng(0)
        for start in range(0, rows, source_batch):
            n = min(source_batch, rows - start)
            yield pa.record_batch([rng.random(n) for _ in range(cols)], schema=schema)

    reader = pa.RecordBatchReader.from_batches(schema, gen())
    fns[name](*((reader, rows) if name in NEEDS_ROWS else (reader,)))
    print(base, peak_rss_kib())


def memory_all(mem_mb: int, cols: int, source_batch: int) -> dict[str, tuple[int, int]]:
    out = {}
    for name in ("reader_only", "iter_matrices", "iter_matrices_out", "loop_to_matrix",
                 "to_matrix_whole", "to_matrix_out", "out_loop", "from_dataframe_whole"):
        res = subprocess.run(
            [sys.executable, __file__, "--child", name, "--mem-mb", str(mem_mb),
             "--cols", str(cols), "--source-batch", str(source_batch)],
            capture_output=True, text=True, check=True, env=os.environ,
        )
        base, peak = map(int, res.stdout.split())
        out[name] = (base, peak)
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rows", type=int, default=2_000_000)
    ap.add_argument("--cols", type=int, default=20)
    ap.add_argument("--source-batch", type=int, default=131_072)
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--mem-mb", type=int, default=480)
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--child")
    a = ap.parse_args()
    if a.child:
        child(a.child, a.mem_mb, a.cols, a.source_batch)
        return
    if a.quick:
        a.rows, a.repeat, a.mem_mb = 400_000, 3, 96
    print(f"load: {os.getloadavg()}, dfbuffer {dfbuffer.__version__}, pyarrow {pa.__version__}")
    print(f"memory: a {a.mem_mb} MB stream generated lazily, peak RSS per child process "
          "(MiB above the RSS before the run)")
    mem = memory_all(a.mem_mb, a.cols, a.source_batch)
    floor = max(mem["reader_only"][1] - mem["reader_only"][0], 1)
    batch_mib = a.source_batch * a.cols * 8 / 2**20
    rows = a.mem_mb * 2**20 // (8 * a.cols)
    result_kib = rows * a.cols * 8 / 1024
    for name, (base, peak) in mem.items():
        above = peak - base
        print(f"  {name:20s} {above / 1024:8.1f} MiB  ({above / floor:.2f} x reader_only, "
              f"{(above - floor) / 1024 / batch_mib:+.1f} source batches, "
              f"{above / result_kib:.2f} x the whole result)")
    print(f"  (the whole result: {result_kib / 1024:.1f} MiB)")
    print(f"time: the whole stream into one result, {a.rows} rows x {a.cols} float64 in "
          f"source batches of {a.source_batch}, best of {a.repeat}")
    whole = time_whole(a.rows, a.cols, a.source_batch, a.repeat)
    for name, t in whole.items():
        print(f"  {name:20s} {t * 1e3:9.1f} ms")
    for name in ("to_matrix_out", "to_matrix_whole", "from_dataframe_whole"):
        print(f"  {name} / out_loop  {whole[name] / whole['out_loop']:.2f}")
    # yielded batches smaller than the source's (most inside one source batch, some
    # across a border), then of the source's size (the loop's output size)
    for batch in (BATCH, a.source_batch):
        print(f"time: {a.rows} rows x {a.cols} float64 in source batches of "
              f"{a.source_batch}, yielded batches of {batch}, best of {a.repeat}")
        best = time_all(a.rows, a.cols, a.source_batch, a.repeat, batch)
        for name, t in best.items():
            print(f"  {name:18s} {t * 1e3:9.1f} ms")
        it = best["iter_matrices"]
        for peer in ("loop_to_matrix", "to_tensor", "column_stack"):
            print(f"  iter_matrices / {peer:15s} {it / best[peer]:.2f}")
        out_ratio = best["iter_matrices_out"] / best["loop_to_matrix"]
        print(f"  iter_matrices_out / loop_to_matrix  {out_ratio:.2f}")


if __name__ == "__main__":
    main()
