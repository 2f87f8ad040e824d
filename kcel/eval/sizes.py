"""`actualSize`: the size cel-go's cost model charges for a value."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any


def actual_size(value: Any) -> int:
    """Code points of a string, length of bytes/lists/maps, 1 for anything else."""
    if isinstance(value, (str, bytes, list, tuple, Mapping)):
        return len(value)
    size = getattr(value, "cel_size", None)
    if size is not None:
        return int(size())
    return 1
