"""Helpers that generated code calls: CEL operators with cel-go's exact semantics on plain values.

Everything here is bound once into each program's namespace (see `EXPORTED`). Operators
dispatch on the Python type of their operands, which is what `dyn` needs; when the checker
knows the types, the planner calls the specialised functions directly instead.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from kcel.errors import EvalError, EvaluationStopped, RecoveredPanic  # noqa: F401 (EvaluationStopped: EXPORTED)
from kcel.eval import overload_errors
from kcel.eval.arithmetic import (  # noqa: F401 (EXPORTED)
    add_int64,
    add_uint64,
    check_int,
    check_uint,
    divide_double,
    divide_int64,
    divide_uint64,
    modulo_int64,
    modulo_uint64,
    multiply_uint64,
    subtract_int64,
    subtract_uint64,
)
from kcel.eval.equality import cel_equals, has_exact_key, map_lookup
from kcel.eval.gotext import go_text
from kcel.eval.inputs import (  # noqa: F401 (EXPORTED, and what callers import from here)
    INPUT_CONVERSIONS,
    SPECIAL_INPUT,
    UNBOUND,
    Unbound,
    UnboundVariable,
    bound,
    convert_input,
    declared_input,
    declared_input_strict,
    register_input,
    special_input,
)
from kcel.temporal import Duration, Timestamp  # noqa: F401 (EXPORTED: the classes of declared variables)
from kcel.values import (
    INT64_MAX,
    LIST_VIEWS,
    NONE,
    OBJECTS,
    CelMap,
    ListView,
    Optional,
    TypedList,
    TypeValue,
    Uint,
    is_mapping,
)

# Exceptions that stand for a CEL error value inside generated code: EvalError from helpers, the KeyError/TypeError
# that an inlined `obj["field"]` raises, and the AttributeError of a library function given a value of another type
# than its declared one (a variable declared `string` bound to an int: cel-go finds no such overload at run time).
CEL_ERRORS = (EvalError, KeyError, TypeError, AttributeError)


class OperandTypeError(EvalError):
    """A Python TypeError met in generated code: an operand of a type the code did not expect, most often an
    inlined `x["f"]` on something that is not a map. Its message, `no such overload`, may not be cel-go's (that
    depends on what `x` was), so a program that ends with one evaluates again without inlining
    (`kcel.eval.program`) to raise cel-go's error."""


def as_eval_error(err: BaseException) -> EvalError:
    """The CEL error an exception caught in generated code stands for."""
    if isinstance(err, EvalError):
        return err
    if isinstance(err, KeyError):
        return EvalError(f"no such key: {err.args[0] if err.args else ''}")
    return OperandTypeError("no such overload")


def unwrap(value: Any) -> Any:
    """Raise a stored error value (an accumulator may hold one); otherwise return the value."""
    if isinstance(value, BaseException):
        raise as_eval_error(value)
    if type(value) is Unbound:
        raise value.error()
    return value


# -- logic -------------------------------------------------------------------------------------


def logic_error(left: Any, right: Any) -> Any:
    """The result of `&&`/`||` when neither side decided it: the first operand that is not a bool, in order
    (cel-go evalAnd/evalOr keep the first), as its error or, for a value of another type, `no such overload`.
    Returned as a value, not raised."""
    for operand in (left, right):
        if isinstance(operand, BaseException):
            return as_eval_error(operand)
        if operand is not True and operand is not False:
            return EvalError("no such overload")
    return EvalError("no such overload")


def logical_not(value: Any) -> bool:
    if value is True:
        return False
    if value is False:
        return True
    raise EvalError("no such overload")


def not_strictly_false(value: Any) -> bool:
    return value is not False


def conditional_test(value: Any) -> bool:
    if value is True or value is False:
        return value
    raise EvalError("no such overload")


# -- arithmetic --------------------------------------------------------------------------------


def _is_list(v: Any) -> bool:
    return type(v) is list or type(v) is tuple or isinstance(v, TypedList) or type(v) in LIST_VIEWS


