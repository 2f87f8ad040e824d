"""Hypothesis strategies for well-typed CEL expressions, and activations that match their declarations.

The generator is type-directed: `cases()` picks a result type and builds an expression of it from the
productions that yield that type, recursing on the operand types each one needs, with a bound on depth and on
size. So nearly every case type-checks and reaches the evaluator, where the differences worth finding live; the
tests count how many do. What it covers:

- literals of every kind (int and uint at their limits, hex ints, doubles down to NaN and ±Inf, escaped and raw
  strings, bytes, bool, null, lists with optional elements, maps with optional entries and repeated keys) and the
  declared variables in `VARIABLES`, of every type, with activation values to match;
- arithmetic (overflow, division by zero), negation, comparisons (cross-type numeric too, statically and through
  `dyn`), `==`/`!=` and `in` across types, `&&`, `||`, `!`, `?:`, `type()`, `has()`, `dyn()` where another type
  is expected (the checker lets it through; evaluation must cope);
- macros: `all`, `exists`, `exists_one`, `map` (2 and 3 arguments), `filter`, `cel.bind`, the two-variable
  comprehensions (`all`, `exists`, `existsOne`, `transformList`, `transformMap`, `transformMapEntry`), `sortBy`;
- the standard library: `size`, `contains`, `startsWith`, `endsWith`, `matches`, conversions to and from strings,
  durations and timestamps with their accessors and time zones; the strings extension (`lowerAscii`,
  `upperAscii`, `replace`, `split`, `join`, `substring`, `indexOf`, `lastIndexOf`, `trim`, `charAt`, `format`,
  `strings.quote`), math, base64, the lists extension; optionals (`optional.of`, `optional.none`,
  `optional.ofNonZeroValue`, `.?f`, `[?i]`, `value`, `orValue`, `hasValue`, `or`, `optMap`, `optFlatMap`).

Every case records the features it used (`two_var`, `double_text`, ...): cel-expr-python lacks some of them and
differs from cel-go on others, so the differential test knows which cases to compare with it and how to attribute
a disagreement (`KNOWN_DIFFERENCES` in test_differential.py).
"""

from __future__ import annotations

import math
import unicodedata
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone
from typing import Any

from hypothesis import strategies as st

from kcel.values import INT64_MAX, INT64_MIN, UINT64_MAX, Uint

# --- CEL types ------------------------------------------------------------------------------------------------------
# A type is a name ("int", "dyn", "google.protobuf.Duration") or a tuple: ("list", T), ("map", K, V), ("optional", T).
CelType = str | tuple[Any, ...]

INT, UINT, DOUBLE, STRING, BYTES, BOOL = "int", "uint", "double", "string", "bytes", "bool"
NULL, DYN = "null_type", "dyn"
DURATION, TIMESTAMP = "google.protobuf.Duration", "google.protobuf.Timestamp"
SCALARS: tuple[str, ...] = (INT, UINT, DOUBLE, STRING, BYTES, BOOL)


def list_of(t: CelType) -> CelType:
    return ("list", t)


def map_of(k: CelType, v: CelType) -> CelType:
    return ("map", k, v)


def optional_of(t: CelType) -> CelType:
    return ("optional", t)


def type_name(t: CelType) -> str:
    """The CEL type string `kcel.Env(variables=...)` takes."""
    if isinstance(t, str):
        return t
    if t[0] == "list":
        return f"list({type_name(t[1])})"
    if t[0] == "map":
        return f"map({type_name(t[1])}, {type_name(t[2])})"
    return f"optional_type({type_name(t[1])})"


def has_optional(t: CelType) -> bool:
    return not isinstance(t, str) and (t[0] == "optional" or any(has_optional(p) for p in t[1:]))


# The declared variables, one or more of every kind the productions read.
VARIABLES: dict[str, CelType] = {
    "x": INT, "y": INT, "u": UINT, "f": DOUBLE, "s": STRING, "t": STRING, "b": BYTES, "flag": BOOL,
    "l": list_of(INT), "lu": list_of(UINT), "lf": list_of(DOUBLE), "ls": list_of(STRING),
    "m": map_of(STRING, INT), "ms": map_of(STRING, STRING), "mi": map_of(INT, STRING),
    "ml": map_of(STRING, list_of(INT)), "dur": DURATION, "ts": TIMESTAMP, "d": DYN, "e": DYN,
}  # fmt: skip
DECLARATIONS: dict[str, str] = {name: type_name(t) for name, t in VARIABLES.items()}

# Types an expression is requested at (the result types); optionals appear only inside expressions, since
# cel-expr-python cannot hand an optional value back to Python.
RESULT_TYPES: tuple[CelType, ...] = (
    BOOL, BOOL, BOOL, INT, INT, UINT, DOUBLE, STRING, STRING, BYTES, NULL, DYN,
    list_of(INT), list_of(STRING), list_of(BOOL), list_of(DYN), map_of(STRING, INT), map_of(INT, STRING),
    DURATION, TIMESTAMP,
)  # fmt: skip
# Element types the productions pick when they need "some type" (a comprehension's range, a `dyn` operand...).
ANY_TYPES: tuple[CelType, ...] = (
    INT, INT, UINT, DOUBLE, STRING, STRING, BYTES, BOOL, NULL, list_of(INT), list_of(STRING),
    map_of(STRING, INT), DURATION, TIMESTAMP,
)  # fmt: skip
NUMERIC = (INT, UINT, DOUBLE)
ORDERED = (INT, UINT, DOUBLE, STRING, BYTES, BOOL, DURATION, TIMESTAMP)
KEY_TYPES = (STRING, STRING, INT, UINT, BOOL)


