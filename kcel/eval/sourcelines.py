"""The generated source of each live function in `linecache`, so tracebacks and pdb show its lines, and only while a
function compiled from it is alive.

Every compiled program's source used to stay in `linecache` for good: a webhook reloading its policies or a
language server compiling at each edit grew by every version it had compiled. Programs with the same source share
one file name (its digest), so the entry is counted: it goes when the last function from that source is collected.
"""

from __future__ import annotations

import linecache
import threading
import weakref
from collections import deque
from collections.abc import Callable
from typing import Any

_lock = threading.Lock()  # programs compile and are collected on many threads
_holders: dict[str, int] = {}  # file name -> live functions compiled from it
# File names whose function was collected. A finalizer runs wherever the collector does, perhaps inside this
# module with the lock held: it only queues, and whoever holds the lock next counts it.
_released: deque[str] = deque()


def compile_function(source: str, filename: str, namespace: dict[str, Any], name: str) -> Callable[..., Any]:
    """Execute `source` in `namespace` and return its function `name`, its lines in `linecache` while it lives."""
    code = compile(source, filename, "exec")  # a SyntaxError leaves nothing behind
    with _lock:
        _count_released()
        _holders[filename] = _holders.get(filename, 0) + 1
        linecache.cache[filename] = (len(source), None, source.splitlines(True), filename)
    try:
        exec(code, namespace)
        function: Callable[..., Any] = namespace[name]
    except BaseException:
        _release(filename)
        raise
    weakref.finalize(function, _release, filename).atexit = False  # nothing to tidy when the process ends
    return function


def held() -> int:
    """How many generated sources `linecache` holds for live functions (for tests and memory figures)."""
    with _lock:
        _count_released()
        return len(_holders)


def _release(filename: str) -> None:
    _released.append(filename)
    if _lock.acquire(blocking=False):  # else its holder counts it before letting go
        try:
            _count_released()
        finally:
            _lock.release()


def _count_released() -> None:
    """With the lock held: one holder less for each queued file name; its lines go with the last."""
    while _released:
        filename = _released.popleft()
        left = _holders.pop(filename, 1) - 1
        if left > 0:
            _holders[filename] = left
        else:
            linecache.cache.pop(filename, None)
