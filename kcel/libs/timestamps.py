"""The standard library's timestamp and duration overloads: conversions, arithmetic, comparisons, accessors.

Overload ids and semantics follow cel-go v0.29.2 (`common/stdlib/standard.go`,
`common/types/timestamp.go`, `duration.go`, `overflow.go`). Accessors without a zone read the
UTC wall clock; the `_with_tz` forms take an IANA name or a "[+-]HH:MM" offset.
"""

from __future__ import annotations

from collections.abc import Callable

from kcel.checker.types import BOOL, DURATION, INT, STRING, TIMESTAMP, CelType
from kcel.errors import EvalError
from kcel.eval.runtime import register_temporal
from kcel.libs import Library, Overload
from kcel.temporal import (
    MAX_TIMESTAMP_NANOS,
    MIN_TIMESTAMP_NANOS,
    NANOS_PER_SECOND,
    SECONDS_PER_DAY,
    TIMESTAMP_OVERFLOW,
    Duration,
    Timestamp,
    civil_from_days,
    days_from_civil,
    go_quo,
    go_units,
    local_seconds,
)
from kcel.values import INT64_MAX, INT64_MIN

INTEGER_OVERFLOW = "integer overflow"
_NANOS_PER_MINUTE = 60 * NANOS_PER_SECOND
_NANOS_PER_HOUR = 3600 * NANOS_PER_SECOND


def _int64(value: int) -> int:
    if not INT64_MIN <= value <= INT64_MAX:
        raise EvalError(INTEGER_OVERFLOW)
    return value


def _shift(ts: Timestamp, nanos: int) -> Timestamp:
    """Move a timestamp, keeping its zone as Go's `time.Unix(...).In(loc)` does."""
    moved = ts.nanos + nanos
    if not MIN_TIMESTAMP_NANOS <= moved <= MAX_TIMESTAMP_NANOS:
        raise EvalError(TIMESTAMP_OVERFLOW)
    return Timestamp(moved, ts.offset)


def _utc_seconds(ts: Timestamp) -> int:
    return ts.nanos // NANOS_PER_SECOND


# --- conversions ---------------------------------------------------------------------------------


def timestamp_to_timestamp(ts: Timestamp) -> Timestamp:
    return ts


def int64_to_timestamp(seconds: int) -> Timestamp:
    return Timestamp.from_unix(seconds)


def string_to_timestamp(text: str) -> Timestamp:
    return Timestamp.parse(text)


def duration_to_duration(d: Duration) -> Duration:
    return d


def string_to_duration(text: str) -> Duration:
    return Duration.parse(text)


def timestamp_to_string(ts: Timestamp) -> str:
    return ts.format()


def duration_to_string(d: Duration) -> str:
    return d.format()


def timestamp_to_int64(ts: Timestamp) -> int:
    return ts.unix_seconds


def duration_to_int64(d: Duration) -> int:
    return d.nanos


# --- arithmetic ----------------------------------------------------------------------------------


def add_timestamp_duration(ts: Timestamp, d: Duration) -> Timestamp:
    return _shift(ts, d.nanos)


def add_duration_timestamp(d: Duration, ts: Timestamp) -> Timestamp:
    return _shift(ts, d.nanos)


def add_duration_duration(a: Duration, b: Duration) -> Duration:
    return Duration(_int64(a.nanos + b.nanos))


def subtract_timestamp_duration(ts: Timestamp, d: Duration) -> Timestamp:
    # cel-go negates the duration first, so the minimum duration overflows as an integer.
    return _shift(ts, _int64(-d.nanos))


def subtract_timestamp_timestamp(a: Timestamp, b: Timestamp) -> Duration:
    """cel-go scales the whole-second difference to nanoseconds first, then adds the nanoseconds.

    Each step is int64-checked, so a difference just inside int64 can still overflow.
    """
    seconds_a, nanos_a = divmod(a.nanos, NANOS_PER_SECOND)
    seconds_b, nanos_b = divmod(b.nanos, NANOS_PER_SECOND)
    scaled = _int64((seconds_a - seconds_b) * NANOS_PER_SECOND)
    return Duration(_int64(scaled + nanos_a - nanos_b))


