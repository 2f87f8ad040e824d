"""One row per overload id of every library: its runtime cost and its static estimate, from upstream's formulas.

Costs are keyed by overload id, and the global and receiver forms of a function are different ids. What a
call costs is decided, in this order (cel-go v0.29.2, the version k8s.io/apiserver pins):

1. a library's own tracker/estimator for the overload id (cel-go ext/lists.go version 3, ext/sets.go);
2. Kubernetes' `CallCost`/`EstimateCallCost` (apiserver pkg/cel/library/cost.go), by *function name*, for every
   function of the Kubernetes environment (so it also prices the strings extension's `indexOf`, `split`, ...);
3. cel-go's switch on the overload id (interpreter/runtimecost.go `costCall`, checker/cost.go `functionCost`);
4. otherwise 1.

Each row is `(library, overload id, expression, runtime cost, (estimated min, max))` for the whole expression,
written as "variable reads + the call's cost" with the call's cost from the upstream formula. Variables (the
`VALUES` below) cost 1 per read, at run time and in the estimate; literals cost nothing. Estimates use the
argument sizes in `SIZES`; a size not listed is unknown (0 to 2^64-1). The rows in `DIRECT_ROWS` call an
overload's cost functions directly, where no expression reaches it alone (`@sortByAssociatedKeys` only comes
from the `sortBy` macro).

Libraries are at their newest version; every id of every library must have a row (`test_every_overload_has_a_row`).
"""

from __future__ import annotations

import importlib
import math
import pkgutil
from collections.abc import Mapping
from dataclasses import dataclass
from functools import cache
from typing import Any

import pytest

import kcel
import kcel.libs
from kcel.checker.types import DYN, STRING, CelType, list_of, optional_of
from kcel.env import all_libraries
from kcel.libs import (
    Library,
    SizedCall,
    SizeEstimate,
    encoders,
    k8s_authz,
    k8s_format,
    k8s_ip,
    k8s_jsonpatch,
    k8s_lists,
    k8s_mutation,
    k8s_quantity,
    k8s_regex,
    k8s_semver,
    k8s_url,
    lists,
    network,
    operators,
    optional,
    sets,
    standard,
    strings,
    timestamps,
)
from kcel.libs import math as cel_math
from kcel.temporal import Duration, Timestamp
from kcel.values import NONE, Optional, Uint

MAX = 2**64 - 1
UNKNOWN_TENTH = math.ceil(float(MAX) * 0.1)  # cel-go multiplyByCostFactor(2^64-1, 0.1): an unknown size's tenth
CHECK = 350_000  # Kubernetes: an authorization check


def tenth(n: int) -> int:
    """Go's `uint64(math.Ceil(float64(n) * 0.1))` (StringTraversalCostFactor); note 30 * 0.1 rounds up to 4."""
    return math.ceil(n * 0.1)


def quarter(n: int) -> int:
    """Go's `uint64(math.Ceil(float64(n) * 0.25))` (RegexStringLengthCostFactor)."""
    return math.ceil(n * 0.25)


def floor_tenth(n: int) -> int:
    """Kubernetes' traversalCost of a string or bytes: `uint64(float64(len) * 0.1)`, truncated."""
    return int(n * 0.1)


def selector(length: int) -> int:
    """Kubernetes' selectorCostEstimate: 10 + ceil(L * 0.1) + ceil(ceil(L * 0.5) * 50)."""
    return 10 + tenth(length) + math.ceil(math.ceil(length * 0.5) * 50.0)


def allocating(factor: float, size: int) -> int:
    """cel-go ext trackAllocatingListCall: floor(size * factor) + 1 (the call) + 10 (the new list)."""
    return int(float(size) * factor) + 1 + 10


def saturating(n: int) -> int:
    return min(n, MAX)


# -- the libraries, at their newest versions ---------------------------------------------------------

LIBRARIES: dict[str, Library] = {
    "encoders": encoders.LIBRARY,
    "k8s_authz": k8s_authz.library(1),
    "k8s_format": k8s_format.LIBRARY,
    "k8s_ip": k8s_ip.LIBRARY,
    "k8s_jsonpatch": k8s_jsonpatch.LIBRARY,
    "k8s_mutation": k8s_mutation.LIBRARY,  # types only, no overloads
    "k8s_lists": k8s_lists.library(1),
    "k8s_quantity": k8s_quantity.LIBRARY,
    "k8s_regex": k8s_regex.LIBRARY,
    "k8s_semver": k8s_semver.library(1),
    "k8s_url": k8s_url.LIBRARY,
    "lists": lists.library(3),
    "math": cel_math.LIBRARY,
    "network": network.LIBRARY,
    "operators": operators.LIBRARY,
    "optional": optional.LIBRARY,
    "sets": sets.LIBRARY,
    "standard": standard.LIBRARY,
    "strings": strings.library(strings.MAX_VERSION),
    "timestamps": timestamps.LIBRARY,
}

# -- variables: types, values and sizes -----------------------------------------------------------------

_AUTHORIZER = k8s_authz.authorizer_value(k8s_authz.AlwaysAllow())
_GROUP = k8s_authz.GroupCheck(_AUTHORIZER, "apps")
_OPTIONAL_STRING = optional_of(STRING)

VARIABLES: dict[str, str | CelType] = {
    "s": "string", "t": "string", "re": "string", "ns": "string", "bs": "string", "b64": "string", "tss": "string",
    "dus": "string", "tz": "string", "fs": "string", "cs": "string", "ips": "string", "qs": "string", "svs": "string",
    "us": "string", "fname": "string", "fsel": "string",
    "b": "bytes", "c": "bytes", "i": "int", "j": "int", "u": "uint", "v": "uint", "d": "double", "e": "double",
    "f": "bool", "g": "bool", "ts": "timestamp", "ts2": "timestamp", "du": "duration", "du2": "duration",
    "l": "list(int)", "k": "list(int)", "lu": "list(uint)", "ldbl": "list(double)", "lbool": "list(bool)",
    "ldu": "list(duration)", "lts": "list(timestamp)", "ls": "list(string)", "lb": "list(bytes)",
    "ll": "list(list(int))", "ld": "list(dyn)", "lo": list_of(optional_of(DYN)), "m": "map(string, int)",
    "o": _OPTIONAL_STRING, "p": _OPTIONAL_STRING, "xs": "dyn", "xs2": "dyn", "xl": "dyn", "xip": "dyn",
    "addr": network.IP_TYPE, "addr2": network.IP_TYPE, "net": network.CIDR_TYPE, "net2": network.CIDR_TYPE,
    "net0": network.CIDR_TYPE, "q": k8s_quantity.QUANTITY_TYPE, "q2": k8s_quantity.QUANTITY_TYPE,
    "sv": k8s_semver.SEMVER_TYPE, "sv2": k8s_semver.SEMVER_TYPE, "ur": k8s_url.URL_TYPE, "ur2": k8s_url.URL_TYPE,
    "fmt": k8s_format.FORMAT_TYPE, "fmt2": k8s_format.FORMAT_TYPE, "az": k8s_authz.AUTHORIZER_TYPE,
    "pc": k8s_authz.PATH_CHECK_TYPE, "gc": k8s_authz.GROUP_CHECK_TYPE, "rc": k8s_authz.RESOURCE_CHECK_TYPE,
    "dec": k8s_authz.DECISION_TYPE,
}  # fmt: skip