# --- literals -------------------------------------------------------------------------------------------------------

INTS = st.one_of(
    st.integers(-3, 5),
    st.sampled_from([INT64_MAX, INT64_MIN, INT64_MAX - 1, INT64_MIN + 1, 2**32, -(2**31), 2**62, 1000, -1]),
    st.integers(INT64_MIN, INT64_MAX),
)
UINTS = st.one_of(
    st.integers(0, 5), st.sampled_from([UINT64_MAX, UINT64_MAX - 1, 2**63, 2**63 - 1, 2**32]),
    st.integers(0, UINT64_MAX),
)  # fmt: skip
SPECIAL_DOUBLES = [0.0, -0.0, 0.5, 1.0, -1.5, 2.5, 1e308, -1e308, 5e-324, 1e-7, 123456789.0, 1e21,
                   9.223372036854775807e18, -9.223372036854776e18, 1.8446744073709552e19, math.inf, -math.inf,
                   math.nan]  # fmt: skip
DOUBLES = st.one_of(st.sampled_from(SPECIAL_DOUBLES), st.floats(-1e6, 1e6), st.floats())
STRING_SAMPLES = ["", "a", "b", "abc", "a,b", "A b", " x ", "é", "😀", "1", "-2", "1.5", "true", "1h",
                  "2020-01-01T00:00:00Z", "ABC", "\u00e9t\u00e9", "a.b", "%"]  # fmt: skip
CHARACTERS = st.characters(blacklist_categories=("Cs",), max_codepoint=0x1F9FF)
STRINGS = st.one_of(st.sampled_from(STRING_SAMPLES), st.text(CHARACTERS, max_size=6))
BYTES_VALUES = st.one_of(st.sampled_from([b"", b"abc", b"\xff", "é".encode(), b"\x00a"]), st.binary(max_size=5))
KEYS = st.sampled_from(["a", "b", "c", "", "A"])
DURATION_TEXTS = ["0", "1s", "-1.5s", "1h30m", "2562047h", "2562048h", "1ns", "1us", "1µs", "-3m4s", "250ms",
                  "1.5h", "9223372036s", "-9223372036.854775808s", "1d", "", "+5s", ".5s"]  # fmt: skip
TIMESTAMP_TEXTS = ["1970-01-01T00:00:00Z", "2020-02-29T12:34:56.789Z", "2009-02-13T23:31:30.5+01:00",
                   "0001-01-01T00:00:00Z", "9999-12-31T23:59:59.999999999Z", "2023-06-01T00:00:00-07:00",
                   "2023-13-01T00:00:00Z", "2023-01-01 00:00:00Z", "2023-01-01T00:00:00.123456789Z"]  # fmt: skip
NUMBER_TEXTS = ["0", "1", "-1", "+1", " 1", "1.5", "1e3", "-0", "9223372036854775807", "9223372036854775808",
                "-9223372036854775809", "18446744073709551615", "18446744073709551616", "0x10", "1_000", "inf",
                "-Infinity", "NaN", "+nan", "1e400", "0x1p3", "1e-400", ".5", "5.", "abc", ""]  # fmt: skip
REGEXES = ["a", "^a", "b$", "a.c", "[a-c]+", "^$", "(a|b)*", "\\d", "\\pL", "(?i)A", "[[:alpha:]]", "a{2}",
           "é", ".", "^.$", "\\\\", "\\Ca", "a{2,1}", "(", "x*?", "\\bx"]  # fmt: skip
TIMEZONES = ["UTC", "America/New_York", "Europe/Paris", "+05:30", "-02:00", "Asia/Kolkata", "Nowhere/City"]


def cel_string(text: str, quote: str = '"') -> str:
    """A CEL string literal: printable characters as they are, the rest as escapes."""
    out = [quote]
    for ch in text:
        code = ord(ch)
        if ch == "\\" or ch == quote:
            out.append("\\" + ch)
        elif ch == "\n":
            out.append("\\n")
        elif ch == "\t":
            out.append("\\t")
        elif 0x20 <= code < 0x7F:
            out.append(ch)
        elif code < 0x20 or code == 0x7F:
            out.append(f"\\x{code:02x}")
        elif unicodedata.category(ch)[0] in "CZ":
            out.append(f"\\u{code:04x}" if code <= 0xFFFF else f"\\U{code:08x}")
        else:
            out.append(ch)
    out.append(quote)
    return "".join(out)


def cel_bytes(data: bytes) -> str:
    return 'b"' + "".join(chr(c) if 0x20 <= c < 0x7F and chr(c) not in '"\\' else f"\\x{c:02x}" for c in data) + '"'


def cel_double(value: float) -> str:
    if math.isnan(value):
        return 'double("NaN")'
    if math.isinf(value):
        return 'double("inf")' if value > 0 else 'double("-inf")'
    text = repr(value)
    return f"({text})" if text.startswith("-") else text


# --- activation values ----------------------------------------------------------------------------------------------

