"""Kubernetes' semver library (`kubernetes.Semver`): versions parsed and ordered by blang/semver/v4's rules."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar

from kcel.checker.types import BOOL, INT, STRING, CelType, opaque
from kcel.errors import EvalError
from kcel.eval.dispatch import register_class
from kcel.eval.runtime import register_type_name
from kcel.libs import Library, Overload, size_cost, size_estimate, unit_cost, unit_estimate
from kcel.temporal import go_quote
from kcel.values import UINT64_MAX, decimal_int

__all__ = [
    "LIBRARY", "NORMALIZE_SINCE", "SEMVER_TYPE", "PreRelease", "Semver", "SemverError", "library",
    "normalize_and_parse", "parse",
]  # fmt: skip

SEMVER_TYPE = opaque("kubernetes.Semver")
NORMALIZE_SINCE = 1
"""The library version that adds `semver(string, bool)` and `isSemver(string, bool)`."""

_NUMBERS = frozenset("0123456789")
_ALPHANUMERIC = _NUMBERS | frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ-")

_string_traversal_cost = size_cost(0.1)
_string_traversal_estimate = size_estimate(0.1)
_unit_cost = unit_cost
_unit_estimate = unit_estimate


# -- values ------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class PreRelease:
    """One dot-separated prerelease identifier: numeric ones order by value and before any text."""

    text: str
    number: int
    is_number: bool

    def compare(self, other: PreRelease) -> int:
        if self.is_number != other.is_number:
            return -1 if self.is_number else 1
        if self.is_number:
            return (self.number > other.number) - (self.number < other.number)
        return (self.text > other.text) - (self.text < other.text)

    def __str__(self) -> str:
        return str(self.number) if self.is_number else self.text


@dataclass(frozen=True, slots=True, eq=False, repr=False)
class Semver:
    """A blang `semver.Version`: numbers are uint64, build metadata plays no part in comparison.

    `==` is Kubernetes' `Semver.Equal` (blang `EQ`), so 1.0.0+a equals 1.0.0+b. There is no
    `<`: CEL orders versions only through `isLessThan`, `isGreaterThan` and `compareTo`.
    """

    major: int
    minor: int
    patch: int
    pre: tuple[PreRelease, ...] = ()
    build: tuple[str, ...] = ()
    cel_type_name: ClassVar[str] = "kubernetes.Semver"

    def compare(self, other: Semver) -> int:
        """blang's Version.Compare: -1, 0 or 1."""
        mine, theirs = (self.major, self.minor, self.patch), (other.major, other.minor, other.patch)
        if mine != theirs:
            return 1 if mine > theirs else -1
        if not self.pre or not other.pre:
            return (not self.pre) - (not other.pre)  # a release outranks its prereleases
        for a, b in zip(self.pre, other.pre, strict=False):
            order = a.compare(b)
            if order:
                return order
        return (len(self.pre) > len(other.pre)) - (len(self.pre) < len(other.pre))

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Semver) and self.compare(other) == 0

    def __hash__(self) -> int:
        return hash((self.major, self.minor, self.patch, self.pre))

    def cel_equals(self, other: Any) -> bool:
        """Kubernetes' Semver.Equal with another kind of value is `no such overload`, not false."""
        raise EvalError("no such overload")

    def __str__(self) -> str:
        text = f"{self.major}.{self.minor}.{self.patch}"
        if self.pre:
            text += "-" + ".".join(map(str, self.pre))
        if self.build:
            text += "+" + ".".join(self.build)
        return text

    def __repr__(self) -> str:
        return f"Semver({str(self)!r})"


# -- blang/semver/v4 Parse ---------------------------------------------------------------------


class SemverError(ValueError):
    """A parse failure; `str()` is blang's (or Go strconv's) error text, which CEL reports unchanged."""