S = "abcdefghijklmnopqrstuvwx\U0001f451"  # 25 code points, 28 UTF-8 bytes
VALUES: dict[str, Any] = {
    "s": S, "t": "abcdefghijkl", "re": "[a-z]+", "ns": "123", "bs": "true", "b64": "aGVsbG8=",
    "tss": "2024-01-02T03:04:05Z", "dus": "90s", "tz": "UTC", "fs": "%s is %d", "cs": "192.168.0.0/16",
    "ips": "2001:db8::1", "qs": "1.5Gi", "svs": "1.2.3", "us": "https://example.com/path", "fname": "dns1123Label",
    "fsel": "spec.nodeName=mynode",
    "b": b"abcdefghijklmnopqrstuvwxy", "c": b"abc", "i": 3, "j": 2, "u": Uint(3), "v": Uint(2), "d": 2.5, "e": 1.5,
    "f": True, "g": False, "ts": Timestamp(2_000_000_000), "ts2": Timestamp(1_000_000_000),
    "du": Duration(2_000_000_000), "du2": Duration(1_000_000_000),
    "l": [3, 1, 2, 5, 4], "k": [1, 2], "lu": [Uint(2), Uint(1)], "ldbl": [2.0, 1.0], "lbool": [True, False],
    "ldu": [Duration(2), Duration(1)], "lts": [Timestamp(2), Timestamp(1)], "ls": ["bb", "a", "c" * 15],
    "lb": [b"bb", b"a"], "ll": [[1, 2], [3]], "ld": ["a", 1], "lo": [Optional(1), NONE], "m": {"a": 1, "b": 2},
    "o": Optional("abcdefghijklmnopqrstuvwxy"), "p": Optional("abcdefghijklmnopqrstuvwxy"),
    "xs": "abcdefghijklmnopqrstuvwxy", "xs2": "abcdefghijklmnopqrstuvwxy", "xl": [3, 1, 2], "xip": "2001:db8::1",
    "addr": network.parse_ip("2001:db8::1"), "addr2": network.parse_ip("2001:db8::2"),
    "net": network.parse_cidr("2001:db8::/64"), "net2": network.parse_cidr("2001:db8::/96"),
    "net0": network.parse_cidr("0.0.0.0/0"),
    "q": k8s_quantity.string_to_quantity("1Gi"), "q2": k8s_quantity.string_to_quantity("500Mi"),
    "sv": k8s_semver.string_to_semver("1.2.3"), "sv2": k8s_semver.string_to_semver("2.0.0"),
    "ur": k8s_url.string_to_url("https://example.com/path"), "ur2": k8s_url.string_to_url("https://example.com/"),
    "fmt": k8s_format.FORMATS["dns1123Label"], "fmt2": k8s_format.FORMATS["dns1123Subdomain"],
    "az": _AUTHORIZER, "pc": k8s_authz.PathCheck(_AUTHORIZER, "/healthz"), "gc": _GROUP,
    "rc": k8s_authz.ResourceCheck(_GROUP, "deployments"),
    "dec": k8s_authz.DecisionValue(k8s_authz.Decision(k8s_authz.Verdict.ALLOW)),
}  # fmt: skip

SIZES: dict[tuple[str, ...], tuple[int, int]] = {
    ("s",): (5, 40), ("t",): (2, 25), ("re",): (4, 12), ("b",): (4, 30), ("c",): (2, 10), ("fs",): (3, 25),
    ("cs",): (9, 43), ("ips",): (7, 39), ("qs",): (1, 20), ("svs",): (1, 20), ("us",): (10, 100), ("fsel",): (4, 30),
    ("ur2",): (0, 30), ("l",): (3, 8), ("k",): (2, 5), ("lu",): (2, 5), ("ldbl",): (2, 5), ("lbool",): (2, 5),
    ("ldu",): (2, 5), ("lts",): (2, 5), ("ls",): (2, 6), ("ls", "@items"): (1, 10), ("lb",): (2, 6),
    ("lb", "@items"): (1, 10), ("ll",): (1, 4), ("m",): (1, 3),
}  # fmt: skip


@dataclass(frozen=True)
class _Sizes:
    """Sizes by variable path (`("ls", "@items")` for the elements of `ls`), as a schema would give them."""

    sizes: Mapping[tuple[str, ...], tuple[int, int]]

    def estimate_size(self, path: tuple[str, ...], type: CelType) -> SizeEstimate | None:
        found = self.sizes.get(path)
        return SizeEstimate(*found) if found is not None else None


# -- the rows ----------------------------------------------------------------------------------------------

Row = tuple[str, str, str, int, tuple[int, int]]


def _plain(library: str, rows: list[tuple[str, str, int]]) -> list[Row]:
    """Rows of calls that cost cel-go's default of 1: (overload id, expression, variable reads)."""
    return [(library, oid, expr, reads + 1, (reads + 1, reads + 1)) for oid, expr, reads in rows]


# Kubernetes' lists library receivers: (type name, variable, traversalCost of its value, estimate of the call:
# the list's size x (1 + a tenth of the element's size for strings and bytes))
_K8S_LISTS = (
    ("int", "l", 5, (3, 8)), ("uint", "lu", 2, (2, 5)), ("double", "ldbl", 2, (2, 5)), ("bool", "lbool", 2, (2, 5)),
    ("duration", "ldu", 2, (2, 5)), ("timestamp", "lts", 2, (2, 5)),
    ("string", "ls", floor_tenth(2) + floor_tenth(1) + floor_tenth(15), (2 * (1 + tenth(1)), 6 * (1 + tenth(10)))),
    ("bytes", "lb", floor_tenth(2) + floor_tenth(1), (2 * (1 + tenth(1)), 6 * (1 + tenth(10)))),
)  # fmt: skip


def _k8s_lists_rows() -> list[Row]:
    rows: list[Row] = []
    for name, var, traversal, (low, high) in _K8S_LISTS:
        for oid, method in ((f"list_{name}_is_sorted_bool", "isSorted"), (f"list_{name}_max_{name}", "max"),
                            (f"list_{name}_min_{name}", "min"), (f"list_{name}_sum_{name}", "sum")):  # fmt: skip
            if method != "sum" or name in ("int", "uint", "double", "duration"):
                rows.append(("k8s_lists", oid, f"{var}.{method}()", 1 + traversal, (1 + low, 1 + high)))
    return rows


