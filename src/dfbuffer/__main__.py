"""``python -m dfbuffer``: the interop report (dfbuffer._report)."""

import sys

from dfbuffer._report import main

if __name__ == "__main__":
    sys.exit(main())
