"""CEL `timestamp` and `duration` values: cel-go's ranges, string parsing and formatting, time zones.

cel-go keeps a timestamp as a Go `time.Time` and a duration as a Go `time.Duration` (int64
nanoseconds), and its conversions are Go's `time.Parse(time.RFC3339, s)`,
`time.ParseDuration(s)`, `Format(time.RFC3339Nano)` and `time.LoadLocation`. This module
reproduces exactly what those accept, reject and print, on plain integer nanoseconds.
"""

from __future__ import annotations

import functools
import posixpath
import re
from datetime import datetime, timedelta, timezone
from typing import TYPE_CHECKING, Any

from kcel.errors import EvalError
from kcel.values import INT64_MAX, INT64_MIN

if TYPE_CHECKING:  # decimal and zoneinfo are imported when first needed: most expressions need neither
    from zoneinfo import ZoneInfo

NANOS_PER_SECOND = 1_000_000_000
SECONDS_PER_DAY = 86_400
MIN_UNIX_SECONDS = -62_135_596_800
"""0001-01-01T00:00:00Z, the first second cel-go accepts."""
MAX_UNIX_SECONDS = 253_402_300_799
"""9999-12-31T23:59:59Z, the last second cel-go accepts."""
MIN_TIMESTAMP_NANOS = MIN_UNIX_SECONDS * NANOS_PER_SECOND
MAX_TIMESTAMP_NANOS = MAX_UNIX_SECONDS * NANOS_PER_SECOND + NANOS_PER_SECOND - 1
MIN_DURATION_NANOS, MAX_DURATION_NANOS = INT64_MIN, INT64_MAX
"""A duration is a Go `time.Duration`: int64 nanoseconds, about ±292 years."""

TIMESTAMP_PARSE_ERROR = "type conversion error from 'string' to 'google.protobuf.Timestamp'"
DURATION_PARSE_ERROR = "type conversion error from 'string' to 'google.protobuf.Duration'"
TIMESTAMP_OVERFLOW = "timestamp overflow"