def add(a: Any, b: Any) -> Any:
    ta, tb = type(a), type(b)
    if ta is tb:
        if ta is int:
            return check_int(a + b)
        if ta is float or ta is str or ta is bytes:
            return a + b
        if ta is Uint:
            return check_uint(a + b)
        if ta is list:
            return a + b
    if _is_list(a) and _is_list(b):
        return a.cel_add(b) if isinstance(a, TypedList) else [*a, *b]
    return _temporal("add", a, b)


def subtract(a: Any, b: Any) -> Any:
    ta, tb = type(a), type(b)
    if ta is tb:
        if ta is int:
            return check_int(a - b)
        if ta is float:
            return a - b
        if ta is Uint:
            return check_uint(a - b)
    return _temporal("subtract", a, b)


def multiply(a: Any, b: Any) -> Any:
    ta, tb = type(a), type(b)
    if ta is tb:
        if ta is int:
            return check_int(a * b)
        if ta is float:
            return a * b
        if ta is Uint:
            return check_uint(a * b)
    raise no_such_overload("_*_", (a, b))


def divide(a: Any, b: Any) -> Any:
    ta, tb = type(a), type(b)
    if ta is tb:
        if ta is int:
            return divide_int64(a, b)
        if ta is float:
            return divide_double(a, b)
        if ta is Uint:
            return divide_uint64(a, b)
    raise no_such_overload("_/_", (a, b))


def modulo(a: Any, b: Any) -> Any:
    ta, tb = type(a), type(b)
    if ta is tb:
        if ta is int:
            return modulo_int64(a, b)
        if ta is Uint:
            return modulo_uint64(a, b)
    raise no_such_overload("_%_", (a, b))


def negate(a: Any) -> Any:
    ta = type(a)
    if ta is int:
        return check_int(-a)
    if ta is float:
        return -a
    return _temporal("negate", a)


_TEMPORAL_OPS: dict[tuple[str, type, type], Any] = {}


def register_temporal(op: str, left: type, right: type, impl: Any) -> None:
    """Let the timestamps library plug its arithmetic into the dynamic operators."""
    _TEMPORAL_OPS[(op, left, right)] = impl


_OPERATOR_OF = {"add": "_+_", "subtract": "_-_", "negate": "-_"}


def _temporal(op: str, a: Any, b: Any = None) -> Any:
    impl = _TEMPORAL_OPS.get((op, type(a), type(b)))
    if impl is None:
        raise no_such_overload(_OPERATOR_OF[op], (a,) if op == "negate" else (a, b))
    return impl(a) if b is None else impl(a, b)


# -- comparison --------------------------------------------------------------------------------

_ORDERED_SAME = (str, bytes)


def _comparable(a: Any, b: Any) -> bool:
    ta, tb = type(a), type(b)
    if ta is bool or tb is bool:
        return ta is tb
    if (ta is int or ta is float or ta is Uint) and (tb is int or tb is float or tb is Uint):
        return True
    if ta is tb and (ta in _ORDERED_SAME or hasattr(a, "__lt__") and ta.__module__ == "kcel.temporal"):
        return True
    return False


_SIMPLE_ORDER = frozenset({str, int, bytes, Uint})  # doubles are not: NaN cannot be ordered


def _operands(a: Any, b: Any, function: str) -> tuple[Any, Any]:
    """Comparable operands; an int or uint meets a double as a double, as in cel-go. A NaN on the left fails
    whatever the right is (cel-go's Double.Compare tests it first), on the right once the types compare."""
    if type(a) is float and a != a:
        raise EvalError(_NAN_ORDER)
    if not _comparable(a, b):
        raise no_such_overload(function, (a, b))
    if type(b) is float:
        if b != b:
            raise EvalError(_NAN_ORDER)
        if type(a) is not float:
            return float(a), b
    elif type(a) is float:
        return a, float(b)
    return a, b


_NAN_ORDER = "NaN values cannot be ordered"


def less(a: Any, b: Any) -> bool:
    ta = type(a)
    if ta is not type(b) or ta not in _SIMPLE_ORDER:
        a, b = _operands(a, b, "_<_")
    return bool(a < b)


