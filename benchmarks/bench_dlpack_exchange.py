"""DLPack hand-off through the C exchange API against __dlpack__, measured in one run.

    PYTHONPATH=build/dev/stage python benchmarks/bench_dlpack_exchange.py [--number N] [--repeat R]

Each case times the exchange-API side and the __dlpack__ side of the same hand-off with
timeit (best of R repeats of N calls, the two sides timed alternately so that machine load
hits both alike) and prints the ratio exchange / __dlpack__ (below 1: the exchange API is
faster).  Cases whose peer is not installed (torch, tvm_ffi) are reported as skipped.

- dfbuffer as consumer: Buffer.from_object(torch tensor) reads torch's table; the
  __dlpack__ side is what the fallback does, from_object of t.__dlpack__(max_version=...).
- dfbuffer as producer: tvm_ffi.from_dlpack(buf) reads dfbuffer's table; the __dlpack__ side
  hands tvm_ffi the capsule of buf.__dlpack__(max_version=...).
  tvm_ffi's consumer is Cython: this is the C-level call of dfbuffer's function pointers
  (managed_tensor_from_py_object_no_sync, then the deleter when the tensor dies).  A ctypes
  call costs more than the functions themselves, so ctypes is not used for timing.
- for scale, np.from_dlpack(buf) and torch.from_dlpack(buf), which only speak __dlpack__.
"""

from __future__ import annotations

import argparse
import timeit
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

import dfbuffer


@dataclass
class Case:
    name: str
    exchange: Callable[[], object] | None
    dlpack: Callable[[], object] | None
    why_skipped: str = ""


def _torch():
    try:
        import torch
    except ImportError:
        return None
    return torch if hasattr(torch.Tensor, "__dlpack_c_exchange_api__") else None


def _tvm_ffi():
    try:
        import tvm_ffi
    except ImportError:
        return None
    return tvm_ffi


def build_cases() -> list[Case]:
    arr = np.arange(1000, dtype=np.float64)
    buf = dfbuffer.Buffer.from_object(arr)
    version = (dfbuffer._interchange.DLPACK_MAJOR_VERSION,
               dfbuffer._interchange.DLPACK_MINOR_VERSION)
    from_object = dfbuffer.Buffer.from_object
    cases = []

    torch = _torch()
    if torch is not None:
        t = torch.arange(1000, dtype=torch.float64)
        t2 = torch.arange(12.0).reshape(3, 4)[:, ::2]
        cases += [
            Case("Buffer.from_object(torch 1-D)", lambda: from_object(t),
                 lambda: from_object(t.__dlpack__(max_version=version))),
            Case("Buffer.from_object(torch 2-D strided)", lambda: from_object(t2),
                 lambda: from_object(t2.__dlpack__(max_version=version))),
        ]
    else:
        cases.append(Case("Buffer.from_object(torch)", None, None,
                          "torch with the exchange API not installed"))

    tvm_ffi = _tvm_ffi()
    if tvm_ffi is not None:
        cases.append(Case("tvm_ffi.from_dlpack(buf)", lambda: tvm_ffi.from_dlpack(buf),
                          lambda: tvm_ffi.from_dlpack(buf.__dlpack__(max_version=version))))
    else:
        cases.append(Case("tvm_ffi.from_dlpack(buf)", None, None, "tvm_ffi not installed"))

    from_dlpack = np.from_dlpack
    cases.append(Case("np.from_dlpack(buf) (__dlpack__ only)", None,
                      lambda: from_dlpack(buf), "NumPy reads no exchange table"))
    if torch is not None:
        cases.append(Case("torch.from_dlpack(buf) (__dlpack__ only)", None,
                          lambda: torch.from_dlpack(buf), "torch 2.13 reads no table"))
    return cases


def best_pair(
    a: Callable[[], object], b: Callable[[], object], number: int, repeat: int
) -> tuple[float, float]:
    """Best time per call (ns) of each, timed alternately so that load hits both alike."""
    t_a = t_b = float("inf")
    for _ in range(repeat):
        t_a = min(t_a, timeit.timeit(a, number=number))
        t_b = min(t_b, timeit.timeit(b, number=number))
    return t_a / number * 1e9, t_b / number * 1e9


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--number", type=int, default=1_000)
    p.add_argument("--repeat", type=int, default=100)
    args = p.parse_args()
    import platform

    print(f"Python {platform.python_version()}, numpy {np.__version__}, "
          f"dfbuffer {dfbuffer.__version__}; best of {args.repeat} x {args.number} calls")
    print(f"{'case':42} {'exchange ns':>12} {'__dlpack__ ns':>14} {'ratio':>6}")
    for c in build_cases():
        if c.exchange is None and c.dlpack is None:
            print(f"{c.name:42} skipped: {c.why_skipped}")
            continue
        if c.exchange is None:
            assert c.dlpack is not None
            _, ns = best_pair(c.dlpack, c.dlpack, args.number, args.repeat)
            print(f"{c.name:42} {'-':>12} {ns:14.0f} {'-':>6}  ({c.why_skipped})")
            continue
        assert c.dlpack is not None
        ex, dl = best_pair(c.exchange, c.dlpack, args.number, args.repeat)
        print(f"{c.name:42} {ex:12.0f} {dl:14.0f} {ex / dl:6.2f}")


if __name__ == "__main__":
    main()