def parse(text: str) -> Semver:
    """blang's strict Parse: `MAJOR.MINOR.PATCH[-pre][+build]`, no `v`, no spaces, no leading zeros."""
    if not text:
        raise SemverError("Version string empty")
    parts = text.split(".", 2)
    if len(parts) != 3:
        raise SemverError("No Major.Minor.Patch elements found")
    major = _number(parts[0], "major number", "Major")
    minor = _number(parts[1], "minor number", "Minor")
    rest, build = _cut(parts[2], "+")
    patch_text, pre = _cut(rest, "-")
    patch = _number(patch_text, "patch number", "Patch")
    return Semver(
        major,
        minor,
        patch,
        tuple(_prerelease(p) for p in pre.split(".")) if pre is not None else (),
        tuple(_build(b) for b in build.split(".")) if build is not None else (),
    )


def _cut(text: str, separator: str) -> tuple[str, str | None]:
    """Split at the first separator; None when there is none (an empty tail is still a tail)."""
    head, found, tail = text.partition(separator)
    return head, (tail if found else None)


def _number(text: str, what: str, name: str) -> int:
    if not _only(text, _NUMBERS):
        raise SemverError(f"Invalid character(s) found in {what} {go_quote(text)}")
    if _leading_zero(text):
        raise SemverError(f"{name} number must not contain leading zeroes {go_quote(text)}")
    return _parse_uint(text)


def _prerelease(text: str) -> PreRelease:
    """blang's NewPRVersion: numeric identifiers without leading zeros, others alphanumerics and `-`."""
    if not text:
        raise SemverError("Prerelease is empty")
    if _only(text, _NUMBERS):
        if _leading_zero(text):
            raise SemverError(f"Numeric PreRelease version must not contain leading zeroes {go_quote(text)}")
        return PreRelease("", _parse_uint(text), True)
    if _only(text, _ALPHANUMERIC):
        return PreRelease(text, 0, False)
    raise SemverError(f"Invalid character(s) found in prerelease {go_quote(text)}")


def _build(text: str) -> str:
    if not text:
        raise SemverError("Build meta data is empty")
    if not _only(text, _ALPHANUMERIC):
        raise SemverError(f"Invalid character(s) found in build meta data {go_quote(text)}")
    return text


def _only(text: str, allowed: frozenset[str]) -> bool:
    return all(ch in allowed for ch in text)


def _leading_zero(digits: str) -> bool:
    return len(digits) > 1 and digits[0] == "0"


def _parse_uint(digits: str) -> int:
    """strconv.ParseUint(s, 10, 64) on text already known to be ASCII digits (or empty)."""
    if not digits:
        raise SemverError('strconv.ParseUint: parsing "": invalid syntax')
    value = decimal_int(digits)
    if value > UINT64_MAX:
        raise SemverError(f"strconv.ParseUint: parsing {go_quote(digits)}: value out of range")
    return value


def normalize_and_parse(text: str) -> Semver:
    """Kubernetes' normalizeAndParse: blang's ParseTolerant without its whitespace trimming.

    Drops one leading `v`, strips leading zeros and pads `1` or `1.2` to three parts, so
    `v01.01` becomes 1.1.0. Part lengths are Go byte lengths: a lone `é` counts as long.
    """
    parts = text.removeprefix("v").split(".", 2)
    parts = [_strip_zeros(p) if len(p.encode("utf-8", "surrogatepass")) > 1 else p for p in parts]
    if len(parts) < 3:
        if any(ch in "+-" for ch in parts[-1]):
            raise SemverError("short version cannot contain PreRelease/Build meta data")
        parts += ["0"] * (3 - len(parts))
    return parse(".".join(parts))


def _strip_zeros(part: str) -> str:
    stripped = part.lstrip("0")
    return stripped if stripped[:1] in _NUMBERS else "0" + stripped


# -- functions ---------------------------------------------------------------------------------


def _to_semver(text: str, normalize: bool) -> Semver:
    try:
        return normalize_and_parse(text) if normalize else parse(text)
    except SemverError as err:
        raise EvalError(str(err)) from None


def string_to_semver(text: str) -> Semver:
    return _to_semver(text, False)


def string_bool_to_semver(text: str, normalize: bool) -> Semver:
    return _to_semver(text, normalize)


def is_semver_string(text: str) -> bool:
    return is_semver_string_bool(text, False)


def is_semver_string_bool(text: str, normalize: bool) -> bool:
    try:
        _to_semver(text, normalize)
    except EvalError:
        return False
    return True