def less_equals(a: Any, b: Any) -> bool:
    ta = type(a)
    if ta is not type(b) or ta not in _SIMPLE_ORDER:
        a, b = _operands(a, b, "_<=_")
    return bool(a <= b)


def greater(a: Any, b: Any) -> bool:
    ta = type(a)
    if ta is not type(b) or ta not in _SIMPLE_ORDER:
        a, b = _operands(a, b, "_>_")
    return bool(a > b)


def greater_equals(a: Any, b: Any) -> bool:
    ta = type(a)
    if ta is not type(b) or ta not in _SIMPLE_ORDER:
        a, b = _operands(a, b, "_>=_")
    return bool(a >= b)


_SIMPLE_EQUALITY = frozenset({str, int, float, bytes, Uint})


def equals(a: Any, b: Any) -> bool:
    ta = type(a)
    if ta is type(b) and ta in _SIMPLE_EQUALITY:
        return bool(a == b)
    return cel_equals(a, b)


def not_equals(a: Any, b: Any) -> bool:
    return not equals(a, b)


# -- containers --------------------------------------------------------------------------------


def index(container: Any, key: Any, strict: bool = False) -> Any:
    """`container[key]` for lists (int, uint or integral double index) and maps, as cel-go's qualifiers do it.

    `strict`: cel-go's EnableErrorOnBadPresenceTest, for an optional container holding neither."""
    if container.__class__ is dict and key.__class__ is str:  # a str finds only a str key: no conversions
        try:
            return container[key]
        except KeyError:
            pass
    if key.__class__ not in QUALIFIER_KEYS:
        raise EvalError(f"invalid qualifier type: {go_type(key)}")
    if _is_list(container):
        position = _list_position(key)
        if 0 <= position < len(container):
            return container[position]
        raise EvalError(f"index out of bounds: {go_text(key)}")
    if is_mapping(container):
        found, value = map_lookup(container, key)
        if found:
            return value
        raise EvalError(f"no such key: {go_text(key)}")
    if type(container) is Optional:
        return optional_index(container, key, strict)
    raise EvalError(f"no such key: {go_text(key)}")  # what cel-go says of indexing an int, a string, null...


_MIN_INT64_DOUBLE, _TWO_63_DOUBLE = -(2.0**63), 2.0**63
# What cel-go can index with (interpreter newQualifier): any other key (null, a list...) fails to make a qualifier.
QUALIFIER_KEYS = frozenset({str, int, Uint, bool, float})


def _list_position(key: Any) -> int:
    """A list index: an int, a uint, or a double with no fraction, each within int64 (cel-go IndexOrError)."""
    tk = type(key)
    if tk is int:
        return key  # type: ignore[no-any-return]
    if (tk is Uint and key <= INT64_MAX) or (
        tk is float and key.is_integer() and _MIN_INT64_DOUBLE < key < _TWO_63_DOUBLE
    ):
        return int(key)
    if tk is Uint or tk is float:
        raise EvalError(f"unsupported index value {go_text(key)} in list")
    raise EvalError(f"unsupported index type '{type_name(key)}' in list")


def select(obj: Any, field: str, strict: bool = False) -> Any:
    """`obj.field`: a map's entry, a message's field, or an optional's (which stays optional); cel-go's string
    qualifier."""
    if is_mapping(obj):
        try:
            return obj[field]
        except KeyError:
            raise EvalError(f"no such key: {field}") from None
    if type(obj) is Optional:
        return optional_select(obj, field, strict)
    if isinstance(obj, OBJECTS.classes):
        return OBJECTS.read(obj, field)
    return _not_a_map(obj, field, True)


def _not_a_map(obj: Any, field: str, strict: bool) -> Any:
    """cel-go qualifying something that is neither map nor optional by a string: a list wants a number, and
    anything else has no such key, unless this is a presence test, which then finds nothing (`strict`:
    EnableErrorOnBadPresenceTest, which cel-spec's conformance environment turns on and Kubernetes does not)."""
    if _is_list(obj):
        raise EvalError("unsupported index type 'string' in list")
    if strict:
        raise EvalError(f"no such key: {field}")
    return NONE


_FOUND_OPTIONAL = object()  # what cel-go's plain qualifiers see in an optional one of them found: no map