# fmt: off
ROWS: list[Row] = [
    # -- standard (cel-go common/stdlib) ----------------------------------------------------------------
    *_plain("standard", [
        ("size_string", "size(s)", 1), ("size_bytes", "size(b)", 1), ("size_list", "size(l)", 1),
        ("size_map", "size(m)", 1), ("string_size", "s.size()", 1), ("bytes_size", "b.size()", 1),
        ("list_size", "l.size()", 1), ("map_size", "m.size()", 1),
        ("int64_to_int64", "int(i)", 1), ("uint64_to_int64", "int(u)", 1), ("double_to_int64", "int(d)", 1),
        ("string_to_int64", "int(ns)", 1), ("uint64_to_uint64", "uint(u)", 1), ("int64_to_uint64", "uint(i)", 1),
        ("double_to_uint64", "uint(d)", 1), ("string_to_uint64", "uint(ns)", 1), ("double_to_double", "double(d)", 1),
        ("int64_to_double", "double(i)", 1), ("uint64_to_double", "double(u)", 1),
        ("string_to_double", "double(ns)", 1), ("string_to_string", "string(s)", 1),
        ("bool_to_string", "string(f)", 1), ("int64_to_string", "string(i)", 1), ("uint64_to_string", "string(u)", 1),
        ("double_to_string", "string(d)", 1), ("bytes_to_bytes", "bytes(b)", 1), ("bool_to_bool", "bool(f)", 1),
        ("string_to_bool", "bool(bs)", 1), ("to_dyn", "dyn(i)", 1), ("type", "type(i)", 1),
    ]),
    # cel-go ContainsString: ceil(size(s) * 0.1) * ceil(size(sub) * 0.1), both estimate and runtime
    ("standard", "contains_string", "s.contains(t)", 2 + tenth(25) * tenth(12),
     (2 + tenth(5) * tenth(2), 2 + tenth(40) * tenth(25))),
    # cel-go v0.29 StartsWith/EndsWith: the prefix's size (args[1] at run time; the argument, not the target,
    # in the estimate); the receiver's 25 code points would give 3
    ("standard", "starts_with_string", "s.startsWith(t)", 2 + tenth(12), (2 + tenth(2), 2 + tenth(25))),
    ("standard", "ends_with_string", "s.endsWith(t)", 2 + tenth(12), (2 + tenth(2), 2 + tenth(25))),
    # cel-go v0.29 Matches and MatchesString (the global form was 1 before v0.29):
    # ceil((1 + size(s)) * 0.1) * ceil(size(re) * 0.25)
    ("standard", "matches", "matches(s, re)", 2 + tenth(26) * quarter(6),
     (2 + tenth(6) * quarter(4), 2 + tenth(41) * quarter(12))),
    ("standard", "matches_string", "s.matches(re)", 2 + tenth(26) * quarter(6),
     (2 + tenth(6) * quarter(4), 2 + tenth(41) * quarter(12))),
    # cel-go StringToBytes / BytesToString: a tenth of the argument
    ("standard", "string_to_bytes", "bytes(s)", 1 + tenth(25), (1 + tenth(5), 1 + tenth(40))),
    ("standard", "bytes_to_string", "string(b)", 1 + tenth(25), (1 + tenth(4), 1 + tenth(30))),
    # -- timestamps (cel-go common/stdlib): all 1 ---------------------------------------------------------
    *_plain("timestamps", [
        ("timestamp_to_timestamp", "timestamp(ts)", 1), ("int64_to_timestamp", "timestamp(i)", 1),
        ("string_to_timestamp", "timestamp(tss)", 1), ("duration_to_duration", "duration(du)", 1),
        ("string_to_duration", "duration(dus)", 1), ("timestamp_to_string", "string(ts)", 1),
        ("duration_to_string", "string(du)", 1), ("timestamp_to_int64", "int(ts)", 1),
        ("duration_to_int64", "int(du)", 1), ("add_timestamp_duration", "ts + du", 2),
        ("add_duration_timestamp", "du + ts", 2), ("add_duration_duration", "du + du2", 2),
        ("subtract_timestamp_duration", "ts - du", 2), ("subtract_timestamp_timestamp", "ts - ts2", 2),
        ("subtract_duration_duration", "du - du2", 2), ("less_timestamp", "ts < ts2", 2),
        ("less_equals_timestamp", "ts <= ts2", 2), ("greater_timestamp", "ts > ts2", 2),
        ("greater_equals_timestamp", "ts >= ts2", 2), ("less_duration", "du < du2", 2),
        ("less_equals_duration", "du <= du2", 2), ("greater_duration", "du > du2", 2),
        ("greater_equals_duration", "du >= du2", 2),
        ("timestamp_to_year", "ts.getFullYear()", 1), ("timestamp_to_year_with_tz", "ts.getFullYear(tz)", 2),
        ("timestamp_to_month", "ts.getMonth()", 1), ("timestamp_to_month_with_tz", "ts.getMonth(tz)", 2),
        ("timestamp_to_day_of_year", "ts.getDayOfYear()", 1),
        ("timestamp_to_day_of_year_with_tz", "ts.getDayOfYear(tz)", 2),
        ("timestamp_to_day_of_month", "ts.getDayOfMonth()", 1),
        ("timestamp_to_day_of_month_with_tz", "ts.getDayOfMonth(tz)", 2),
        ("timestamp_to_day_of_month_1_based", "ts.getDate()", 1),
        ("timestamp_to_day_of_month_1_based_with_tz", "ts.getDate(tz)", 2),
        ("timestamp_to_day_of_week", "ts.getDayOfWeek()", 1),
        ("timestamp_to_day_of_week_with_tz", "ts.getDayOfWeek(tz)", 2),
        ("timestamp_to_hours", "ts.getHours()", 1), ("timestamp_to_hours_with_tz", "ts.getHours(tz)", 2),
        ("timestamp_to_minutes", "ts.getMinutes()", 1), ("timestamp_to_minutes_with_tz", "ts.getMinutes(tz)", 2),
        ("timestamp_to_seconds", "ts.getSeconds()", 1), ("timestamp_to_seconds_tz", "ts.getSeconds(tz)", 2),
        ("timestamp_to_milliseconds", "ts.getMilliseconds()", 1),
        ("timestamp_to_milliseconds_with_tz", "ts.getMilliseconds(tz)", 2),
        ("duration_to_hours", "du.getHours()", 1), ("duration_to_minutes", "du.getMinutes()", 1),
        ("duration_to_seconds", "du.getSeconds()", 1), ("duration_to_milliseconds", "du.getMilliseconds()", 1),
    ]),
    # -- operators (cel-go common/stdlib) -----------------------------------------------------------------
    *_plain("operators", [
        ("add_int64", "i + j", 2), ("add_uint64", "u + v", 2), ("add_double", "d + e", 2),
        ("subtract_int64", "i - j", 2), ("subtract_uint64", "u - v", 2), ("subtract_double", "d - e", 2),
        ("multiply_int64", "i * j", 2), ("multiply_uint64", "u * v", 2), ("multiply_double", "d * e", 2),
        ("divide_int64", "i / j", 2), ("divide_uint64", "u / v", 2), ("divide_double", "d / e", 2),
        ("modulo_int64", "i % j", 2), ("modulo_uint64", "u % v", 2), ("negate_int64", "-i", 1),
        ("negate_double", "-d", 1), ("logical_not", "!f", 1), ("in_map", "s in m", 2),
        # list concatenation is O(1) (cel-go tracks it only for the result's size)
        ("add_list", "l + k", 2),
        # ordering of numbers and bools, also across numeric types (CrossTypeNumericComparisons): 1
        *((f"{op}_{suffix}", f"{a} {symbol} {b}", 2)
          for op, symbol in (("less", "<"), ("less_equals", "<="), ("greater", ">"), ("greater_equals", ">="))
          for suffix, a, b in (("int64", "i", "j"), ("uint64", "u", "v"), ("double", "d", "e"), ("bool", "f", "g"),
                               ("int64_double", "i", "d"), ("int64_uint64", "i", "u"), ("uint64_double", "u", "d"),
                               ("uint64_int64", "u", "i"), ("double_int64", "d", "i"), ("double_uint64", "d", "u"))),
    ]),
    # cel-go AddString/AddBytes: a tenth of both operands' sizes; the estimate adds the size ranges
    ("operators", "add_string", "s + t", 2 + tenth(25 + 12), (2 + tenth(5 + 2), 2 + tenth(40 + 25))),
    ("operators", "add_bytes", "b + c", 2 + tenth(25 + 3), (2 + tenth(4 + 2), 2 + tenth(30 + 10))),
    # cel-go Less/Greater(Equals)String and Bytes: a tenth of the smaller size (estimate: {1, smaller max})
    *(("operators", f"{op}_string", f"s {symbol} t", 2 + tenth(12), (2 + tenth(1), 2 + tenth(25)))
      for op, symbol in (("less", "<"), ("less_equals", "<="), ("greater", ">"), ("greater_equals", ">="))),
    *(("operators", f"{op}_bytes", f"b {symbol} c", 2 + tenth(3), (2 + tenth(1), 2 + tenth(10)))
      for op, symbol in (("less", "<"), ("less_equals", "<="), ("greater", ">"), ("greater_equals", ">="))),
    # cel-go Equals/NotEquals: a tenth of the smaller size; scalars have size 1
    ("operators", "equals", "i == j", 2 + tenth(1), (2 + tenth(1), 2 + tenth(1))),
    ("operators", "equals", "s == t", 2 + tenth(12), (2 + tenth(1), 2 + tenth(25))),
    ("operators", "equals", "l == k", 2 + tenth(2), (2 + tenth(1), 2 + tenth(5))),
    # ... an optional's size is its value's (interpreter actualSize); the estimate has no size for it
    ("operators", "equals", "o == p", 2 + tenth(25), (2 + 1, 2 + UNKNOWN_TENTH)),
    # ... Kubernetes `_==_`: 1 when the left operand is a Kubernetes value (an IPv6 address's size would give 2),
    # and statically for two Quantities or IPs; two URLs cost the right operand's size, two formats 64 characters
    ("operators", "equals", "q == q2", 2 + 1, (2 + 1, 2 + 1)),
    ("operators", "equals", "addr == addr2", 2 + 1, (2 + 1, 2 + 1)),
    ("operators", "equals", "ur == ur2", 2 + 1, (2 + tenth(1), 2 + tenth(30))),
    ("operators", "equals", "fmt == fmt2", 2 + 1, (2 + tenth(1), 2 + tenth(64))),
    ("operators", "not_equals", "i != j", 2 + tenth(1), (2 + tenth(1), 2 + tenth(1))),
    ("operators", "not_equals", "s != t", 2 + tenth(12), (2 + tenth(1), 2 + tenth(25))),
    # ... Kubernetes' IP and CIDR values have sizes: 16 bytes, or the prefix's whole bytes (0 for /0)
    ("operators", "not_equals", "addr != addr2", 2 + tenth(16), (2 + 1, 2 + UNKNOWN_TENTH)),
    ("operators", "not_equals", "net != net2", 2 + tenth(min(8, 12)), (2 + 1, 2 + UNKNOWN_TENTH)),
    ("operators", "not_equals", "net0 != net0", 2 + tenth(0), (2 + 1, 2 + UNKNOWN_TENTH)),
    # cel-go InList: the list's size
    ("operators", "in_list", "i in l", 2 + 5, (2 + 3, 2 + 8)),
    # `&&`/`||` cost only their operands: at least the left one, at most both
    ("operators", "logical_and", "f && g", 2, (1, 2)),
    ("operators", "logical_or", "g || f", 2, (1, 2)),
    # `?:` costs the condition and one branch (the estimate: the costlier branch)
    ("operators", "conditional", "f ? i + j : j", 1 + (2 + 1), (1 + 1, 1 + 3)),
    # `l[0]`: the list and one qualifier; `m['a']` likewise
    ("operators", "index_list", "l[0]", 1 + 1, (2, 2)),
    ("operators", "index_map", "m['a']", 1 + 1, (2, 2)),
    # all(): 1 (range) + 5 x (@not_strictly_false(@result): 2, @result && z > 0: 3) + 1 (result);
    # estimated 1 + [3, 8] x ([1, 3] + 2) + 1
    ("operators", "not_strictly_false", "l.all(z, z > 0)", 1 + 5 * (2 + 3) + 1, (1 + 3 * 3 + 1, 1 + 8 * 5 + 1)),
    # -- optional (cel-go cel/library.go) ------------------------------------------------------------------
    *_plain("optional", [
        ("optional_of", "optional.of(i)", 1), ("optional_ofNonZeroValue", "optional.ofNonZeroValue(i)", 1),
        ("optional_none", "optional.none()", 0), ("optional_value", "o.value()", 1),
        ("optional_hasValue", "o.hasValue()", 1), ("optional_unwrap", "optional.unwrap(lo)", 1),
        ("optional_unwrapOpt", "lo.unwrapOpt()", 1), ("list_first", "l.first()", 1), ("list_last", "l.last()", 1),
    ]),
    # `or`/`orValue` become short-circuiting steps (decorateOptionalOr) that cost nothing themselves; the
    # estimator still charges the call's 1 and both operands
    ("optional", "optional_or_optional", "o.or(p)", 1, (3, 3)),
    ("optional", "optional_orValue_value", "o.orValue(t)", 1, (3, 3)),
    # -- strings extension (version 4; Kubernetes has 2) ----------------------------------------------------
    *_plain("strings", [("string_char_at_int", "s.charAt(i)", 2), ("string_reverse", "s.reverse()", 1)]),
    # Kubernetes indexOf/lastIndexOf (by name): traversalCost(receiver) = floor(UTF-8 bytes * 0.1);
    # estimate: a tenth of the receiver's size (a string: no element type)
    ("strings", "string_index_of_string", "s.indexOf(t)", 2 + floor_tenth(28), (2 + tenth(5), 2 + tenth(40))),
    ("strings", "string_index_of_string_int", "s.indexOf(t, j)", 3 + floor_tenth(28), (3 + tenth(5), 3 + tenth(40))),
    ("strings", "string_last_index_of_string", "s.lastIndexOf(t)", 2 + floor_tenth(28), (2 + tenth(5), 2 + tenth(40))),
    ("strings", "string_last_index_of_string_int", "s.lastIndexOf(t, i)", 3 + floor_tenth(28),
     (3 + tenth(5), 3 + tenth(40))),
    # Kubernetes lowerAscii/upperAscii/substring/trim: a tenth of the receiver
    ("strings", "string_lower_ascii", "s.lowerAscii()", 1 + tenth(25), (1 + tenth(5), 1 + tenth(40))),
    ("strings", "string_upper_ascii", "s.upperAscii()", 1 + tenth(25), (1 + tenth(5), 1 + tenth(40))),
    ("strings", "string_substring_int", "s.substring(j)", 2 + tenth(25), (2 + tenth(5), 2 + tenth(40))),
    ("strings", "string_substring_int_int", "s.substring(j, i)", 3 + tenth(25), (3 + tenth(5), 3 + tenth(40))),
    ("strings", "string_trim", "s.trim()", 1 + tenth(25), (1 + tenth(5), 1 + tenth(40))),
    # Kubernetes replace/split: ceil(size * 2 * 0.1) of the receiver; estimate: the receiver times 0.2
    ("strings", "string_replace_string_string", "s.replace(t, s)", 3 + math.ceil(25 * 2 * 0.1),
     (3 + math.ceil(5 * 0.2), 3 + math.ceil(40 * 0.2))),
    ("strings", "string_replace_string_string_int", "s.replace(t, s, i)", 4 + math.ceil(25 * 2 * 0.1),
     (4 + math.ceil(5 * 0.2), 4 + math.ceil(40 * 0.2))),
    ("strings", "string_split_string", "s.split(t)", 2 + math.ceil(25 * 2 * 0.1),
     (2 + math.ceil(5 * 0.2), 2 + math.ceil(40 * 0.2))),
    ("strings", "string_split_string_int", "s.split(t, i)", 3 + math.ceil(25 * 2 * 0.1),
     (3 + math.ceil(5 * 0.2), 3 + math.ceil(40 * 0.2))),
    # Kubernetes join: ceil(size(result) * 2 * 0.1); estimate: elements x element size (+ separators), a tenth
    ("strings", "list_join", "ls.join()", 1 + math.ceil(18 * 2 * 0.1), (1 + tenth(2 * 1), 1 + tenth(6 * 10))),
    ("strings", "list_join_string", "ls.join(t)", 2 + math.ceil((18 + 2 * 12) * 2 * 0.1),
     (2 + tenth(2 * 1 + 2 * 1), 2 + tenth(6 * 10 + 25 * 5))),
    # cel-go ExtFormatString: a tenth of the format string (the target); ExtQuoteString: of the argument
    ("strings", "string_format", "fs.format(ld)", 2 + tenth(8), (2 + tenth(3), 2 + tenth(25))),
    ("strings", "strings_quote", "strings.quote(s)", 1 + tenth(25), (1 + tenth(5), 1 + tenth(40))),
    # -- lists extension (version 3: cel-go ext/lists.go trackers and estimators) ------------------------------
    # slice/reverse/range: the result's size + 1 + 10; estimate: the literal bounds (else the list's size)
    ("lists", "list_slice", "l.slice(1, 3)", 1 + allocating(1, 2), (1 + 2 + 11, 1 + 2 + 11)),
    ("lists", "list_slice", "l.slice(j, i)", 3 + allocating(1, 1), (3 + 8 + 11, 3 + 8 + 11)),
    ("lists", "lists_range", "lists.range(4)", allocating(1, 4), (4 + 11, 4 + 11)),
    ("lists", "lists_range", "lists.range(i)", 1 + allocating(1, 3), (MAX, MAX)),
    ("lists", "list_reverse", "l.reverse()", 1 + allocating(1, 5), (1 + 3 + 11, 1 + 8 + 11)),
    # flatten: the input's size times the depth
    ("lists", "list_flatten", "ll.flatten()", 1 + allocating(1, 2), (1 + 1 + 11, 1 + 4 + 11)),
    ("lists", "list_flatten_int", "ll.flatten(2)", 1 + allocating(2, 2), (1 + 2 * 1 + 11, 1 + 2 * 4 + 11)),
    # sort/distinct: n² comparisons, times 2 (2.1 for strings and bytes)
    ("lists", "list_int_sort", "l.sort()", 1 + allocating(2.0, 25), (1 + 9 * 2 + 11, 1 + 64 * 2 + 11)),
    *(("lists", f"list_{name}_sort", f"{var}.sort()", 1 + allocating(2.0, 4), (1 + 4 * 2 + 11, 1 + 25 * 2 + 11))
      for name, var in (("uint", "lu"), ("double", "ldbl"), ("bool", "lbool"), ("google.protobuf.Duration", "ldu"),
                        ("google.protobuf.Timestamp", "lts"))),
    ("lists", "list_string_sort", "ls.sort()", 1 + allocating(2.1, 9),
     (1 + math.ceil(4 * 2.1) + 11, 1 + math.ceil(36 * 2.1) + 11)),
    ("lists", "list_bytes_sort", "lb.sort()", 1 + allocating(2.1, 4),
     (1 + math.ceil(4 * 2.1) + 11, 1 + math.ceil(36 * 2.1) + 11)),
    ("lists", "list_distinct", "l.distinct()", 1 + allocating(2.0, 25), (1 + 9 * 2 + 11, 1 + 64 * 2 + 11)),
    # -- sets extension (cel-go ext/sets.go): 1 + floor(m * n * factor) --------------------------------------
    ("sets", "list_sets_contains_list", "sets.contains(l, k)", 2 + 1 + 5 * 2, (2 + 3 * 2 + 1, 2 + 8 * 5 + 1)),
    ("sets", "list_sets_intersects_list", "sets.intersects(l, k)", 2 + 1 + 5 * 2, (2 + 3 * 2 + 1, 2 + 8 * 5 + 1)),
    ("sets", "list_sets_equivalent_list", "sets.equivalent(l, k)", 2 + 1 + 2 * 5 * 2,
     (2 + 2 * 3 * 2 + 1, 2 + 2 * 8 * 5 + 1)),
    # -- math extension (no cost functions) ------------------------------------------------------------------
    *_plain("math", [
        ("math_@min_double", "math.least(d)", 1), ("math_@min_int", "math.least(i)", 1),
        ("math_@min_uint", "math.least(u)", 1), ("math_@min_double_double", "math.least(d, e)", 2),
        ("math_@min_int_int", "math.least(i, j)", 2), ("math_@min_uint_uint", "math.least(u, v)", 2),
        ("math_@min_int_uint", "math.least(i, u)", 2), ("math_@min_int_double", "math.least(i, d)", 2),
        ("math_@min_double_int", "math.least(d, i)", 2), ("math_@min_double_uint", "math.least(d, u)", 2),
        ("math_@min_uint_int", "math.least(u, i)", 2), ("math_@min_uint_double", "math.least(u, d)", 2),
        ("math_@min_list_double", "math.least(ldbl)", 1), ("math_@min_list_int", "math.least(l)", 1),
        ("math_@min_list_uint", "math.least(lu)", 1),
        ("math_@max_double", "math.greatest(d)", 1), ("math_@max_int", "math.greatest(i)", 1),
        ("math_@max_uint", "math.greatest(u)", 1), ("math_@max_double_double", "math.greatest(d, e)", 2),
        ("math_@max_int_int", "math.greatest(i, j)", 2), ("math_@max_uint_uint", "math.greatest(u, v)", 2),
        ("math_@max_int_uint", "math.greatest(i, u)", 2), ("math_@max_int_double", "math.greatest(i, d)", 2),
        ("math_@max_double_int", "math.greatest(d, i)", 2), ("math_@max_double_uint", "math.greatest(d, u)", 2),
        ("math_@max_uint_int", "math.greatest(u, i)", 2), ("math_@max_uint_double", "math.greatest(u, d)", 2),
        ("math_@max_list_double", "math.greatest(ldbl)", 1), ("math_@max_list_int", "math.greatest(l)", 1),
        ("math_@max_list_uint", "math.greatest(lu)", 1),
        ("math_ceil_double", "math.ceil(d)", 1), ("math_floor_double", "math.floor(d)", 1),
        ("math_round_double", "math.round(d)", 1), ("math_trunc_double", "math.trunc(d)", 1),
        ("math_isInf_double", "math.isInf(d)", 1), ("math_isNaN_double", "math.isNaN(d)", 1),
        ("math_isFinite_double", "math.isFinite(d)", 1), ("math_abs_double", "math.abs(d)", 1),
        ("math_abs_int", "math.abs(i)", 1), ("math_abs_uint", "math.abs(u)", 1),
        ("math_sign_double", "math.sign(d)", 1), ("math_sign_int", "math.sign(i)", 1),
        ("math_sign_uint", "math.sign(u)", 1), ("math_bitAnd_int_int", "math.bitAnd(i, j)", 2),
        ("math_bitAnd_uint_uint", "math.bitAnd(u, v)", 2), ("math_bitOr_int_int", "math.bitOr(i, j)", 2),
        ("math_bitOr_uint_uint", "math.bitOr(u, v)", 2), ("math_bitXor_int_int", "math.bitXor(i, j)", 2),
        ("math_bitXor_uint_uint", "math.bitXor(u, v)", 2), ("math_bitNot_int_int", "math.bitNot(i)", 1),
        ("math_bitNot_uint_uint", "math.bitNot(u)", 1), ("math_bitShiftLeft_int_int", "math.bitShiftLeft(i, j)", 2),
        ("math_bitShiftLeft_uint_int", "math.bitShiftLeft(u, j)", 2),
        ("math_bitShiftRight_int_int", "math.bitShiftRight(i, j)", 2),
        ("math_bitShiftRight_uint_int", "math.bitShiftRight(u, j)", 2),
        ("math_sqrt_double", "math.sqrt(d)", 1), ("math_sqrt_int", "math.sqrt(i)", 1),
        ("math_sqrt_uint", "math.sqrt(u)", 1),
    ]),
    # -- encoders extension (no cost functions) ----------------------------------------------------------------
    *_plain("encoders", [("base64_decode_string", "base64.decode(b64)", 1),
                         ("base64_encode_bytes", "base64.encode(b)", 1)]),
    # -- cel-go's network extension (no cost functions; Kubernetes' environment has its own library) -----------
    *_plain("network", [
        ("string_to_cidr", "cidr(cs)", 1), ("cidr_to_string", "string(net)", 1),
        ("cidr_contains_cidr", "net.containsCIDR(net2)", 2), ("cidr_contains_cidr_string", "net.containsCIDR(cs)", 2),
        ("cidr_contains_ip_ip", "net.containsIP(addr)", 2), ("cidr_contains_ip_string", "net.containsIP(ips)", 2),
        ("ip_family", "addr.family()", 1), ("string_to_ip", "ip(ips)", 1), ("cidr_ip", "net.ip()", 1),
        ("ip_to_string", "string(addr)", 1), ("ip_is_canonical", "ip.isCanonical(ips)", 1),
        ("is_cidr", "isCIDR(cs)", 1), ("ip_is_global_unicast", "addr.isGlobalUnicast()", 1),
        ("is_ip", "isIP(ips)", 1), ("ip_is_link_local_multicast", "addr.isLinkLocalMulticast()", 1),
        ("ip_is_link_local_unicast", "addr.isLinkLocalUnicast()", 1), ("ip_is_loopback", "addr.isLoopback()", 1),
        ("cidr_is_mask", "net.isMask()", 1), ("ip_is_unspecified", "addr.isUnspecified()", 1),
        ("cidr_masked", "net.masked()", 1), ("cidr_prefix_length", "net.prefixLength()", 1),
    ]),
    # -- Kubernetes' IP and CIDR libraries (cost.go by function name) -----------------------------------------
    *_plain("k8s_ip", [
        ("cidr_to_string", "string(net)", 1), ("ip_family", "addr.family()", 1), ("cidr_ip", "net.ip()", 1),
        ("ip_to_string", "string(addr)", 1), ("ip_is_global_unicast", "addr.isGlobalUnicast()", 1),
        ("ip_is_link_local_multicast", "addr.isLinkLocalMulticast()", 1),
        ("ip_is_link_local_unicast", "addr.isLinkLocalUnicast()", 1), ("ip_is_loopback", "addr.isLoopback()", 1),
        ("cidr_is_mask", "net.isMask()", 1), ("ip_is_unspecified", "addr.isUnspecified()", 1),
        ("cidr_masked", "net.masked()", 1), ("cidr_prefix_length", "net.prefixLength()", 1),
    ]),
    # cidr/ip/isIP/isCIDR: a tenth of the string; ip.isCanonical twice that
    ("k8s_ip", "string_to_cidr", "cidr(cs)", 1 + tenth(14), (1 + tenth(9), 1 + tenth(43))),
    ("k8s_ip", "is_cidr", "isCIDR(cs)", 1 + tenth(14), (1 + tenth(9), 1 + tenth(43))),
    ("k8s_ip", "string_to_ip", "ip(ips)", 1 + tenth(11), (1 + tenth(7), 1 + tenth(39))),
    ("k8s_ip", "is_ip", "isIP(ips)", 1 + tenth(11), (1 + tenth(7), 1 + tenth(39))),
    ("k8s_ip", "ip_is_canonical", "ip.isCanonical(ips)", 1 + math.ceil(11 * 2 * 0.1),
     (1 + math.ceil(7 * 0.2), 1 + math.ceil(39 * 0.2))),
    # containsIP: the CIDR's size (8 bytes for a /64) twice, a tenth; estimate: two 4-16 byte addresses;
    # plus a tenth of the string for the `_string` overloads. containsCIDR also masks: + a tenth of the CIDR + 1.
    ("k8s_ip", "cidr_contains_ip_ip", "net.containsIP(addr)", 2 + tenth(8 + 8), (2 + tenth(8), 2 + tenth(32))),
    ("k8s_ip", "cidr_contains_ip_string", "net.containsIP(ips)", 2 + tenth(8 + 8) + tenth(11),
     (2 + tenth(8) + tenth(7), 2 + tenth(32) + tenth(39))),
    ("k8s_ip", "cidr_contains_cidr", "net.containsCIDR(net2)", 2 + tenth(8 + 8) + tenth(8) + 1,
     (2 + tenth(8) + tenth(4) + 1, 2 + tenth(32) + tenth(16) + 1)),
    ("k8s_ip", "cidr_contains_cidr_string", "net.containsCIDR(cs)", 2 + tenth(8 + 8) + tenth(8) + 1 + tenth(14),
     (2 + tenth(8) + tenth(4) + 1 + tenth(9), 2 + tenth(32) + tenth(16) + 1 + tenth(43))),
    # -- Kubernetes' jsonpatch library ---------------------------------------------------------------------------
    ("k8s_jsonpatch", "string_jsonpatch_escapeKey_string", "jsonpatch.escapeKey(s)", 1 + tenth(25),
     (1 + tenth(5), 1 + tenth(40))),
    # -- Kubernetes' lists library: traversalCost(receiver) (1 per scalar, floor(bytes * 0.1) per string);
    # estimate: the list's size x (1 + a tenth of the element's size for strings and bytes)
    *_k8s_lists_rows(),
    ("k8s_lists", "list_a_index_of_int", "l.indexOf(i)", 2 + 5, (2 + 3, 2 + 8)),
    ("k8s_lists", "list_a_last_index_of_int", "l.lastIndexOf(i)", 2 + 5, (2 + 3, 2 + 8)),
    ("k8s_lists", "list_includes_dyn_dyn", "l.includes(i)", 2 + 5, (2 + 3, 2 + 8)),
    # ... a dyn receiver has no element type: `includes` costs its size, any other function a tenth of it
    ("k8s_lists", "list_includes_dyn_dyn", "xs.includes(t)", 2 + floor_tenth(25), (2, saturating(2 + MAX))),
    # -- Kubernetes' quantity library ----------------------------------------------------------------------------
    ("k8s_quantity", "string_to_quantity", "quantity(qs)", 1 + tenth(5), (1 + tenth(1), 1 + tenth(20))),
    ("k8s_quantity", "is_quantity_string", "isQuantity(qs)", 1 + tenth(5), (1 + tenth(1), 1 + tenth(20))),
    *_plain("k8s_quantity", [
        ("quantity_sign", "sign(q)", 1), ("quantity_is_greater_than", "q.isGreaterThan(q2)", 2),
        ("quantity_is_less_than", "q.isLessThan(q2)", 2), ("quantity_compare_to", "q.compareTo(q2)", 2),
        ("quantity_get_float", "q.asApproximateFloat()", 1), ("quantity_get_int", "q.asInteger()", 1),
        ("quantity_is_integer", "q.isInteger()", 1), ("quantity_add", "q.add(q2)", 2),
        ("quantity_add_int", "q.add(i)", 2), ("quantity_sub", "q.sub(q2)", 2), ("quantity_sub_int", "q.sub(i)", 2),
    ]),
    # -- Kubernetes' regex library: find/findAll cost as `matches`; at most one match per character ---------------
    ("k8s_regex", "string_find_string", "s.find(re)", 2 + tenth(26) * quarter(6),
     (2 + tenth(6) * quarter(4), 2 + tenth(41) * quarter(12))),
    ("k8s_regex", "string_find_all_string", "s.findAll(re)", 2 + tenth(26) * quarter(6),
     (2 + tenth(6) * quarter(4), 2 + tenth(41) * quarter(12))),
    ("k8s_regex", "string_find_all_string_int", "s.findAll(re, i)", 3 + tenth(26) * quarter(6),
     (3 + tenth(6) * quarter(4), 3 + tenth(41) * quarter(12))),
    # -- Kubernetes' semver library ----------------------------------------------------------------------------
    ("k8s_semver", "string_to_semver", "semver(svs)", 1 + tenth(5), (1 + tenth(1), 1 + tenth(20))),
    ("k8s_semver", "string_bool_to_semver", "semver(svs, f)", 2 + tenth(5), (2 + tenth(1), 2 + tenth(20))),
    ("k8s_semver", "is_semver_string", "isSemver(svs)", 1 + tenth(5), (1 + tenth(1), 1 + tenth(20))),
    ("k8s_semver", "is_semver_string_bool", "isSemver(svs, f)", 2 + tenth(5), (2 + tenth(1), 2 + tenth(20))),
    *_plain("k8s_semver", [
        ("semver_is_greater_than", "sv.isGreaterThan(sv2)", 2), ("semver_is_less_than", "sv.isLessThan(sv2)", 2),
        ("semver_compare_to", "sv.compareTo(sv2)", 2), ("semver_major", "sv.major()", 1),
        ("semver_minor", "sv.minor()", 1), ("semver_patch", "sv.patch()", 1),
    ]),
    # -- Kubernetes' URL library ----------------------------------------------------------------------------------
    ("k8s_url", "string_to_url", "url(us)", 1 + tenth(24), (1 + tenth(10), 1 + tenth(100))),
    *_plain("k8s_url", [
        ("url_get_scheme", "ur.getScheme()", 1), ("url_get_host", "ur.getHost()", 1),
        ("url_get_hostname", "ur.getHostname()", 1), ("url_get_port", "ur.getPort()", 1),
        ("url_get_escaped_path", "ur.getEscapedPath()", 1), ("url_get_query", "ur.getQuery()", 1),
        ("is_url_string", "isURL(us)", 1),
    ]),
    # -- Kubernetes' format library -----------------------------------------------------------------------------
    # validate: as a regex match against the format's longest regex (dns1123Label: 30 characters);
    # estimate: a tenth of the string, times 128 * 0.25 (the longest of any format)
    ("k8s_format", "format-validate", "fmt.validate(s)", 2 + tenth(26) * quarter(30),
     (2 + math.ceil(tenth(5) * 32.0), 2 + math.ceil(tenth(40) * 32.0))),
    *_plain("k8s_format", [
        ("format-named", "format.named(fname)", 1),
        *((f"format.{name}", f"format.{name}()", 0) for name in k8s_format.FORMATS),
    ]),
    # -- Kubernetes' authz library ------------------------------------------------------------------------------
    *_plain("k8s_authz", [
        ("authorizer_path", "az.path(s)", 2), ("authorizer_group", "az.group(s)", 2),
        ("authorizer_serviceaccount", "az.serviceAccount(t, t)", 3), ("groupcheck_resource", "gc.resource(s)", 2),
        ("resourcecheck_subresource", "rc.subresource(s)", 2), ("resourcecheck_namespace", "rc.namespace(s)", 2),
        ("resourcecheck_name", "rc.name(s)", 2), ("decision_errored", "dec.errored()", 1),
        ("decision_error", "dec.error()", 1), ("decision_allowed", "dec.allowed()", 1),
        ("decision_reason", "dec.reason()", 1),
    ]),
    ("k8s_authz", "pathcheck_check", "pc.check(s)", 2 + CHECK, (2 + CHECK, 2 + CHECK)),
    ("k8s_authz", "resourcecheck_check", "rc.check(s)", 2 + CHECK, (2 + CHECK, 2 + CHECK)),
    ("k8s_authz", "authorizer_fieldselector", "rc.fieldSelector(fsel)", 2 + selector(20),
     (2 + selector(4), 2 + selector(30))),
    ("k8s_authz", "authorizer_labelselector", "rc.labelSelector(fsel)", 2 + selector(20),
     (2 + selector(4), 2 + selector(30))),
    # -- a call the checker could not pin to one overload has no overload id at run time: only Kubernetes'
    # by-name costs apply (without its overload id checks), else 1. The estimate covers every candidate.
    ("standard", "string_to_bytes", "bytes(xs)", 1 + 1, (1 + 0, 1 + UNKNOWN_TENTH)),
    ("lists", "list_int_sort", "xl.sort()", 1 + 1, (1 + 11, MAX)),
    ("k8s_lists", "list_int_max_int", "xl.max()", 1 + 3, (1 + 0, 1 + UNKNOWN_TENTH)),
    ("k8s_ip", "cidr_contains_ip_string", "net.containsIP(xip)", 2 + tenth(8 + 8),
     (2 + tenth(8), 2 + tenth(32) + UNKNOWN_TENTH)),
]
# fmt: on

