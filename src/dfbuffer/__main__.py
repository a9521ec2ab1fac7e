"""``python -m dfbuffer``: the interop report."""

from __future__ import annotations

import sys


def main(argv: list[str] | None = None) -> int:
    import dfbuffer

    print(f"dfbuffer {dfbuffer.__version__}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