def opaque_optional(value: Any) -> Any:
    """An optional value a plain qualifier found (`{'a': optional.of(m)}.a`): cel-go unwraps optionals only at the
    start of an attribute or after `.?`, so the next plain qualifier finds no such key (a presence test: false)."""
    return _FOUND_OPTIONAL if type(value) is Optional else value


def has_field(obj: Any, field: str, strict: bool = False) -> bool:
    """`has(obj.field)`; a presence test on an int or a string is false in Kubernetes (an error if `strict`)."""
    if is_mapping(obj):
        return field in obj
    if type(obj) is Optional:
        return obj.has_value() and has_field(obj.value, field, strict)
    if isinstance(obj, OBJECTS.classes):
        return OBJECTS.test(obj, field)
    if obj is not _FOUND_OPTIONAL:  # an optional holds no field, not even for a strict presence test
        _not_a_map(obj, field, strict)
    return False


def in_container(item: Any, container: Any) -> bool:
    if item.__class__ is str and container.__class__ is list:
        try:  # only a str equals a str, in Python as in CEL; other values answer False (or raise: the slow path)
            return item in container
        except EvalError:
            pass
    if _is_list(container):
        return any(cel_equals(item, element) for element in container)
    if is_mapping(container):
        if item.__class__ is bytes and container:  # a Go map hashes the key: a panic (an empty map is not asked)
            raise RecoveredPanic(UNHASHABLE_BYTES)
        return map_lookup(container, item)[0]
    raise EvalError("no such overload")


class MemberIndex:
    """`x in list` in a loop, over a list read from the evaluation's input (the same object at every step): the
    list's strings go into a set on first use, so each further string test is a hash lookup, not a scan. Only a
    string equals a string in CEL, so the set answers for string items; any other item takes `in_container`."""

    __slots__ = ("container", "strings")

    def __init__(self) -> None:
        self.container: Any = None
        self.strings: frozenset[str] = frozenset()

    def contains(self, item: Any, container: Any) -> bool:
        if item.__class__ is str and container.__class__ is list:
            if container is not self.container:  # holding it keeps its id from being reused
                self.strings = string_set(container)
                self.container = container
            return item in self.strings
        return in_container(item, container)


def string_set(container: Any) -> frozenset[str]:
    """The strings of a list, for `x in list` tests with string items (see `MemberIndex`)."""
    if container.__class__ is not list and not isinstance(container, TypedList):
        raise EvalError("not a list")  # the fast variant's only: the exact variant answers
    return frozenset([element for element in container if element.__class__ is str])


def size(value: Any) -> int:
    tv = type(value)
    if (
        tv is str
        or tv is list
        or tv is dict
        or tv is bytes
        or tv is tuple
        or isinstance(value, (Mapping, TypedList, ListView))
    ):
        return len(value)
    raise no_such_overload("size", (value,))


def iterate(value: Any) -> Any:
    """What a one-variable comprehension ranges over: list elements or map keys."""
    if type(value) is dict or _is_list(value) or isinstance(value, Mapping):
        return value
    raise EvalError(f"got '{go_type(value)}', expected iterable type")  # cel-go evalFold


def iterate_pairs(value: Any) -> Any:
    """(index, element) for lists, (key, value) for maps: two-variable comprehensions."""
    if _is_list(value):
        return enumerate(value)
    if isinstance(value, Mapping):
        return value.items()
    raise EvalError(f"unsupported comprehension range type: {go_type(value)}")


_GO_TYPES = {
    "bool": "types.Bool", "int": "types.Int", "uint": "types.Uint", "double": "types.Double",
    "string": "types.String", "bytes": "types.Bytes", "null_type": "types.Null", "type": "*types.Type",
    "list": "*types.baseList", "map": "*types.baseMap",
    "optional_type": "*types.Optional", "google.protobuf.Timestamp": "types.Timestamp",
    "google.protobuf.Duration": "types.Duration",
}  # fmt: skip


def go_type(value: Any) -> str:
    """Go's `%T` of the cel-go value (`types.Int`); Kubernetes' library values live in its package `cel`."""
    name = type_name(value)
    return _GO_TYPES.get(name) or "cel." + name.rpartition(".")[2]