# The same, for calls that no expression makes alone: (library, overload id, argument values, runtime cost,
# argument sizes, estimate of the call alone). sortBy(e, key) calls @sortByAssociatedKeys(list, keys): n² in
# the keys, times 2 (2.1 for string and bytes keys).
DirectRow = tuple[str, str, tuple[Any, ...], int, tuple[tuple[int, int], ...], tuple[int, int]]
_KEYS: dict[str, list[Any]] = {
    "int": [3, 1, 2], "uint": [Uint(3), Uint(1), Uint(2)], "double": [3.0, 1.0, 2.0], "bool": [True, False, True],
    "google.protobuf.Duration": [Duration(3), Duration(1), Duration(2)],
    "google.protobuf.Timestamp": [Timestamp(3), Timestamp(1), Timestamp(2)], "string": ["c", "a", "b"],
    "bytes": [b"c", b"a", b"b"],
}  # fmt: skip
DIRECT_ROWS: list[DirectRow] = [
    (
        "lists",
        f"list_{name}_sortByAssociatedKeys",
        (["x", "y", "z"], keys),
        allocating(factor, 9),
        ((2, 5), (3, 8)),
        (math.ceil(9 * factor) + 11, math.ceil(64 * factor) + 11),
    )
    for name, keys in _KEYS.items()
    for factor in ((2.1 if name in ("string", "bytes") else 2.0),)
]