def subtract_duration_duration(a: Duration, b: Duration) -> Duration:
    return Duration(_int64(a.nanos - b.nanos))


# --- comparisons ---------------------------------------------------------------------------------


def less_timestamp(a: Timestamp, b: Timestamp) -> bool:
    return a.nanos < b.nanos


def less_equals_timestamp(a: Timestamp, b: Timestamp) -> bool:
    return a.nanos <= b.nanos


def greater_timestamp(a: Timestamp, b: Timestamp) -> bool:
    return a.nanos > b.nanos


def greater_equals_timestamp(a: Timestamp, b: Timestamp) -> bool:
    return a.nanos >= b.nanos


def less_duration(a: Duration, b: Duration) -> bool:
    return a.nanos < b.nanos


def less_equals_duration(a: Duration, b: Duration) -> bool:
    return a.nanos <= b.nanos


def greater_duration(a: Duration, b: Duration) -> bool:
    return a.nanos > b.nanos


def greater_equals_duration(a: Duration, b: Duration) -> bool:
    return a.nanos >= b.nanos


# --- timestamp accessors: each field is a function of wall-clock seconds since 1970 -------------


def _year(seconds: int) -> int:
    return civil_from_days(seconds // SECONDS_PER_DAY)[0]


def _month(seconds: int) -> int:
    return civil_from_days(seconds // SECONDS_PER_DAY)[1] - 1


def _day_of_year(seconds: int) -> int:
    days = seconds // SECONDS_PER_DAY
    return days - days_from_civil(civil_from_days(days)[0], 1, 1)


def _day_of_month(seconds: int) -> int:
    return civil_from_days(seconds // SECONDS_PER_DAY)[2] - 1


def _day_of_week(seconds: int) -> int:
    return (seconds // SECONDS_PER_DAY + 4) % 7  # 1970-01-01 was a Thursday; Sunday is 0


def _hours(seconds: int) -> int:
    return seconds % SECONDS_PER_DAY // 3600


def _minutes(seconds: int) -> int:
    return seconds % 3600 // 60


def _milliseconds(ts: Timestamp) -> int:
    return ts.nanos % NANOS_PER_SECOND // 1_000_000


def timestamp_to_year(ts: Timestamp) -> int:
    return _year(_utc_seconds(ts))


def timestamp_to_year_with_tz(ts: Timestamp, tz: str) -> int:
    return _year(local_seconds(ts, tz))


def timestamp_to_month(ts: Timestamp) -> int:
    return _month(_utc_seconds(ts))


def timestamp_to_month_with_tz(ts: Timestamp, tz: str) -> int:
    return _month(local_seconds(ts, tz))


def timestamp_to_day_of_year(ts: Timestamp) -> int:
    return _day_of_year(_utc_seconds(ts))


def timestamp_to_day_of_year_with_tz(ts: Timestamp, tz: str) -> int:
    return _day_of_year(local_seconds(ts, tz))


def timestamp_to_day_of_month(ts: Timestamp) -> int:
    return _day_of_month(_utc_seconds(ts))


def timestamp_to_day_of_month_with_tz(ts: Timestamp, tz: str) -> int:
    return _day_of_month(local_seconds(ts, tz))


def timestamp_to_day_of_month_1_based(ts: Timestamp) -> int:
    return _day_of_month(_utc_seconds(ts)) + 1


def timestamp_to_day_of_month_1_based_with_tz(ts: Timestamp, tz: str) -> int:
    return _day_of_month(local_seconds(ts, tz)) + 1


def timestamp_to_day_of_week(ts: Timestamp) -> int:
    return _day_of_week(_utc_seconds(ts))


def timestamp_to_day_of_week_with_tz(ts: Timestamp, tz: str) -> int:
    return _day_of_week(local_seconds(ts, tz))


def timestamp_to_hours(ts: Timestamp) -> int:
    return _hours(_utc_seconds(ts))


def timestamp_to_hours_with_tz(ts: Timestamp, tz: str) -> int:
    return _hours(local_seconds(ts, tz))


def timestamp_to_minutes(ts: Timestamp) -> int:
    return _minutes(_utc_seconds(ts))


def timestamp_to_minutes_with_tz(ts: Timestamp, tz: str) -> int:
    return _minutes(local_seconds(ts, tz))


def timestamp_to_seconds(ts: Timestamp) -> int:
    return _utc_seconds(ts) % 60


def timestamp_to_seconds_tz(ts: Timestamp, tz: str) -> int:
    return local_seconds(ts, tz) % 60


def timestamp_to_milliseconds(ts: Timestamp) -> int:
    return _milliseconds(ts)


def timestamp_to_milliseconds_with_tz(ts: Timestamp, tz: str) -> int:
    local_seconds(ts, tz)  # a bad zone is still an error, as in cel-go
    return _milliseconds(ts)


# --- duration accessors: Go's float Hours()/Minutes()/Seconds() truncated to int ---------------


def duration_to_hours(d: Duration) -> int:
    return int(go_units(d.nanos, _NANOS_PER_HOUR))


def duration_to_minutes(d: Duration) -> int:
    return int(go_units(d.nanos, _NANOS_PER_MINUTE))


def duration_to_seconds(d: Duration) -> int:
    return int(go_units(d.nanos, NANOS_PER_SECOND))


def duration_to_milliseconds(d: Duration) -> int:
    return go_quo(d.nanos, 1_000_000)


# --- the table -----------------------------------------------------------------------------------

_TS, _DUR, _TS_TZ = (TIMESTAMP,), (DURATION,), (TIMESTAMP, STRING)
_TS_TS, _TS_DUR, _DUR_DUR = (TIMESTAMP, TIMESTAMP), (TIMESTAMP, DURATION), (DURATION, DURATION)
_T0 = "timestamp('2023-07-14T10:30:45.123Z')"


def _member(id: str, function: str, args: tuple[CelType, ...], impl: Callable[..., int], doc: str) -> Overload:
    return Overload(id, function, args, INT, impl, member=True, doc=doc)


_CONVERSIONS = (
    Overload("timestamp_to_timestamp", "timestamp", _TS, TIMESTAMP, timestamp_to_timestamp, doc=f"timestamp({_T0})"),
    Overload("int64_to_timestamp", "timestamp", (INT,), TIMESTAMP, int64_to_timestamp, doc="timestamp(1)"),
    Overload("string_to_timestamp", "timestamp", (STRING,), TIMESTAMP, string_to_timestamp, doc=_T0),
    Overload("duration_to_duration", "duration", _DUR, DURATION, duration_to_duration, doc="duration(duration('1s'))"),
    Overload("string_to_duration", "duration", (STRING,), DURATION, string_to_duration, doc="duration('1h2m3s')"),
    Overload("timestamp_to_string", "string", _TS, STRING, timestamp_to_string, doc=f"string({_T0})"),
    Overload(
        "duration_to_string", "string", _DUR, STRING, duration_to_string, doc="string(duration('1h30m')) // '5400s'"
    ),
    Overload("timestamp_to_int64", "int", _TS, INT, timestamp_to_int64, doc="int(timestamp(1)) // 1"),
    Overload("duration_to_int64", "int", _DUR, INT, duration_to_int64, doc="int(duration('1s')) // 1000000000"),
)

_ARITHMETIC = (
    Overload(
        "add_timestamp_duration", "_+_", _TS_DUR, TIMESTAMP, add_timestamp_duration, doc=f"{_T0} + duration('24h')"
    ),
    Overload(
        "add_duration_timestamp",
        "_+_",
        (DURATION, TIMESTAMP),
        TIMESTAMP,
        add_duration_timestamp,
        doc=f"duration('24h') + {_T0}",
    ),
    Overload(
        "add_duration_duration", "_+_", _DUR_DUR, DURATION, add_duration_duration, doc="duration('1m') + duration('1s')"
    ),
    Overload(
        "subtract_timestamp_duration",
        "_-_",
        _TS_DUR,
        TIMESTAMP,
        subtract_timestamp_duration,
        doc=f"{_T0} - duration('12h')",
    ),
    Overload(
        "subtract_timestamp_timestamp",
        "_-_",
        _TS_TS,
        DURATION,
        subtract_timestamp_timestamp,
        doc=f"{_T0} - timestamp(0)",
    ),
    Overload(
        "subtract_duration_duration",
        "_-_",
        _DUR_DUR,
        DURATION,
        subtract_duration_duration,
        doc="duration('1m') - duration('1s') // duration('59s')",
    ),
)

_COMPARISONS = (
    Overload("less_timestamp", "_<_", _TS_TS, BOOL, less_timestamp, doc=f"timestamp(0) < {_T0}"),
    Overload("less_equals_timestamp", "_<=_", _TS_TS, BOOL, less_equals_timestamp, doc=f"timestamp(0) <= {_T0}"),
    Overload("greater_timestamp", "_>_", _TS_TS, BOOL, greater_timestamp, doc=f"{_T0} > timestamp(0)"),
    Overload("greater_equals_timestamp", "_>=_", _TS_TS, BOOL, greater_equals_timestamp, doc=f"{_T0} >= timestamp(0)"),
    Overload("less_duration", "_<_", _DUR_DUR, BOOL, less_duration, doc="duration('1ms') < duration('1s')"),
    Overload(
        "less_equals_duration", "_<=_", _DUR_DUR, BOOL, less_equals_duration, doc="duration('1m') <= duration('60s')"
    ),
    Overload("greater_duration", "_>_", _DUR_DUR, BOOL, greater_duration, doc="duration('1ms') > duration('1us')"),
    Overload(
        "greater_equals_duration",
        "_>=_",
        _DUR_DUR,
        BOOL,
        greater_equals_duration,
        doc="duration('60s') >= duration('1m')",
    ),
)

_TIMESTAMP_ACCESSORS = (
    _member("timestamp_to_year", "getFullYear", _TS, timestamp_to_year, f"{_T0}.getFullYear() // 2023"),
    _member("timestamp_to_year_with_tz", "getFullYear", _TS_TZ, timestamp_to_year_with_tz, "ts.getFullYear('-08:00')"),
    _member("timestamp_to_month", "getMonth", _TS, timestamp_to_month, f"{_T0}.getMonth() // 6, months are 0-based"),
    _member("timestamp_to_month_with_tz", "getMonth", _TS_TZ, timestamp_to_month_with_tz, "ts.getMonth('US/Central')"),
    _member("timestamp_to_day_of_year", "getDayOfYear", _TS, timestamp_to_day_of_year, f"{_T0}.getDayOfYear() // 194"),
    _member(
        "timestamp_to_day_of_year_with_tz",
        "getDayOfYear",
        _TS_TZ,
        timestamp_to_day_of_year_with_tz,
        "ts.getDayOfYear('Europe/Berlin')",
    ),
    _member(
        "timestamp_to_day_of_month", "getDayOfMonth", _TS, timestamp_to_day_of_month, f"{_T0}.getDayOfMonth() // 13"
    ),
    _member(
        "timestamp_to_day_of_month_with_tz",
        "getDayOfMonth",
        _TS_TZ,
        timestamp_to_day_of_month_with_tz,
        "ts.getDayOfMonth('+05:30')",
    ),
    _member(
        "timestamp_to_day_of_month_1_based", "getDate", _TS, timestamp_to_day_of_month_1_based, f"{_T0}.getDate() // 14"
    ),
    _member(
        "timestamp_to_day_of_month_1_based_with_tz",
        "getDate",
        _TS_TZ,
        timestamp_to_day_of_month_1_based_with_tz,
        "ts.getDate('Asia/Tokyo')",
    ),
    _member("timestamp_to_day_of_week", "getDayOfWeek", _TS, timestamp_to_day_of_week, f"{_T0}.getDayOfWeek() // 5"),
    _member(
        "timestamp_to_day_of_week_with_tz",
        "getDayOfWeek",
        _TS_TZ,
        timestamp_to_day_of_week_with_tz,
        "ts.getDayOfWeek('America/Los_Angeles') // 0 = Sunday",
    ),
    _member("timestamp_to_hours", "getHours", _TS, timestamp_to_hours, f"{_T0}.getHours() // 10"),
    _member("timestamp_to_hours_with_tz", "getHours", _TS_TZ, timestamp_to_hours_with_tz, "ts.getHours('02:00')"),
    _member("timestamp_to_minutes", "getMinutes", _TS, timestamp_to_minutes, f"{_T0}.getMinutes() // 30"),
    _member(
        "timestamp_to_minutes_with_tz",
        "getMinutes",
        _TS_TZ,
        timestamp_to_minutes_with_tz,
        "ts.getMinutes('Asia/Kathmandu')",
    ),
    _member("timestamp_to_seconds", "getSeconds", _TS, timestamp_to_seconds, f"{_T0}.getSeconds() // 45"),
    _member("timestamp_to_seconds_tz", "getSeconds", _TS_TZ, timestamp_to_seconds_tz, "ts.getSeconds('-00:00')"),
    _member(
        "timestamp_to_milliseconds",
        "getMilliseconds",
        _TS,
        timestamp_to_milliseconds,
        f"{_T0}.getMilliseconds() // 123",
    ),
    _member(
        "timestamp_to_milliseconds_with_tz",
        "getMilliseconds",
        _TS_TZ,
        timestamp_to_milliseconds_with_tz,
        "ts.getMilliseconds('UTC')",
    ),
)

_DURATION_ACCESSORS = (
    _member("duration_to_hours", "getHours", _DUR, duration_to_hours, "duration('3723s').getHours() // 1"),
    _member("duration_to_minutes", "getMinutes", _DUR, duration_to_minutes, "duration('3723s').getMinutes() // 62"),
    _member(
        "duration_to_seconds", "getSeconds", _DUR, duration_to_seconds, "duration('3723.456s').getSeconds() // 3723"
    ),
    _member(
        "duration_to_milliseconds",
        "getMilliseconds",
        _DUR,
        duration_to_milliseconds,
        "duration('1.5s').getMilliseconds() // 1500",
    ),
)


def _int_to_duration(value: int) -> Duration:
    """cel-go before v0.26 declared `duration(int)`, bound to Int.ConvertToType, which has no duration case."""
    raise EvalError("type conversion error from 'int' to 'google.protobuf.Duration'")


def library(version: int = 1) -> Library:
    """Version 0 is cel-go's before v0.26 (Kubernetes up to 1.33), which declared `duration(int)`: it type-checks,
    and fails when evaluated; 1 is the newer cel-go's, without it."""
    older = (Overload("int64_to_duration", "duration", (INT,), DURATION, _int_to_duration),) if version < 1 else ()
    return Library(
        "timestamps",
        overloads=(*_CONVERSIONS, *older, *_ARITHMETIC, *_COMPARISONS, *_TIMESTAMP_ACCESSORS, *_DURATION_ACCESSORS),
    )


LIBRARY = library(1)

# The dynamic `+`/`-` operators (kcel.eval.runtime) reach these overloads by operand class.
for _overload in _ARITHMETIC:
    _op = "add" if _overload.function == "_+_" else "subtract"
    _left, _right = (Timestamp if t == TIMESTAMP else Duration for t in _overload.args)
    register_temporal(_op, _left, _right, _overload.impl)