EPOCH = datetime(1970, 1, 1, tzinfo=timezone.utc)
TIMESTAMPS = st.datetimes(datetime(1, 1, 1), datetime(9999, 12, 31, 23, 59, 59), timezones=st.just(timezone.utc))
DURATIONS = st.one_of(
    st.integers(-10**6, 10**6).map(lambda s: timedelta(seconds=s)),
    st.integers(-(2**63) // 1000 + 1, (2**63 - 1) // 1000).map(lambda us: timedelta(microseconds=us)),
)  # fmt: skip
JSON_SCALARS = st.one_of(st.none(), st.booleans(), INTS, DOUBLES, STRINGS, BYTES_VALUES)
DYN_VALUES = st.recursive(
    JSON_SCALARS,
    lambda children: st.one_of(
        st.lists(children, max_size=3),
        st.dictionaries(st.one_of(KEYS, st.integers(-2, 2), st.booleans()), children, max_size=3),
    ),
    max_leaves=6,
)


def values_of(t: CelType) -> st.SearchStrategy[Any]:
    """Activation values of a declared type, as kcel takes them (Uint for uint, datetime/timedelta for time)."""
    simple: dict[str, st.SearchStrategy[Any]] = {
        INT: INTS, UINT: UINTS.map(Uint), DOUBLE: DOUBLES, STRING: STRINGS, BYTES: BYTES_VALUES, BOOL: st.booleans(),
        NULL: st.none(), DYN: DYN_VALUES, DURATION: DURATIONS, TIMESTAMP: TIMESTAMPS,
    }  # fmt: skip
    if isinstance(t, str):
        return simple[t]
    if t[0] == "list":
        return st.lists(values_of(t[1]), max_size=4)
    keys = KEYS if t[1] == STRING else values_of(t[1]) if t[1] != INT else st.integers(-2, 3)
    return st.dictionaries(keys, values_of(t[2]), max_size=3)


def activations(variables: dict[str, CelType] = VARIABLES) -> st.SearchStrategy[dict[str, Any]]:
    return st.fixed_dictionaries({name: values_of(t) for name, t in variables.items()})


def cpp_value(value: Any) -> Any:
    """The same value for cel-expr-python, which types a plain int by its declaration (no Uint class)."""
    if isinstance(value, Uint):
        return int(value)
    if isinstance(value, list):
        return [cpp_value(v) for v in value]
    if isinstance(value, dict):
        return {cpp_value(k): cpp_value(v) for k, v in value.items()}
    return value


# --- expressions ----------------------------------------------------------------------------------------------------


@dataclass
class Case:
    """One generated expression: its text, the type it was built at, and the features it used."""

    expr: str
    type: CelType
    features: set[str] = field(default_factory=set)


Scope = tuple[tuple[str, CelType], ...]
Production = Callable[[CelType, int, Scope], str]


class _Builder:
    """Builds one expression; `draw` is hypothesis's, so every choice shrinks."""

    def __init__(self, draw: Callable[[st.SearchStrategy[Any]], Any]) -> None:
        self.draw = draw
        self.features: set[str] = set()
        self.names = 0
        self.budget = MAX_NODES  # productions left; then only leaves, so no expression grows without bound

    def pick(self, options: Any) -> Any:
        return self.draw(st.sampled_from(options))

    def chance(self, p: float) -> bool:
        return bool(self.draw(st.floats(0, 1)) < p)

    def fresh(self) -> str:
        self.names += 1
        return f"v{self.names}"

    # -- entry -------------------------------------------------------------------------------------------------------

    def expr(self, t: CelType, depth: int, scope: Scope = ()) -> str:
        """An expression of type `t`: a leaf at depth 0, otherwise any production that yields `t`."""
        if depth <= 0 or self.budget <= 0 or self.chance(0.1):
            return self.leaf(t, scope)
        self.budget -= 1
        productions = self.productions(t)
        return self.pick(productions)(t, depth - 1, scope)

    def any_type(self, depth: int) -> CelType:
        return self.pick(ANY_TYPES if depth > 1 else SCALARS)

    # -- leaves ------------------------------------------------------------------------------------------------------

    def leaf(self, t: CelType, scope: Scope) -> str:
        names = [name for name, vt in scope if vt == t] + [name for name, vt in VARIABLES.items() if vt == t]
        if names and self.chance(0.5):
            return self.pick(names)
        return self.literal(t, scope)

    def literal(self, t: CelType, scope: Scope) -> str:
        draw = self.draw
        if t == INT:
            n = draw(INTS)
            return f"({n})" if n < 0 else (hex(n) if self.chance(0.05) else str(n))
        if t == UINT:
            return f"{draw(UINTS)}u"
        if t == DOUBLE:
            return cel_double(draw(DOUBLES))
        if t == STRING:
            text = draw(STRINGS)
            if self.chance(0.1) and "'" not in text and "\\" not in text and text.isprintable():
                return f"r'{text}'"
            return cel_string(text, self.pick(['"', "'"]))
        if t == BYTES:
            return cel_bytes(draw(BYTES_VALUES))
        if t == BOOL:
            return self.pick(["true", "false"])
        if t == NULL:
            return "null"
        if t == DURATION:
            self.features.add("duration_parse")
            return f"duration({cel_string(self.pick(DURATION_TEXTS))})"
        if t == TIMESTAMP:
            self.features.add("timestamp_parse")
            return f"timestamp({cel_string(self.pick(TIMESTAMP_TEXTS))})"
        if t == DYN:
            inner = self.pick(SCALARS + (NULL,))
            return f"dyn({self.literal(inner, scope)})"
        kind = t[0]
        if kind == "list":
            items = [self.leaf(t[1], scope) for _ in range(self.draw(st.integers(0, 2)))]
            self.features.update(() if items else ("free_type",))
            return "[" + ", ".join(items) + "]"
        if kind == "map":
            entries = [f"{self.leaf(t[1], scope)}: {self.leaf(t[2], scope)}" for _ in range(draw(st.integers(0, 2)))]
            self.features.update(("map_literal",) if len(entries) > 1 else () if entries else ("free_type",))
            return "{" + ", ".join(entries) + "}"
        return self.pick(["optional.none()", f"optional.of({self.leaf(t[1], scope)})"])

    # -- productions -------------------------------------------------------------------------------------------------

    def productions(self, t: CelType) -> list[Production]:
        common: list[Production] = [self.conditional, self.index_list, self.index_map, self.bind, self.or_value]
        if t != DYN:
            common.append(self.dyn_cast)
        by_type: dict[str, list[Production]] = {
            INT: [self.arithmetic, self.arithmetic, self.negate, self.size, self.to_int, self.string_index,
                  self.time_part, self.math_int],
            UINT: [self.arithmetic, self.arithmetic, self.to_uint],
            DOUBLE: [self.arithmetic, self.negate, self.to_double, self.math_double],
            STRING: [self.concat, self.to_string, self.string_function, self.string_function, self.join,
                     self.format, self.quote, self.base64_encode],
            BYTES: [self.concat, self.to_bytes, self.base64_decode],
            BOOL: [self.compare, self.compare, self.equality, self.heterogeneous, self.membership, self.logic,
                   self.logic, self.negation, self.quantifier, self.quantifier, self.string_predicate, self.has,
                   self.has_value, self.math_predicate, self.type_test],
            NULL: [],
            DYN: [self.dyn_cast, self.dyn_cast, self.mixed_list_index],
            DURATION: [self.time_arithmetic, self.to_duration],
            TIMESTAMP: [self.time_arithmetic, self.to_timestamp],
        }  # fmt: skip
        if isinstance(t, str):
            return common + by_type[t]
        if t[0] == "list":
            return common + [self.list_literal, self.list_literal, self.concat, self.map_macro, self.filter_macro,
                             self.split, self.transform_list, self.lists_extension]  # fmt: skip
        if t[0] == "map":
            return common + [self.map_literal, self.map_literal, self.transform_map]
        return [self.conditional, self.optional_of, self.optional_select, self.optional_index, self.optional_or,
                self.optional_map]  # fmt: skip

    def conditional(self, t: CelType, depth: int, scope: Scope) -> str:
        return f"({self.expr(BOOL, depth, scope)} ? {self.expr(t, depth, scope)} : {self.expr(t, depth, scope)})"

    def index_list(self, t: CelType, depth: int, scope: Scope) -> str:
        index = str(self.draw(st.integers(-1, 3))) if self.chance(0.7) else self.expr(INT, depth, scope)
        if self.chance(0.1):  # cel-go also indexes lists by whole doubles and uints
            index = f"dyn({self.pick([f'{self.draw(st.integers(0, 2))}u', '1.0', '0.5', index])})"
        return f"{self.expr(list_of(t), depth, scope)}[{index}]"

    def index_map(self, t: CelType, depth: int, scope: Scope) -> str:
        key = self.pick(KEY_TYPES)
        container = self.expr(map_of(key, t), depth, scope)
        if key == STRING and self.chance(0.4):
            return f"{container}.{self.pick(['a', 'b', 'c'])}"
        if key in NUMERIC and self.chance(0.2):  # looked up by another numeric type, through dyn
            return f"{container}[dyn({self.expr(self.pick(NUMERIC), depth, scope)})]"
        return f"{container}[{self.expr(key, depth, scope)}]"

    def bind(self, t: CelType, depth: int, scope: Scope) -> str:
        name, bound = self.fresh(), self.any_type(depth)
        value = self.expr(bound, depth, scope)
        return f"cel.bind({name}, {value}, {self.expr(t, depth, (*scope, (name, bound)))})"

    def or_value(self, t: CelType, depth: int, scope: Scope) -> str:
        optional = self.expr(optional_of(t), depth, scope)
        if self.chance(0.3):
            return f"{optional}.value()"
        return f"{optional}.orValue({self.expr(t, depth, scope)})"

    def dyn_cast(self, t: CelType, depth: int, scope: Scope) -> str:
        """`dyn(e)` of another type where `t` is expected: the checker accepts it, evaluation must cope."""
        inner = t if self.chance(0.6) or t == DYN else self.any_type(depth)
        return f"dyn({self.expr(inner, depth, scope)})"

    def mixed_list_index(self, t: CelType, depth: int, scope: Scope) -> str:
        items = [self.expr(self.any_type(depth), depth, scope) for _ in range(self.draw(st.integers(1, 3)))]
        return f"[{', '.join(items)}][{self.draw(st.integers(0, len(items) - 1))}]"

    # numbers
    def arithmetic(self, t: CelType, depth: int, scope: Scope) -> str:
        ops = ["+", "-", "*", "/", "%"] if t != DOUBLE else ["+", "-", "*", "/"]
        return f"({self.expr(t, depth, scope)} {self.pick(ops)} {self.expr(t, depth, scope)})"

    def negate(self, t: CelType, depth: int, scope: Scope) -> str:
        return f"(-{self.expr(t, depth, scope)})"

    def size(self, t: CelType, depth: int, scope: Scope) -> str:
        operand = self.expr(
            self.pick([STRING, BYTES, list_of(INT), map_of(STRING, INT), list_of(STRING)]), depth, scope
        )
        return f"size({operand})" if self.chance(0.5) else f"{operand}.size()"

    def to_int(self, t: CelType, depth: int, scope: Scope) -> str:
        source = self.pick([UINT, DOUBLE, STRING, TIMESTAMP, INT])
        if source == STRING:
            self.features.add("string_to_number")
            if self.chance(0.6):
                return f"int({cel_string(self.pick(NUMBER_TEXTS))})"
        return f"int({self.expr(source, depth, scope)})"

    def to_uint(self, t: CelType, depth: int, scope: Scope) -> str:
        source = self.pick([INT, DOUBLE, STRING, UINT])
        if source == STRING:
            self.features.add("string_to_number")
            if self.chance(0.6):
                return f"uint({cel_string(self.pick(NUMBER_TEXTS))})"
        return f"uint({self.expr(source, depth, scope)})"

    def to_double(self, t: CelType, depth: int, scope: Scope) -> str:
        source = self.pick([INT, UINT, STRING, DOUBLE])
        if source == STRING:
            self.features.add("string_to_number")
            if self.chance(0.6):
                return f"double({cel_string(self.pick(NUMBER_TEXTS))})"
        return f"double({self.expr(source, depth, scope)})"

    def string_index(self, t: CelType, depth: int, scope: Scope) -> str:
        receiver, needle = self.expr(STRING, depth, scope), self.expr(STRING, depth, scope)
        function = self.pick(["indexOf", "lastIndexOf"])
        if self.chance(0.4):
            self.features.add("index_of_offset")
            return f"{receiver}.{function}({needle}, {self.expr(INT, depth, scope)})"
        return f"{receiver}.{function}({needle})"

    def time_part(self, t: CelType, depth: int, scope: Scope) -> str:
        if self.chance(0.4):
            part = self.pick(["getHours", "getMinutes", "getSeconds", "getMilliseconds"])
            if part == "getMilliseconds":
                self.features.add("duration_milliseconds")
            return f"{self.expr(DURATION, depth, scope)}.{part}()"
        part = self.pick(["getFullYear", "getMonth", "getDayOfYear", "getDayOfMonth", "getDate", "getDayOfWeek",
                          "getHours", "getMinutes", "getSeconds", "getMilliseconds"])  # fmt: skip
        zone = f"({cel_string(self.pick(TIMEZONES))})" if self.chance(0.4) else "()"
        return f"{self.expr(TIMESTAMP, depth, scope)}.{part}{zone}"

    def math_int(self, t: CelType, depth: int, scope: Scope) -> str:
        function = self.pick(["math.greatest", "math.least", "math.abs", "math.sign", "math.bitAnd", "math.bitOr",
                              "math.bitXor", "math.bitShiftLeft", "math.bitShiftRight"])  # fmt: skip
        if function in ("math.abs", "math.sign"):
            return f"{function}({self.expr(INT, depth, scope)})"
        return f"{function}({self.expr(INT, depth, scope)}, {self.expr(INT, depth, scope)})"

    def math_double(self, t: CelType, depth: int, scope: Scope) -> str:
        function = self.pick(["math.ceil", "math.floor", "math.round", "math.trunc", "math.abs", "math.sqrt"])
        operand = self.pick([DOUBLE, DOUBLE, INT]) if function == "math.sqrt" else DOUBLE
        return f"{function}({self.expr(operand, depth, scope)})"

    def math_predicate(self, t: CelType, depth: int, scope: Scope) -> str:
        return f"{self.pick(['math.isNaN', 'math.isInf', 'math.isFinite'])}({self.expr(DOUBLE, depth, scope)})"

    # strings and bytes
    def concat(self, t: CelType, depth: int, scope: Scope) -> str:
        return f"({self.expr(t, depth, scope)} + {self.expr(t, depth, scope)})"

    def to_string(self, t: CelType, depth: int, scope: Scope) -> str:
        source = self.pick([INT, UINT, DOUBLE, BOOL, BYTES, STRING, DURATION, TIMESTAMP])
        self.features.update({DOUBLE: {"double_text"}, DURATION: {"duration_text"}, TIMESTAMP: {"timestamp_text"}}
                             .get(source, set()))  # fmt: skip
        return f"string({self.expr(source, depth, scope)})"

    def string_function(self, t: CelType, depth: int, scope: Scope) -> str:
        receiver = self.expr(STRING, depth, scope)
        choice = self.pick(["lowerAscii", "upperAscii", "trim", "replace", "replace_n", "substring", "substring2",
                            "charAt"])  # fmt: skip
        if choice in ("lowerAscii", "upperAscii", "trim"):
            return f"{receiver}.{choice}()"
        if choice == "replace":
            return f"{receiver}.replace({self.expr(STRING, depth, scope)}, {self.expr(STRING, depth, scope)})"
        if choice == "replace_n":
            a, b, n = self.expr(STRING, depth, scope), self.expr(STRING, depth, scope), self.small_int(depth, scope)
            return f"{receiver}.replace({a}, {b}, {n})"
        if choice == "substring":
            return f"{receiver}.substring({self.small_int(depth, scope)})"
        if choice == "substring2":
            return f"{receiver}.substring({self.small_int(depth, scope)}, {self.small_int(depth, scope)})"
        return f"{receiver}.charAt({self.small_int(depth, scope)})"

    def small_int(self, depth: int, scope: Scope) -> str:
        return str(self.draw(st.integers(-1, 4))) if self.chance(0.7) else self.expr(INT, depth, scope)

    def join(self, t: CelType, depth: int, scope: Scope) -> str:
        items = self.expr(list_of(STRING), depth, scope)
        return f"{items}.join()" if self.chance(0.3) else f"{items}.join({self.expr(STRING, depth, scope)})"

    def format(self, t: CelType, depth: int, scope: Scope) -> str:
        self.features.add("format")
        verb, arg_type = self.pick([("%s", STRING), ("%d", INT), ("%s", INT), ("%f", DOUBLE), ("%.2f", DOUBLE),
                                    ("%e", DOUBLE), ("%x", INT), ("%o", UINT), ("%b", INT), ("%s", list_of(INT)),
                                    ("%s", DOUBLE), ("%s", BOOL), ("%x", STRING), ("%s", BYTES)])  # fmt: skip
        prefix = cel_string(self.draw(st.sampled_from(["", "a", "=", "%% "])))
        return f"({prefix} + {cel_string(verb)}).format([{self.expr(arg_type, depth, scope)}])"

    def quote(self, t: CelType, depth: int, scope: Scope) -> str:
        return f"strings.quote({self.expr(STRING, depth, scope)})"

    def base64_encode(self, t: CelType, depth: int, scope: Scope) -> str:
        return f"base64.encode({self.expr(BYTES, depth, scope)})"

    def base64_decode(self, t: CelType, depth: int, scope: Scope) -> str:
        if self.chance(0.5):
            return f"base64.decode(base64.encode({self.expr(BYTES, depth, scope)}))"
        self.features.add("base64_decode")
        return f"base64.decode({self.expr(STRING, depth, scope)})"

    def to_bytes(self, t: CelType, depth: int, scope: Scope) -> str:
        return f"bytes({self.expr(self.pick([STRING, BYTES]), depth, scope)})"

    def split(self, t: CelType, depth: int, scope: Scope) -> str:
        if t != list_of(STRING):
            return self.list_literal(t, depth, scope)
        receiver, separator = self.expr(STRING, depth, scope), self.expr(STRING, depth, scope)
        self.features.add("split")
        if self.chance(0.3):
            return f"{receiver}.split({separator}, {self.small_int(depth, scope)})"
        return f"{receiver}.split({separator})"

    # booleans
    def compare(self, t: CelType, depth: int, scope: Scope) -> str:
        op = self.pick(["<", "<=", ">", ">="])
        left = self.pick(ORDERED)
        right = left
        if left in NUMERIC and self.chance(0.3):  # cel-go declares cross-type numeric comparisons
            right = self.pick(NUMERIC)
            if right != left:
                if self.chance(0.5):
                    self.features.add("cross_numeric_static")
                    return f"({self.expr(left, depth, scope)} {op} {self.expr(right, depth, scope)})"
                return f"(dyn({self.expr(left, depth, scope)}) {op} {self.expr(right, depth, scope)})"
        return f"({self.expr(left, depth, scope)} {op} {self.expr(right, depth, scope)})"

    def equality(self, t: CelType, depth: int, scope: Scope) -> str:
        operand = self.any_type(depth)
        return f"({self.expr(operand, depth, scope)} {self.pick(['==', '!='])} {self.expr(operand, depth, scope)})"

    def heterogeneous(self, t: CelType, depth: int, scope: Scope) -> str:
        """Equality and membership across types through `dyn` (cel-go compares numbers by value)."""
        left, right = self.any_type(depth), self.any_type(depth)
        if left in NUMERIC and self.chance(0.3):  # a map finds 1, 1u and 1.0 alike
            key = self.pick([INT, UINT])
            container = self.expr(map_of(key, self.any_type(depth)), depth, scope)
            return f"(dyn({self.expr(left, depth, scope)}) in {container})"
        if self.chance(0.5):
            return f"(dyn({self.expr(left, depth, scope)}) {self.pick(['==', '!='])} {self.expr(right, depth, scope)})"
        return f"(dyn({self.expr(left, depth, scope)}) in {self.expr(list_of(right), depth, scope)})"

    def type_test(self, t: CelType, depth: int, scope: Scope) -> str:
        left = self.expr(self.any_type(depth), depth, scope)
        if self.chance(0.5):
            return f"(type({left}) == type({self.expr(self.any_type(depth), depth, scope)}))"
        named = self.pick(["int", "uint", "double", "string", "bytes", "bool", "list", "map", "null_type", "type",
                           "google.protobuf.Duration", "google.protobuf.Timestamp"])  # fmt: skip
        return f"(type({left}) {self.pick(['==', '!='])} {named})"

    def membership(self, t: CelType, depth: int, scope: Scope) -> str:
        element = self.any_type(depth)
        if self.chance(0.5) or element not in KEY_TYPES:
            return f"({self.expr(element, depth, scope)} in {self.expr(list_of(element), depth, scope)})"
        return f"({self.expr(element, depth, scope)} in {self.expr(map_of(element, INT), depth, scope)})"

    def logic(self, t: CelType, depth: int, scope: Scope) -> str:
        return f"({self.expr(BOOL, depth, scope)} {self.pick(['&&', '||'])} {self.expr(BOOL, depth, scope)})"

    def negation(self, t: CelType, depth: int, scope: Scope) -> str:
        return f"(!{self.expr(BOOL, depth, scope)})"

    def string_predicate(self, t: CelType, depth: int, scope: Scope) -> str:
        function = self.pick(["contains", "startsWith", "endsWith", "matches", "matches"])
        receiver = self.expr(STRING, depth, scope)
        if function == "matches":
            self.features.add("regex")
            pattern = cel_string(self.pick(REGEXES)) if self.chance(0.7) else self.expr(STRING, depth, scope)
            return f"{receiver}.matches({pattern})" if self.chance(0.7) else f"matches({receiver}, {pattern})"
        return f"{receiver}.{function}({self.expr(STRING, depth, scope)})"

    def has(self, t: CelType, depth: int, scope: Scope) -> str:
        target = (
            self.pick(["m", "ms", "ml", "d", "e"]) if self.chance(0.6) else self.expr(map_of(STRING, INT), depth, scope)
        )
        return f"has({target}.{self.pick(['a', 'b', 'c'])})"

    def has_value(self, t: CelType, depth: int, scope: Scope) -> str:
        return f"{self.expr(optional_of(self.any_type(depth)), depth, scope)}.hasValue()"

    def quantifier(self, t: CelType, depth: int, scope: Scope) -> str:
        macro = self.pick(["all", "exists", "exists_one"])
        name = self.fresh()
        if self.chance(0.7):  # over a list: (index, element); over a map: (key, value)
            element = first = self.any_type(depth)
            source, second = self.expr(list_of(element), depth, scope), INT
        else:
            element, value = self.pick([STRING, INT]), self.any_type(depth)
            source, first, second = self.expr(map_of(element, value), depth, scope), value, element
        if self.chance(0.2):  # the two-variable forms (cel-go ext.TwoVarComprehensions)
            self.features.add("two_var")
            index = self.fresh()
            macro = self.pick(["all", "exists", "existsOne", "exists_one"])
            pair = (second, first) if second == INT and first == element else (element, first)
            body = self.expr(BOOL, depth, (*scope, (index, pair[0]), (name, pair[1])))
            return f"{source}.{macro}({index}, {name}, {body})"
        return f"{source}.{macro}({name}, {self.expr(BOOL, depth, (*scope, (name, element)))})"

    # lists and maps
    def list_literal(self, t: CelType, depth: int, scope: Scope) -> str:
        element = t[1] if isinstance(t, tuple) else DYN
        items = []
        for _ in range(self.draw(st.integers(0, 3))):
            if self.chance(0.1):
                items.append("?" + self.expr(optional_of(element), depth, scope))
            else:
                items.append(self.expr(element, depth, scope))
        if not items:
            self.features.add("free_type")  # `[]` is a list of a type parameter until something binds it
        return "[" + ", ".join(items) + "]"

    def map_literal(self, t: CelType, depth: int, scope: Scope) -> str:
        assert isinstance(t, tuple)
        entries = []
        for _ in range(self.draw(st.integers(0, 3))):
            key = self.expr(t[1], depth, scope)
            if self.chance(0.1):
                entries.append(f"?{key}: {self.expr(optional_of(t[2]), depth, scope)}")
            else:
                entries.append(f"{key}: {self.expr(t[2], depth, scope)}")
        if len(entries) > 1:
            self.features.add("map_literal")
        if not entries:
            self.features.add("free_type")
        return "{" + ", ".join(entries) + "}"

    def map_macro(self, t: CelType, depth: int, scope: Scope) -> str:
        assert isinstance(t, tuple)
        element, name = self.any_type(depth), self.fresh()
        inner = (*scope, (name, element))
        source = self.expr(list_of(element), depth, scope)
        if self.chance(0.3):
            return f"{source}.map({name}, {self.expr(BOOL, depth, inner)}, {self.expr(t[1], depth, inner)})"
        return f"{source}.map({name}, {self.expr(t[1], depth, inner)})"

    def filter_macro(self, t: CelType, depth: int, scope: Scope) -> str:
        assert isinstance(t, tuple)
        name = self.fresh()
        return f"{self.expr(t, depth, scope)}.filter({name}, {self.expr(BOOL, depth, (*scope, (name, t[1])))})"

    def transform_list(self, t: CelType, depth: int, scope: Scope) -> str:
        assert isinstance(t, tuple)
        self.features.add("two_var")
        element, index, name = self.any_type(depth), self.fresh(), self.fresh()
        inner = (*scope, (index, INT), (name, element))
        source = self.expr(list_of(element), depth, scope)
        if self.chance(0.3):
            condition = self.expr(BOOL, depth, inner)
            return f"{source}.transformList({index}, {name}, {condition}, {self.expr(t[1], depth, inner)})"
        return f"{source}.transformList({index}, {name}, {self.expr(t[1], depth, inner)})"

    def transform_map(self, t: CelType, depth: int, scope: Scope) -> str:
        assert isinstance(t, tuple)
        self.features.add("two_var")
        key, name = self.fresh(), self.fresh()
        source_value = self.any_type(depth)
        inner = (*scope, (key, t[1]), (name, source_value))
        source = self.expr(map_of(t[1], source_value), depth, scope)
        if self.chance(0.2):
            entry = f"{{{self.expr(t[1], depth, inner)}: {self.expr(t[2], depth, inner)}}}"
            return f"{source}.transformMapEntry({key}, {name}, {entry})"
        if self.chance(0.3):
            condition = self.expr(BOOL, depth, inner)
            return f"{source}.transformMap({key}, {name}, {condition}, {self.expr(t[2], depth, inner)})"
        return f"{source}.transformMap({key}, {name}, {self.expr(t[2], depth, inner)})"

    def lists_extension(self, t: CelType, depth: int, scope: Scope) -> str:
        """cel-go's lists extension (kcel only: cel-expr-python does not ship it)."""
        assert isinstance(t, tuple)
        self.features.add("lists_ext")
        if t == list_of(INT) and self.chance(0.3):
            return f"lists.range({self.draw(st.integers(-1, 4))})"
        source = self.expr(t, depth, scope)
        choice = self.pick(["distinct", "reverse", "slice", "flatten", "sort", "sortBy"])
        if choice == "sortBy":
            name, key = self.fresh(), self.pick([INT, STRING, DOUBLE])
            return f"{source}.sortBy({name}, {self.expr(key, depth, (*scope, (name, t[1])))})"
        if choice == "slice":
            return f"{source}.slice({self.small_int(depth, scope)}, {self.small_int(depth, scope)})"
        if choice == "flatten":
            return f"[{source}, {self.expr(t, depth, scope)}].flatten()"
        return f"{source}.{choice}()"

    # optionals
    def optional_of(self, t: CelType, depth: int, scope: Scope) -> str:
        assert isinstance(t, tuple)
        if self.chance(0.3):
            return f"optional.ofNonZeroValue({self.expr(t[1], depth, scope)})"
        return self.pick(["optional.none()", f"optional.of({self.expr(t[1], depth, scope)})"])

    def optional_select(self, t: CelType, depth: int, scope: Scope) -> str:
        assert isinstance(t, tuple)
        return f"{self.expr(map_of(STRING, t[1]), depth, scope)}.?{self.pick(['a', 'b', 'c'])}"

    def optional_index(self, t: CelType, depth: int, scope: Scope) -> str:
        assert isinstance(t, tuple)
        if self.chance(0.5):
            return f"{self.expr(list_of(t[1]), depth, scope)}[?{self.small_int(depth, scope)}]"
        key = self.pick([STRING, INT])
        return f"{self.expr(map_of(key, t[1]), depth, scope)}[?{self.expr(key, depth, scope)}]"

    def optional_or(self, t: CelType, depth: int, scope: Scope) -> str:
        return f"{self.expr(t, depth, scope)}.or({self.expr(t, depth, scope)})"

    def optional_map(self, t: CelType, depth: int, scope: Scope) -> str:
        assert isinstance(t, tuple)
        source, name = self.any_type(depth), self.fresh()
        inner = (*scope, (name, source))
        if self.chance(0.5):
            return f"{self.expr(optional_of(source), depth, scope)}.optMap({name}, {self.expr(t[1], depth, inner)})"
        return f"{self.expr(optional_of(source), depth, scope)}.optFlatMap({name}, {self.expr(t, depth, inner)})"

    # time
    def time_arithmetic(self, t: CelType, depth: int, scope: Scope) -> str:
        if t == DURATION:
            if self.chance(0.3):
                return f"({self.expr(TIMESTAMP, depth, scope)} - {self.expr(TIMESTAMP, depth, scope)})"
            return f"({self.expr(DURATION, depth, scope)} {self.pick(['+', '-'])} {self.expr(DURATION, depth, scope)})"
        if self.chance(0.2):
            return f"({self.expr(DURATION, depth, scope)} + {self.expr(TIMESTAMP, depth, scope)})"
        return f"({self.expr(TIMESTAMP, depth, scope)} {self.pick(['+', '-'])} {self.expr(DURATION, depth, scope)})"

    def to_duration(self, t: CelType, depth: int, scope: Scope) -> str:
        self.features.add("duration_parse")
        return f"duration({self.expr(STRING, depth, scope)})"

    def to_timestamp(self, t: CelType, depth: int, scope: Scope) -> str:
        if self.chance(0.5):
            return f"timestamp({self.expr(INT, depth, scope)})"
        self.features.add("timestamp_parse")
        return f"timestamp({self.expr(STRING, depth, scope)})"


MAX_DEPTH = 5
MAX_NODES = 40


@st.composite
def cases(draw: Callable[[st.SearchStrategy[Any]], Any], types: tuple[CelType, ...] = RESULT_TYPES) -> Case:
    """A well-typed expression (by construction) of one of `types`, with the features it used."""
    builder = _Builder(draw)
    t = draw(st.sampled_from(types))
    depth = draw(st.integers(1, MAX_DEPTH))
    text = builder.expr(t, depth)
    return Case(text, t, builder.features)