# Planned outside the overload tables (kcel.eval.codegen): operators whose operands are `dyn` have no overload id
# (cel-go charges 1); `x in [constant list]` of primitives becomes a set lookup under OptOptimize (cel-go decorators.go
# maybeOptimizeSetMembership), which costs nothing itself.
PLANNED_ROWS: list[Row] = [
    ("operators", "add_string", "xs + xs2", 2 + 1, (2 + 0, 2 + UNKNOWN_TENTH)),
    ("operators", "less_string", "xs < xs2", 2 + 1, (2 + 1, 2 + UNKNOWN_TENTH)),
    ("operators", "in_list", "i in xl", 2 + 1, (2 + 0, MAX)),
    ("operators", "in_list", "i in [1, 2, 3]", 1, (1 + 10 + 3, 1 + 10 + 3)),
]

# -- the tests ----------------------------------------------------------------------------------------------


@cache
def _env(key: str) -> kcel.Env:
    """Every library kcel ships, with this one at its newest version in place of the one there."""
    library = LIBRARIES[key]
    chosen = list(all_libraries())
    if key == "network":  # cel-go's extension instead of Kubernetes' IP and CIDR library
        chosen = [lib for lib in chosen if lib.name != k8s_ip.LIBRARY.name]
    names = [lib.name for lib in chosen]
    if library.name in names:
        chosen[names.index(library.name)] = library
    else:
        chosen.append(library)
    return kcel.Env(variables=VARIABLES, libraries=chosen)