class Timestamp:
    """A point in time with nanosecond precision, in cel-go's range (years 1 to 9999, UTC).

    `offset` is the UTC offset (seconds east) that the value was written with; cel-go keeps it
    and `string()` prints it, but it takes no part in equality, hashing or ordering. The
    constructor trusts its arguments (it is on the hot path); `parse`, `from_unix` and
    `from_python` check the range.

    >>> ts = Timestamp.parse("2009-02-13T23:31:30.5+01:00")
    >>> ts.format(), ts.unix_seconds
    ('2009-02-13T23:31:30.5+01:00', 1234564290)
    """

    __slots__ = ("nanos", "offset")
    cel_type_name = "google.protobuf.Timestamp"
    """What `type()` returns and what runtime dispatch matches on."""
    nanos: int
    offset: int

    def __init__(self, nanos: int, offset: int = 0) -> None:
        _set_timestamp_nanos(self, nanos)
        _set_timestamp_offset(self, offset)

    @classmethod
    def parse(cls, text: str) -> Timestamp:
        """`timestamp(string)`: RFC 3339 as Go's `time.Parse(time.RFC3339, text)` reads it."""
        return _parse_timestamp(text)

    @classmethod
    def from_unix(cls, seconds: int) -> Timestamp:
        """`timestamp(int)`: seconds since the Unix epoch, in UTC."""
        if not MIN_UNIX_SECONDS <= seconds <= MAX_UNIX_SECONDS:
            raise EvalError(TIMESTAMP_OVERFLOW)
        return cls(seconds * NANOS_PER_SECOND)

    @classmethod
    def from_python(cls, value: datetime | Timestamp) -> Timestamp:
        """Take a `datetime` (naive means UTC) as callers pass it in; raise ValueError out of range."""
        if isinstance(value, Timestamp):
            return value
        offset = value.utcoffset() or timedelta(0)
        local = days_from_civil(value.year, value.month, value.day) * SECONDS_PER_DAY
        local += value.hour * 3600 + value.minute * 60 + value.second
        micros = local * 1_000_000 + value.microsecond - offset // _MICROSECOND
        nanos = micros * 1000
        if not MIN_TIMESTAMP_NANOS <= nanos <= MAX_TIMESTAMP_NANOS:
            raise ValueError(f"timestamp out of range: {value!r}")
        return cls(nanos, offset // _SECOND)

    def to_python(self) -> datetime:
        """An aware `datetime` at this instant in its own offset; nanoseconds are truncated."""
        utc = _EPOCH + timedelta(microseconds=self.nanos // 1000)
        if not self.offset:
            return utc
        try:
            return utc.astimezone(timezone(timedelta(seconds=self.offset)))
        except (OverflowError, ValueError):
            return utc

    @property
    def unix_seconds(self) -> int:
        """`int(timestamp)`: whole seconds since the epoch, rounded down like Go's `Unix()`."""
        return self.nanos // NANOS_PER_SECOND

    def format(self) -> str:
        """`string(timestamp)`: Go's RFC3339Nano in the value's own offset."""
        return _format_rfc3339(self.nanos, self.offset)

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError("Timestamp is immutable")

    def __reduce__(self) -> tuple[type[Timestamp], tuple[int, int]]:
        return Timestamp, (self.nanos, self.offset)

    def cel_is_zero(self) -> bool:
        """Go's zero time.Time (0001-01-01T00:00:00Z), what `optional.ofNonZeroValue` tests."""
        return self.nanos == MIN_UNIX_SECONDS * NANOS_PER_SECOND

    def __eq__(self, other: object) -> bool:
        if isinstance(other, Timestamp):
            return self.nanos == other.nanos
        return NotImplemented

    def __hash__(self) -> int:
        return hash(self.nanos)

    def __lt__(self, other: Timestamp) -> bool:
        if isinstance(other, Timestamp):
            return self.nanos < other.nanos
        return NotImplemented

    def __le__(self, other: Timestamp) -> bool:
        if isinstance(other, Timestamp):
            return self.nanos <= other.nanos
        return NotImplemented

    def __gt__(self, other: Timestamp) -> bool:
        if isinstance(other, Timestamp):
            return self.nanos > other.nanos
        return NotImplemented

    def __ge__(self, other: Timestamp) -> bool:
        if isinstance(other, Timestamp):
            return self.nanos >= other.nanos
        return NotImplemented

    def __repr__(self) -> str:
        return f'timestamp("{_format_rfc3339(self.nanos, 0)}")'

    __str__ = format


class Duration:
    """A signed span of time: int64 nanoseconds, like Go's `time.Duration`.

    >>> Duration.parse("1h30m").format(), Duration.parse("-1ns").format()
    ('5400s', '-0.000000001s')
    """

    __slots__ = ("nanos",)
    cel_type_name = "google.protobuf.Duration"
    nanos: int

    def __init__(self, nanos: int) -> None:
        _set_duration_nanos(self, nanos)

    @classmethod
    def parse(cls, text: str) -> Duration:
        """`duration(string)`: Go's `time.ParseDuration`, e.g. "1.5h", "-3m4s", "250ms", "0"."""
        return cls(_parse_go_duration(text))

    @classmethod
    def from_python(cls, value: timedelta | Duration) -> Duration:
        """Take a `timedelta` as callers pass it in; raise ValueError outside int64 nanoseconds."""
        if isinstance(value, Duration):
            return value
        nanos = (value // _MICROSECOND) * 1000
        if not MIN_DURATION_NANOS <= nanos <= MAX_DURATION_NANOS:
            raise ValueError(f"duration out of range: {value!r}")
        return cls(nanos)

    def to_python(self) -> timedelta:
        """A `timedelta`; nanoseconds are truncated toward zero."""
        return timedelta(microseconds=go_quo(self.nanos, 1000))

    def format(self) -> str:
        """`string(duration)`: seconds as Go's `FormatFloat(d.Seconds(), 'f', -1, 64)` plus "s"."""
        return _format_go_float(go_units(self.nanos, NANOS_PER_SECOND)) + "s"

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError("Duration is immutable")

    def __reduce__(self) -> tuple[type[Duration], tuple[int]]:
        return Duration, (self.nanos,)

    def cel_is_zero(self) -> bool:
        return self.nanos == 0

    def __eq__(self, other: object) -> bool:
        if isinstance(other, Duration):
            return self.nanos == other.nanos
        return NotImplemented

    def __hash__(self) -> int:
        return hash(self.nanos)

    def __lt__(self, other: Duration) -> bool:
        if isinstance(other, Duration):
            return self.nanos < other.nanos
        return NotImplemented

    def __le__(self, other: Duration) -> bool:
        if isinstance(other, Duration):
            return self.nanos <= other.nanos
        return NotImplemented

    def __gt__(self, other: Duration) -> bool:
        if isinstance(other, Duration):
            return self.nanos > other.nanos
        return NotImplemented

    def __ge__(self, other: Duration) -> bool:
        if isinstance(other, Duration):
            return self.nanos >= other.nanos
        return NotImplemented

    def __repr__(self) -> str:
        return f'duration("{self.format()}")'

    __str__ = format


# The classes refuse __setattr__; their constructors write the slots through the slot descriptors,
# which is also cheaper than object.__setattr__.
_set_timestamp_nanos = Timestamp.__dict__["nanos"].__set__
_set_timestamp_offset = Timestamp.__dict__["offset"].__set__
_set_duration_nanos = Duration.__dict__["nanos"].__set__

_EPOCH = datetime(1970, 1, 1, tzinfo=timezone.utc)
_SECOND = timedelta(seconds=1)
_MICROSECOND = timedelta(microseconds=1)
_UINT64_MASK = 2**64 - 1


# --- Go integer helpers -------------------------------------------------------------------


def go_quo(a: int, b: int) -> int:
    """Go's integer `/`: the quotient truncated toward zero (Python's `//` floors)."""
    q = a // b
    return q + 1 if q < 0 and q * b != a else q


def go_units(nanos: int, unit: int) -> float:
    """Go's `Duration.Seconds/Minutes/Hours`: float(whole units) + float(rest) / unit."""
    whole = go_quo(nanos, unit)
    return float(whole) + float(nanos - whole * unit) / unit


def _wrap_int64(value: int) -> int:
    """Go's silent int64 wrap-around, where cel-go's code can overflow without checking."""
    value &= _UINT64_MASK
    return value - 2**64 if value > INT64_MAX else value


# --- calendar ---------------------------------------------------------------------------------


def days_from_civil(year: int, month: int, day: int) -> int:
    """Days since 1970-01-01 of a proleptic Gregorian date (any year, no datetime limits)."""
    year -= month <= 2
    era = year // 400
    year_of_era = year - era * 400
    day_of_year = (153 * (month + (-3 if month > 2 else 9)) + 2) // 5 + day - 1
    day_of_era = year_of_era * 365 + year_of_era // 4 - year_of_era // 100 + day_of_year
    return era * 146_097 + day_of_era - 719_468


def civil_from_days(days: int) -> tuple[int, int, int]:
    """(year, month 1-12, day 1-31) of a day count since 1970-01-01; inverse of days_from_civil."""
    days += 719_468
    era = days // 146_097
    day_of_era = days - era * 146_097
    year_of_era = (day_of_era - day_of_era // 1460 + day_of_era // 36_524 - day_of_era // 146_096) // 365
    day_of_year = day_of_era - (365 * year_of_era + year_of_era // 4 - year_of_era // 100)
    shifted_month = (5 * day_of_year + 2) // 153
    day = day_of_year - (153 * shifted_month + 2) // 5 + 1
    month = shifted_month + 3 if shifted_month < 10 else shifted_month - 9
    return year_of_era + era * 400 + (month <= 2), month, day


def _days_in_month(year: int, month: int) -> int:
    if month == 2:
        return 29 if year % 4 == 0 and (year % 100 != 0 or year % 400 == 0) else 28
    return 30 if month in (4, 6, 9, 11) else 31


# --- timestamp text ---------------------------------------------------------------------------

# Go's time.Parse(RFC3339) tries a strict fast path and falls back to the layout parser, which
# also takes a one-digit hour, a comma before the fraction, any number of fraction digits
# (truncated to nanoseconds) and zone offsets up to +24:60. Only ASCII digits count.
_RFC3339 = re.compile(
    r"([0-9]{4})-([0-9]{2})-([0-9]{2})T([0-9]{1,2}):([0-9]{2}):([0-9]{2})"
    r"(?:[.,]([0-9]+))?(?:Z|([+-])([0-9]{2}):([0-9]{2}))"
)


def _parse_timestamp(text: str) -> Timestamp:
    match = _RFC3339.fullmatch(text)
    if match is None:
        raise EvalError(TIMESTAMP_PARSE_ERROR)
    fraction, sign, zone_hours, zone_minutes = match.group(7, 8, 9, 10)
    year, month, day, hour, minute, second = map(int, match.group(1, 2, 3, 4, 5, 6))
    if not (0 < month < 13 and 0 < day <= _days_in_month(year, month)) or hour > 23 or minute > 59 or second > 59:
        raise EvalError(TIMESTAMP_PARSE_ERROR)
    offset = 0
    if sign is not None:
        offset_hours, offset_minutes = int(zone_hours), int(zone_minutes)
        if offset_hours > 24 or offset_minutes > 60:
            raise EvalError(TIMESTAMP_PARSE_ERROR)
        offset = (offset_hours * 60 + offset_minutes) * (-60 if sign == "-" else 60)
    clock = hour * 3600 + minute * 60 + second
    seconds = days_from_civil(year, month, day) * SECONDS_PER_DAY + clock - offset
    if not MIN_UNIX_SECONDS <= seconds <= MAX_UNIX_SECONDS:
        raise EvalError(TIMESTAMP_OVERFLOW)
    nanos = int(fraction[:9].ljust(9, "0")) if fraction else 0
    return Timestamp(seconds * NANOS_PER_SECOND + nanos, offset)


def _format_rfc3339(nanos: int, offset: int) -> str:
    seconds, fraction = divmod(nanos, NANOS_PER_SECOND)
    days, clock = divmod(seconds + offset, SECONDS_PER_DAY)
    year, month, day = civil_from_days(days)
    text = f"{year:04d}-{month:02d}-{day:02d}T{clock // 3600:02d}:{clock // 60 % 60:02d}:{clock % 60:02d}"
    if fraction:
        text += "." + f"{fraction:09d}".rstrip("0")
    if offset == 0:
        return text + "Z"
    zone_minutes = abs(offset) // 60  # Go divides the offset toward zero
    return f"{text}{'-' if offset < 0 else '+'}{zone_minutes // 60:02d}:{zone_minutes % 60:02d}"


# --- duration text ------------------------------------------------------------------------------

_UNITS = {
    "ns": 1,
    "us": 1_000,
    "\u00b5s": 1_000,  # micro sign
    "\u03bcs": 1_000,  # Greek mu
    "ms": 1_000_000,
    "s": NANOS_PER_SECOND,
    "m": 60 * NANOS_PER_SECOND,
    "h": 3600 * NANOS_PER_SECOND,
}
_DURATION_PART = re.compile(r"([0-9]*)(?:\.([0-9]*))?([^0-9.]*)")
_TWO_63 = 2**63


def _parse_go_duration(text: str) -> int:
    """Go's time.ParseDuration, including its uint64 accumulator and float fractions."""
    rest = text[1:] if text[:1] in ("-", "+") else text
    if rest == "0":
        return 0
    if not rest:
        raise EvalError(DURATION_PARSE_ERROR)
    total, pos = 0, 0
    while pos < len(rest):
        match = _DURATION_PART.match(rest, pos)
        assert match is not None  # every group may be empty
        whole, fraction, unit = match.groups()
        if not whole and not fraction or unit not in _UNITS:
            raise EvalError(DURATION_PARSE_ERROR)
        # Go sums in a uint64 and checks for > 2**63 only after each part, so it can wrap.
        total = (total + _duration_part(whole, fraction or "", _UNITS[unit])) & _UINT64_MASK
        if total > _TWO_63:
            raise EvalError(DURATION_PARSE_ERROR)
        pos = match.end()
    if text[0] == "-":
        return _wrap_int64(-total)
    if total > INT64_MAX:
        raise EvalError(DURATION_PARSE_ERROR)
    return total


def _duration_part(whole: str, fraction: str, unit: int) -> int:
    significant = whole.lstrip("0")
    if len(significant) > 19:  # int() of a huge digit string would be slow; Go fails it anyway
        raise EvalError(DURATION_PARSE_ERROR)
    value = int(significant) if significant else 0
    if value > _TWO_63 // unit:
        raise EvalError(DURATION_PARSE_ERROR)
    value *= unit
    digits, scale = _leading_fraction(fraction)
    if digits:
        value += int(float(digits) * (float(unit) / scale))
        if value > _TWO_63:
            raise EvalError(DURATION_PARSE_ERROR)
    return value


def _leading_fraction(fraction: str) -> tuple[int, float]:
    """Go keeps fraction digits only while they fit in int64, scaling a float by 10 each time."""
    digits, scale = 0, 1.0
    for ch in fraction:
        if digits > INT64_MAX // 10:
            break
        candidate = digits * 10 + ord(ch) - 48
        if candidate > _TWO_63:
            break
        digits, scale = candidate, scale * 10
    return digits, scale


def _format_go_float(value: float) -> str:
    """strconv.FormatFloat(value, 'f', -1, 64): shortest round-trip digits, never an exponent."""
    text = repr(value)
    if "e" in text:
        from decimal import Decimal

        text = format(Decimal(text), "f")
    return text[:-2] if text.endswith(".0") else text


# --- time zones ---------------------------------------------------------------------------------


def local_seconds(ts: Timestamp, tz: str) -> int:
    """Seconds since 1970-01-01T00:00:00 on the wall clock of `tz` (cel-go's `inTimeZone`)."""
    seconds = ts.nanos // NANOS_PER_SECOND
    return seconds + zone_offset(tz, seconds)


def zone_offset(tz: str, unix_seconds: int) -> int:
    """UTC offset in seconds of the zone argument of getHours(tz) and friends, at an instant.

    With a ':' the argument is an offset "[+-]H:M" read with Go's `strconv.Atoi` (so "02:00"
    and "+5:3" work and the minutes are not range-checked); otherwise it is an IANA name as
    Go's `time.LoadLocation` takes it. Errors carry Go's messages.
    """
    zone = _resolve_zone(tz)
    if isinstance(zone, int):
        return zone
    # datetime stops at years 1 and 9999; offsets two days inside the range are the same.
    clamped = min(max(unix_seconds, _MIN_ZONE_LOOKUP), _MAX_ZONE_LOOKUP)
    offset = datetime.fromtimestamp(clamped, zone).utcoffset()
    return 0 if offset is None else offset.days * SECONDS_PER_DAY + offset.seconds


_MIN_ZONE_LOOKUP = MIN_UNIX_SECONDS + 2 * SECONDS_PER_DAY
_MAX_ZONE_LOOKUP = MAX_UNIX_SECONDS - 2 * SECONDS_PER_DAY


@functools.lru_cache(maxsize=256)
def _resolve_zone(tz: str) -> int | ZoneInfo:
    """A fixed offset in seconds, or the IANA zone; cached because rules repeat the same zones."""
    colon = tz.find(":")
    if colon >= 0:
        return _fixed_offset(tz, colon)
    if tz in ("", "UTC", "Local"):  # the API server runs with Local = UTC
        return 0
    if ".." in tz or tz[0] in "/\\":
        raise EvalError("time: invalid location name")
    return _load_zone(tz)


def _fixed_offset(tz: str, colon: int) -> int:
    hours, minutes = _go_atoi(tz[:colon]), _go_atoi(tz[colon + 1 :])
    offset_minutes = _wrap_int64(hours * 60 - minutes if tz[0] == "-" else hours * 60 + minutes)
    # (time.Duration(offset) * time.Minute).Seconds(), truncated to int, as cel-go computes it.
    return int(go_units(_wrap_int64(offset_minutes * 60 * NANOS_PER_SECOND), NANOS_PER_SECOND))


def _load_zone(name: str) -> ZoneInfo:
    from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

    # Go opens "<zoneinfo dir>/<name>", so "a/./b" and "a//b" name real files; ZoneInfo wants
    # normalized keys.
    key = name if name.endswith("/") else posixpath.normpath(name)
    try:
        return ZoneInfo(key)
    except IsADirectoryError:
        raise EvalError("is a directory") from None
    except ValueError as exc:
        if "TZif" in str(exc):
            raise EvalError("malformed time zone information") from None
        raise EvalError(f"unknown time zone {name}") from None
    except (ZoneInfoNotFoundError, OSError):
        raise EvalError(f"unknown time zone {name}") from None


def _go_atoi(text: str) -> int:
    """strconv.Atoi: an optional sign and ASCII digits within int64, or Go's error text."""
    digits = text[1:] if text[:1] in ("+", "-") else text
    if not digits:
        raise _atoi_error(text, "invalid syntax")
    value = 0
    for ch in digits:
        if not "0" <= ch <= "9":
            raise _atoi_error(text, "invalid syntax")
        value = value * 10 + ord(ch) - 48
        if value > _UINT64_MASK:  # ParseUint stops at the first overflowing digit
            raise _atoi_error(text, "value out of range")
    if text[0] == "-":
        if value > _TWO_63:
            raise _atoi_error(text, "value out of range")
        return -value
    if value > INT64_MAX:
        raise _atoi_error(text, "value out of range")
    return value


def _atoi_error(text: str, reason: str) -> EvalError:
    return EvalError(f"strconv.Atoi: parsing {go_quote(text)}: {reason}")


_GO_ESCAPES = {"\a": "\\a", "\b": "\\b", "\f": "\\f", "\n": "\\n", "\r": "\\r", "\t": "\\t", "\v": "\\v"}


def go_quote(text: str) -> str:
    """Go's strconv.Quote: a double-quoted Go string literal, printable characters kept."""
    out = ['"']
    for ch in text:
        if ch in ('"', "\\"):
            out.append("\\" + ch)
        elif ch.isprintable():
            out.append(ch)
        elif ch in _GO_ESCAPES:
            out.append(_GO_ESCAPES[ch])
        elif ord(ch) < 0x20 or ord(ch) == 0x7F:
            out.append(f"\\x{ord(ch):02x}")
        elif ord(ch) < 0x10000:
            out.append(f"\\u{ord(ch):04x}")
        else:
            out.append(f"\\U{ord(ch):08x}")
    out.append('"')
    return "".join(out)
