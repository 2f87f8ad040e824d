"""JSON-lines logging on stderr: one object per record, with the fields a log pipeline can index."""

from __future__ import annotations

import logging
import sys
import time
from typing import Any

import orjson

# Attributes every LogRecord has; anything else came in through `extra=` and is not ours to print twice.
_STANDARD = frozenset(logging.makeLogRecord({}).__dict__) | {"message", "asctime", "taskName"}


class JsonFormatter(logging.Formatter):
    """`{"time", "level", "logger", "msg", ...fields}`; structured data goes in `extra={"fields": {...}}`."""

    def format(self, record: logging.LogRecord) -> str:
        entry: dict[str, Any] = {
            "time": _utc(record.created),
            "level": record.levelname.lower(),
            "logger": record.name,
            "msg": record.getMessage(),
        }
        fields = getattr(record, "fields", None)
        if isinstance(fields, dict):
            entry.update(fields)
        if record.exc_info:
            entry["exception"] = self.formatException(record.exc_info)
        return orjson.dumps(entry, default=str).decode()


_last_second: tuple[int, str] = (-1, "")  # a whole second and its text: formatted once, not once per line


def _utc(created: float) -> str:
    global _last_second
    second, text = _last_second
    if second != int(created):
        second = int(created)
        text = time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(second))
        _last_second = (second, text)
    return f"{text}.{int(created % 1 * 1000):03d}Z"


def configure(level: str) -> None:
    """Route every logger (ours, uvicorn's, asyncio's) through one JSON handler on stderr; records skip what the
    lines never show (the caller's file and line, thread and process names: the logging HOWTO's optimisations)."""
    logging._srcfile = None  # no stack walk to find the caller
    logging.logThreads = False
    logging.logProcesses = False
    logging.logMultiprocessing = False
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(JsonFormatter())
    root = logging.getLogger()
    root.handlers[:] = [handler]
    root.setLevel(level.upper())
    for name in ("uvicorn", "uvicorn.error", "uvicorn.access"):
        logger = logging.getLogger(name)
        logger.handlers[:] = []
        logger.propagate = True