def map_insert(accumulator: Mapping[Any, Any], key: Any, value: Any) -> Mapping[Any, Any]:
    """Add a new key to a map the comprehension owns (`cel.@mapInsert(m, k, v)`), in place if it can.

    cel-go's InsertMapKeyValue: a key the map already finds (`1` finds `1u`) is an error; the map returned may
    be a new one (a `CelMap` once keys Python would merge meet)."""
    if map_lookup(accumulator, key)[0]:
        raise EvalError(f"insert failed: key {go_text(key)} already exists")
    return store_key(accumulator, key, value)


def map_insert_entry(accumulator: Mapping[Any, Any], entry: Any) -> Mapping[Any, Any]:
    """`cel.@mapInsert(m, {k: v, ...})`: transformMapEntry's step."""
    if not isinstance(entry, Mapping):
        raise EvalError("no such overload")
    for key, value in entry.items():
        accumulator = map_insert(accumulator, key, value)
    return accumulator


def store_key(result: Any, key: Any, value: Any) -> Mapping[Any, Any]:
    """`result[key] = value` with CEL's typed keys, replacing the entry of exactly this key (`1` and `1u` are
    two keys); returns the map. A dict stays a dict while its keys are strings, ints, uints or null and no
    two of them are equal in Python; a bool or double key, or a second key a dict would merge with an
    earlier one, makes it a `CelMap` (so a plain dict never holds a key that an int lookup could confuse)."""
    cls = key.__class__
    if result.__class__ is dict:
        if cls is str:
            result[key] = value
            return result
        if cls is not bool and cls is not float:
            if cls is not int and cls is not Uint and cls is not _NONE_TYPE:
                _check_key(key)
            if key not in result or has_exact_key(result, key):
                result[key] = value
                return result
        result = CelMap(result.items())
    elif cls not in _PLAIN_KEYS:
        _check_key(key)
    result.store(key, value)
    return result  # type: ignore[no-any-return]


_NONE_TYPE = type(None)
UNHASHABLE_BYTES = "internal error: runtime error: hash of unhashable type types.Bytes"  # Go's panic, recovered
_PLAIN_KEYS = frozenset({str, int, bool, Uint, float, _NONE_TYPE})


def _check_key(key: Any) -> None:
    """Keys kcel cannot keep as cel-go does: it keys lists and maps by identity, and panics on bytes (a Go slice),
    which the API server reports as an internal error (cel-go Program.Eval recovers it)."""
    if isinstance(key, bytes):
        raise RecoveredPanic(UNHASHABLE_BYTES)
    if isinstance(key, (list, tuple, Mapping)):
        raise EvalError(f"unsupported key type: {type_name(key)}")
    try:
        hash(key)
    except TypeError:
        raise EvalError(f"unsupported key type: {type_name(key)}") from None


# -- optionals ---------------------------------------------------------------------------------


def optional_select(obj: Any, field: str, strict: bool = False) -> Optional:
    """`obj.?field`: an optional of the field if present; an optional target stays optional."""
    if type(obj) is Optional:
        if not obj.has_value():
            return obj
        obj = obj.value
    if is_mapping(obj):
        return Optional(obj[field]) if field in obj else NONE
    if isinstance(obj, OBJECTS.classes):
        return Optional(OBJECTS.read(obj, field)) if OBJECTS.test(obj, field) else NONE
    return _not_a_map(obj, field, strict)  # type: ignore[no-any-return]


def optional_index(container: Any, key: Any, strict: bool = False) -> Optional:
    """`container[?key]`: an optional element; an optional container stays optional."""
    if key.__class__ not in QUALIFIER_KEYS:
        raise EvalError(f"invalid qualifier type: {go_type(key)}")
    if type(container) is Optional:
        if not container.has_value():
            return container
        container = container.value
    if _is_list(container):
        position = _list_position(key)
        return Optional(container[position]) if 0 <= position < len(container) else NONE
    if is_mapping(container):
        found, value = map_lookup(container, key)
        return Optional(value) if found else NONE
    if strict:
        raise EvalError(f"no such key: {go_text(key)}")
    return NONE