def _row_id(row: Row) -> str:
    return f"{row[0]}:{row[1]}:{row[2]}"


def _program(row: Row) -> kcel.Program:
    key, overload_id, expr = row[:3]
    program = _env(key).compile(expr)
    assert program.checked is not None
    assert overload_id in {o for ids in program.checked.overloads.values() for o in ids}, "the row must reach the id"
    return program


def _check_runtime(row: Row) -> None:
    assert _program(row).evaluate_with_cost(VALUES)[1] == row[3]


def _check_estimate(row: Row) -> None:
    estimate = _env(row[0]).estimate_cost(_program(row), _Sizes(SIZES))
    assert (estimate.min, estimate.max) == row[4]


@pytest.mark.parametrize("row", ROWS, ids=[_row_id(r) for r in ROWS])
def test_runtime_cost(row: Row) -> None:
    _check_runtime(row)


@pytest.mark.parametrize("row", ROWS, ids=[_row_id(r) for r in ROWS])
def test_estimated_cost(row: Row) -> None:
    _check_estimate(row)


@pytest.mark.parametrize("row", DIRECT_ROWS, ids=[f"{r[0]}:{r[1]}" for r in DIRECT_ROWS])
def test_overload_cost_direct(row: DirectRow) -> None:
    key, overload_id, args, runtime, sizes, (low, high) = row
    overload = next(o for o in LIBRARIES[key].overloads if o.id == overload_id)
    result = overload.impl(*args)
    assert (overload.cost(args, result) if overload.cost is not None else 1) == runtime
    assert overload.estimate is not None
    found = overload.estimate(SizedCall([SizeEstimate(*s) for s in sizes]))
    assert found is not None
    assert (found.cost.min, found.cost.max) == (low, high)


