#!/bin/sh
# Runs tests/gpu/test_gpu.py on a machine with a CUDA device and CuPy or torch (with CUDA).
# Elsewhere it prints why and exits 0.  Extra arguments go to pytest.
#
#   tests/gpu/run.sh                                  # an installed dfbuffer
#   PYTHONPATH=build/dev/stage tests/gpu/run.sh -v    # the in-place dev build
set -eu
cd "$(dirname "$0")/../.."
PYTHON=${PYTHON:-python3}
if ! "$PYTHON" - <<'PY'
import sys

found = []
try:
    import cupy

    if cupy.cuda.runtime.getDeviceCount() > 0:
        found.append("cupy")
except Exception:
    pass
try:
    import torch

    if torch.cuda.is_available():
        found.append("torch")
except Exception:
    pass
print("tests/gpu: CUDA through " + " and ".join(found) if found else "", end="")
sys.exit(0 if found else 1)
PY
then
    echo "tests/gpu: no CUDA device usable from CuPy or torch here; GPU tests skipped."
    exit 0
fi
echo
DFBUFFER_GPU_TESTS=1 exec "$PYTHON" -m pytest -q -p no:cacheprovider tests/gpu "$@"
