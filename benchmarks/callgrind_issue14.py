"""Instruction counts per call of the interchange-buffer calls of issue 14 (load-independent).

    PYTHONPATH=<stage> python benchmarks/callgrind_issue14.py [name,name,...]

Runs itself under ``valgrind --tool=callgrind --collect-atstart=no
--toggle-collect=builtin_eval --dump-after=builtin_eval`` with PYTHONHASHSEED=0: each
statement is looped 200 and 2200 times inside ``eval`` (after a warm-up round), and the
count per call is (count(2200) - count(200)) / 2000.  The loop alone ("none") is in both
sides of every ratio.  Use a ``-Dbuildtype=debugoptimized`` build for figures comparable
with docs/performance.md.
"""

from __future__ import annotations

import glob
import os
import re
import subprocess
import sys
import tempfile
import warnings

STMTS = {
    "none": "None",
    "b2n": "b2n(buf, dtype)",
    "pa_calls": "buf.ptr; buf.bufsize; buf.__dlpack_device__()",
    "dlpack_nd": "np.from_dlpack(a)",
    "fo_pd": "fo(pdbuf)",
    "pd_calls": "pdbuf.ptr; pdbuf.bufsize; pdbuf.__dlpack_device__()",
    "dlpack_pd": "np.from_dlpack(pdbuf)",
}
N1, N2 = 200, 2200


def child(names: list[str]) -> None:
    import numpy as np
    import pandas as pd
    import pyarrow as pa

    import dfbuffer

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        col = pa.table({"a": np.arange(1000.0)}).__dataframe__().get_column(0)
        buf, dtype = col.get_buffers()["data"]
        pcol = pd.DataFrame({"a": np.arange(1000.0)}).__dataframe__().get_column(0)
        pdbuf = pcol.get_buffers()["data"][0]
    g = {"np": np, "buf": buf, "dtype": dtype, "pdbuf": pdbuf, "a": np.arange(1000.0),
         "b2n": dfbuffer.buffer_to_ndarray, "fo": dfbuffer.Buffer.from_object}
    codes = [(f"{name}:{n}", compile(f"for _ in range({n}):\n    {STMTS[name]}\n", name, "exec"))
             for name in names for n in (N1, N2)]
    for _, c in codes:  # warm-up: specialised bytecode, caches, memos
        eval(c, g)
    print("ORDER", ",".join(k for k, _ in codes), flush=True)
    for _, c in codes:
        eval(c, g)


def main() -> None:
    names = sys.argv[1].split(",") if len(sys.argv) > 1 else list(STMTS)
    with tempfile.TemporaryDirectory() as d:
        out = os.path.join(d, "cg.out")
        env = dict(os.environ, PYTHONHASHSEED="0")
        r = subprocess.run(
            ["valgrind", "--tool=callgrind", "--collect-atstart=no",
             "--toggle-collect=builtin_eval", "--dump-after=builtin_eval",
             f"--callgrind-out-file={out}", sys.executable, __file__, "--child", ",".join(names)],
            env=env, capture_output=True, text=True, check=True,
        )
        order = next(ln for ln in r.stdout.splitlines() if ln.startswith("ORDER")).split()[1]
        order = order.split(",")
        parts = sorted(glob.glob(out + ".*"), key=lambda f: int(f.rsplit(".", 1)[1]))
        totals = []
        for f in parts[-len(order):]:
            with open(f) as fh:
                m = re.search(r"^(?:summary|totals): (\d+)", fh.read(), re.M)
            totals.append(int(m.group(1)) if m else 0)
        got = dict(zip(order, totals, strict=True))
    per = {n: (got[f"{n}:{N2}"] - got[f"{n}:{N1}"]) / (N2 - N1) for n in names}
    for n in names:
        print(f"{n:10s} {per[n]:9.1f}  {STMTS[n]}")
    if {"b2n", "pa_calls", "dlpack_nd"} <= set(per):
        print(f"buffer_to_ndarray / np.from_dlpack(ndarray): {per['b2n'] / per['dlpack_nd']:.2f}x;"
              f" dfbuffer's share: {per['b2n'] - per['pa_calls']:.0f} instructions")
    if {"fo_pd", "pd_calls", "dlpack_pd"} <= set(per):
        print(f"from_object(pandas buffer) / np.from_dlpack(buf): "
              f"{per['fo_pd'] / per['dlpack_pd']:.2f}x (pandas' calls alone "
              f"{per['pd_calls'] / per['dlpack_pd']:.2f}x); dfbuffer's share: "
              f"{per['fo_pd'] - per['pd_calls']:.0f} instructions")


if __name__ == "__main__":
    if len(sys.argv) > 2 and sys.argv[1] == "--child":
        child(sys.argv[2].split(","))
    else:
        main()