@pytest.mark.parametrize("row", PLANNED_ROWS, ids=[_row_id(r) for r in PLANNED_ROWS])
def test_planner_optimizations(row: Row) -> None:
    _check_runtime(row)
    _check_estimate(row)


def test_every_overload_has_a_row() -> None:
    """A new overload (or library) without a row fails here."""
    covered = {(r[0], r[1]) for r in ROWS} | {(r[0], r[1]) for r in DIRECT_ROWS}
    declared = {(key, o.id) for key, library in LIBRARIES.items() for o in library.overloads}
    assert declared - covered == set(), "overloads without a cost row"
    assert covered - declared == set(), "rows for overloads no library declares"


def test_every_library_module_is_listed() -> None:
    """A new library module must join LIBRARIES (and so need rows for its overloads)."""
    modules = {m.name: importlib.import_module(f"kcel.libs.{m.name}") for m in pkgutil.iter_modules(kcel.libs.__path__)}
    with_tables = {name for name, module in modules.items() if hasattr(module, "LIBRARY") or hasattr(module, "library")}
    assert with_tables == set(LIBRARIES)


# Result sizes the estimate reports (they bound what later calls on the result cost), from the same formulas:
# (library, overload id, argument sizes, result size)
RESULT_SIZES: list[tuple[str, str, tuple[tuple[int, int], ...], tuple[int, int] | None]] = [
    ("standard", "string_to_bytes", ((5, 40),), (5, 160)),  # a code point is at most 4 bytes
    ("standard", "bytes_to_string", ((5, 40),), (1, 40)),
    ("strings", "strings_quote", ((5, 40),), (7, 82)),  # every character escaped, plus the quotes
    ("strings", "string_lower_ascii", ((5, 40),), (5, 40)),
    ("strings", "string_trim", ((5, 40),), (5, 40)),
    ("strings", "string_substring_int", ((5, 40), (1, 1)), (5, 40)),
    ("strings", "string_index_of_string", ((5, 40), (1, 3)), None),
    ("strings", "string_format", ((5, 40), (2, 2)), None),
    # replace: every 2-character `old` becomes a 3-character `new` at most, none at least
    ("strings", "string_replace_string_string", ((5, 40), (2, 2), (3, 3)), (5, math.ceil(40 / 2) * 3)),
    ("strings", "string_split_string", ((5, 40), (1, 1)), (0, 40)),
    ("k8s_regex", "string_find_all_string", ((5, 40), (1, 8)), (0, 40)),
    ("k8s_url", "string_to_url", ((5, 40),), (5, 40)),
    ("k8s_jsonpatch", "string_jsonpatch_escapeKey_string", ((5, 40),), (5, 40)),
    ("k8s_quantity", "string_to_quantity", ((5, 40),), None),
    ("k8s_ip", "string_to_ip", ((5, 40),), None),
    ("lists", "list_reverse", ((3, 8),), (3, 8)),
    ("lists", "list_distinct", ((3, 8),), (9, 64)),
    ("lists", "list_flatten", ((3, 8),), (3, 8)),
    ("sets", "list_sets_contains_list", ((3, 8), (1, 2)), None),
    ("k8s_lists", "list_int_sum_int", ((3, 8),), None),
]


@pytest.mark.parametrize("row", RESULT_SIZES, ids=[f"{r[0]}:{r[1]}" for r in RESULT_SIZES])
def test_result_sizes(row: tuple[str, str, tuple[tuple[int, int], ...], tuple[int, int] | None]) -> None:
    key, overload_id, sizes, expected = row
    overload = next(o for o in LIBRARIES[key].overloads if o.id == overload_id)
    assert overload.estimate is not None
    found = overload.estimate(SizedCall([SizeEstimate(*s) for s in sizes], [STRING] * len(sizes)))
    assert found is not None
    size = found.result_size
    assert (None if size is None else (size.min, size.max)) == expected
