"""The GPU tests run only through tests/gpu/run.sh (which sets DFBUFFER_GPU_TESTS=1 after
finding a CUDA device with CuPy or torch); the normal suite never collects them."""

import os

collect_ignore = [] if os.environ.get("DFBUFFER_GPU_TESTS") == "1" else ["test_gpu.py"]
