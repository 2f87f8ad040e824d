"""`actualSize`: the size cel-go's cost model charges for a value."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from kcel.errors import EvalError

MAX_BUILT_SIZE = 3 * 1024 * 1024
"""Characters of a string, elements of a list: the most a library function builds whose result can outgrow its
cost (`x.replace('', x)` costs a few units per thousand characters of `x`, however long its result; `%s` of a
list whose elements share sublists; `join` and `flatten` of shared lists). The API server refuses request bodies
over 3 MiB, so no request can hold a larger value: kcel refuses to build one rather than exhaust its memory."""


def refuse_oversized(size: int, function: str, unit: str = "characters") -> None:
    """Raise the CEL error for a result of `size` that `function` would build past MAX_BUILT_SIZE."""
    if size > MAX_BUILT_SIZE:
        raise EvalError(
            f"{function}: the result would have {size:,} {unit}, more than kcel builds ({MAX_BUILT_SIZE:,}: "
            "no request to the API server can hold such a value)"
        )


def text_size(value: Any, known: dict[int, int] | None = None) -> int:
    """About how many characters a value's text takes (at least one per scalar, its length for strings and bytes,
    with separators), counting a list or map shared in several places at each place but walking it once."""
    if isinstance(value, (str, bytes)):
        return len(value)
    if not isinstance(value, (list, tuple, Mapping)):
        return 1
    known = {} if known is None else known
    size = known.get(id(value))
    if size is None:
        if isinstance(value, Mapping):
            size = 2 + sum(text_size(k, known) + text_size(v, known) + 3 for k, v in value.items())
        else:
            size = 2 + sum(text_size(item, known) + 2 for item in value)
        known[id(value)] = size
    return size


def actual_size(value: Any) -> int:
    """Code points of a string, length of bytes/lists/maps, 1 for anything else."""
    if isinstance(value, (str, bytes, list, tuple, Mapping)):
        return len(value)
    size = getattr(value, "cel_size", None)
    if size is not None:
        return int(size())
    return 1
