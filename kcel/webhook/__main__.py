"""`python -m kcel.webhook ...`: the same server as `kcel serve ...`."""

from __future__ import annotations

import sys

from kcel.webhook.command import main

if __name__ == "__main__":
    sys.exit(main())