def _int64(value: int) -> int:
    """Go's int64(uint64): versions above 2^63-1 wrap to negative numbers, as in Kubernetes."""
    return value - (1 << 64) if value >= 1 << 63 else value


def semver_major(version: Semver) -> int:
    return _int64(version.major)


def semver_minor(version: Semver) -> int:
    return _int64(version.minor)


def semver_patch(version: Semver) -> int:
    return _int64(version.patch)


def semver_is_greater_than(version: Semver, other: Semver) -> bool:
    return version.compare(other) == 1


def semver_is_less_than(version: Semver, other: Semver) -> bool:
    return version.compare(other) == -1


def semver_compare_to(version: Semver, other: Semver) -> int:
    return version.compare(other)


# -- costs (k8s-cel-cost.md §2.4 and §3.3) -----------------------------------------------------


# -- registration and the table ----------------------------------------------------------------


def _register_types() -> None:
    """Runtime dispatch and type() must know the class."""
    register_class(SEMVER_TYPE.name, Semver)
    register_type_name(Semver, SEMVER_TYPE.name)


_register_types()


def _parser(oid: str, function: str, args: tuple[CelType, ...], result: CelType, impl: Any, doc: str) -> Overload:
    """A global function that parses its string argument: it costs a tenth of the string's length."""
    return Overload(
        oid, function, args, result, impl, cost=_string_traversal_cost, doc=doc, estimate=_string_traversal_estimate
    )


def _member(oid: str, function: str, args: tuple[CelType, ...], result: CelType, impl: Any, doc: str) -> Overload:
    """An accessor or comparison on parsed versions: constant cost 1."""
    return Overload(oid, function, args, result, impl, member=True, cost=_unit_cost, doc=doc, estimate=_unit_estimate)


_S = SEMVER_TYPE

# (library version that introduced it, overload)
_V0, _V1 = 0, NORMALIZE_SINCE

# (library version that introduced it, overload)
TABLE: tuple[tuple[int, Overload], ...] = (
    (_V0, _parser("string_to_semver", "semver", (STRING,), _S, string_to_semver, "semver('1.0.0')")),
    (_V1, _parser("string_bool_to_semver", "semver", (STRING, BOOL), _S, string_bool_to_semver,
                  "semver('v1.0', true) == semver('1.0.0')")),
    (_V0, _parser("is_semver_string", "isSemver", (STRING,), BOOL, is_semver_string, "isSemver('1.0.0')")),
    (_V1, _parser("is_semver_string_bool", "isSemver", (STRING, BOOL), BOOL, is_semver_string_bool,
                  "isSemver('v1.0', true)")),
    (_V0, _member("semver_is_greater_than", "isGreaterThan", (_S, _S), BOOL, semver_is_greater_than,
                  "semver('1.1.0').isGreaterThan(semver('1.0.0'))")),
    (_V0, _member("semver_is_less_than", "isLessThan", (_S, _S), BOOL, semver_is_less_than,
                  "semver('1.0.0').isLessThan(semver('1.1.0'))")),
    (_V0, _member("semver_compare_to", "compareTo", (_S, _S), INT, semver_compare_to,
                  "semver('1.2.3').compareTo(semver('2.0.0')) == -1")),
    (_V0, _member("semver_major", "major", (_S,), INT, semver_major, "semver('1.2.3').major() == 1")),
    (_V0, _member("semver_minor", "minor", (_S,), INT, semver_minor, "semver('1.2.3').minor() == 2")),
    (_V0, _member("semver_patch", "patch", (_S,), INT, semver_patch, "semver('1.2.3').patch() == 3")),
)  # fmt: skip


def library(version: int = 1) -> Library:
    """The library as `library.SemverLib(library.SemverVersion(version))` declares it (Kubernetes uses 1).

    >>> [o.id for o in library(0).overloads if o.function == "semver"]
    ['string_to_semver']
    """
    if version < 0:
        raise ValueError(f"semver library version must not be negative, got {version}")
    overloads = tuple(overload for since, overload in TABLE if since <= version)
    return Library("kubernetes.Semver", overloads=overloads, types=(SEMVER_TYPE,))


LIBRARY = library(1)