def list_with_optionals(items: list[tuple[Any, bool]]) -> list[Any]:
    """`[a, ?b]`: optional elements are included only when they hold a value."""
    out = []
    for value, optional in items:
        if not optional:
            out.append(value)
        elif type(value) is not Optional:
            raise EvalError(f"cannot initialize optional list element from non-optional value {go_text(value)}")
        elif value.has_value():
            out.append(value.value)
    return out


def make_map_optional(entries: list[tuple[Any, Any, bool]]) -> Mapping[Any, Any]:
    """A map literal (cel-go evalMap): a later entry replaces an earlier one of the same key, and `?k: v` sets
    `k` only when `v` holds a value (and removes an earlier `k` when it does not)."""
    result: Any = {}
    for key, value, optional in entries:
        if optional:
            if type(value) is not Optional:
                message = f"cannot initialize optional entry '{go_text(key)}' from non-optional value {go_text(value)}"
                raise EvalError(message)
            if not value.has_value():
                if isinstance(key, bytes):  # Go's delete hashes the key: a panic, worded differently on an empty map
                    raise RecoveredPanic(
                        UNHASHABLE_BYTES if result else "internal error: hash of unhashable type: types.Bytes"
                    )
                try:
                    if has_exact_key(result, key):
                        del_key(result, key)
                except TypeError:  # an unhashable key was never added
                    pass
                continue
            value = value.value
        result = store_key(result, key, value)
    return result  # type: ignore[no-any-return]


def make_struct(construct: Callable[[dict[str, Any]], Any], entries: list[tuple[str, Any, bool]]) -> Any:
    """A message literal (cel-go evalObj): `?f: v` sets `f` only when `v` holds a value."""
    fields: dict[str, Any] = {}
    for name, value, optional in entries:
        if optional:
            if type(value) is not Optional:
                raise EvalError(f"cannot initialize optional entry '{name}' from non-optional value {go_text(value)}")
            if not value.has_value():
                fields.pop(name, None)
                continue
            value = value.value
        fields[name] = value
    return construct(fields)


def del_key(result: Any, key: Any) -> None:
    if result.__class__ is CelMap:
        result.delete(key)
    else:
        del result[key]


def optional_missing(value: Any, lenient: bool = False) -> bool:
    """For `a.or(b)` / `a.orValue(b)`: whether `a` is empty. A non-optional `a` is an error since cel-go v0.28;
    before (`lenient`, Kubernetes up to 1.36) it was the answer, unchanged."""
    if type(value) is not Optional:
        if lenient:
            return False
        raise EvalError("no such overload")
    return not value.has_value()


def optional_value(value: Any) -> Any:
    """`a.orValue(b)` with `a` not empty: its value, or `a` itself when it is not an optional (`lenient`)."""
    return value.value if type(value) is Optional else value


def through_go(value: Any) -> Any:
    """A conditional's optional result as cel-go before v0.29 resolves it (applyQualifiers takes the value's Go
    `Value()` and `OptionalOf(NativeToValue(...))` wraps it again): nested optionals collapse into one, an empty one
    inside becomes null, a type its name (Kubernetes 1.30-1.36)."""
    if type(value) is not Optional or not value.has_value():
        return value
    inner = value.value
    while type(inner) is Optional:
        inner = inner.value if inner.has_value() else None
    return Optional(inner.name if type(inner) is TypeValue else inner)


def raise_error(error: EvalError, *evaluated: Any) -> Any:
    """Fail with `error`, once the arguments (`evaluated`, for their own errors first) have been evaluated."""
    raise error


def unbound_call(function: str, *args: Any) -> Any:
    """An unchecked call no overload of a declared function takes: cel-go's dispatch over its overloads."""
    raise no_such_overload(function, args)


class Lazy:
    """A variable whose initialiser runs on first use (`cel.bind`, `cel.block` slots), once: its value or its error
    is kept for every later use, as cel-go keeps the slot's value."""

    __slots__ = ("init", "value", "done", "error")

    def __init__(self, init: Any) -> None:
        self.init = init
        self.done = False
        self.value: Any = None
        self.error: BaseException | None = None


def force(cell: Lazy) -> Any:
    if not cell.done:
        if cell.error is not None:
            raise cell.error
        try:
            cell.value = cell.init()
        except EvaluationStopped:
            raise
        except CEL_ERRORS as err:
            cell.error = err
            raise
        cell.done = True
    return cell.value


# -- types -------------------------------------------------------------------------------------

_TYPE_NAMES: dict[type, str] = {
    bool: "bool", int: "int", Uint: "uint", float: "double", str: "string", bytes: "bytes",
    type(None): "null_type", list: "list", tuple: "list", dict: "map", TypeValue: "type",
    Optional: "optional_type", CelMap: "map",
}  # fmt: skip


def register_type_name(cls: type, name: str) -> None:
    _TYPE_NAMES[cls] = name


def type_name(value: Any) -> str:
    """The CEL type name of a runtime value, as cel-go prints it (`type()`, error messages)."""
    name = _TYPE_NAMES.get(type(value))
    if name is not None:
        return name
    for cls in type(value).__mro__[1:]:  # subclasses of the plain classes (TypedList is a list)
        if cls in _TYPE_NAMES:
            return _TYPE_NAMES[cls]
    if isinstance(value, Mapping):
        return "map"
    if isinstance(value, Sequence):
        return "list"
    if isinstance(value, OBJECTS.classes):
        return OBJECTS.type_name(value)
    return str(getattr(value, "cel_type_name", type(value).__name__))


def no_such_overload(function: str, args: Sequence[Any]) -> EvalError:
    """cel-go's error for a call no overload of `function` takes at run time (kcel.eval.overload_errors)."""
    return EvalError(overload_errors.no_such_overload(function, [type_name(a) for a in args]))


def charge(meter: Any, cost: Any, impl: Any, args: tuple[Any, ...]) -> Any:
    """Metered code: call a statically chosen overload and add its cost (which depends on its arguments and
    result); a call that fails is charged too, with the error as its result, as cel-go's tracker does, unless the
    failure ends the evaluation (a panic, the cost limit), after which nothing is charged."""
    try:
        result = impl(*args)
    except EvaluationStopped:
        raise
    except CEL_ERRORS as err:
        meter.add(cost(args, err))
        raise
    meter.add(cost(args, result))
    return result


def operand_failed(meter: Any, cost: Any, args: tuple[Any, ...]) -> None:
    """Metered code: an operand of a unary or binary call failed. cel-go evaluated every operand and still
    charges the call (an error's size is 1); then the first error is the result."""
    error = next(a for a in args if isinstance(a, BaseException))
    meter.add(1 if cost is None else cost(args, error))
    raise error


def type_of(value: Any) -> TypeValue:
    return TypeValue(type_name(value))


EXPORTED = {"raise": raise_error} | {
    name: globals()[name]
    for name in (
        "CEL_ERRORS", "EvaluationStopped", "EvalError", "operand_failed", "Optional", "NONE", "Uint", "TypeValue",
        "unwrap", "as_eval_error", "make_struct", "unbound_call", "opaque_optional",
        "logic_error", "logical_not", "not_strictly_false", "conditional_test", "check_int", "check_uint",
        "add", "subtract", "multiply", "divide", "modulo", "negate", "add_int64", "subtract_int64",
        "divide_int64", "modulo_int64", "divide_double", "less", "less_equals",
        "greater", "greater_equals", "equals", "not_equals", "index", "select", "has_field", "in_container",
        "MemberIndex", "string_set", "size", "iterate", "iterate_pairs", "map_insert", "map_insert_entry",
        "optional_select", "optional_index",
        "type_of", "cel_equals", "list_with_optionals", "make_map_optional", "optional_missing",
        "optional_value", "through_go",
        "Lazy", "force", "UNBOUND", "INPUT_CONVERSIONS", "convert_input", "SPECIAL_INPUT", "special_input", "bound",
        "declared_input", "declared_input_strict", "Timestamp", "Duration",
        "charge",
    )
}  # fmt: skip
